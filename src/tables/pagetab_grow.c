/*
 * Page table: growth and re-layout of the slot arrays (see "Growth" in
 * pagetab.c).  A subtable that passes its load limit is copied into a
 * larger array; pagetab_set_ext copies every subtable into the layout
 * with the new extensions.  Arrays of PAGETAB_MMAP_BYTES and more come
 * from mmap.  Collector thread only.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pagetab_int.h"

/* Local and remote live in the entry: counting them costs no space, so
 * only the weight extension changes the layout. */
void
pagetab_layout(unsigned ext, unsigned *stride, unsigned *weight_off)
{
	*stride = PAGETAB_BASE;
	*weight_off = 0;
	if (ext & PAGETAB_EXT_WEIGHT) {
		*weight_off = *stride;
		*stride += PAGETAB_WEIGHT_BYTES;
	}
}

/* A zeroed array of at least want slots; *cap, *mapped describe it. */
static unsigned char *
pagetab_array_new(size_t want, unsigned stride, uint32_t *cap,
		  uint32_t *mapped)
{
	size_t bytes = want * stride, page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	if (want > UINT32_MAX / 2 || bytes / stride != want)
		return NULL;
	if (bytes < PAGETAB_MMAP_BYTES) {
		p = calloc(want, stride);
		*cap = (uint32_t)want;
		*mapped = 0;
		return p;
	}
	bytes = (bytes + page - 1) / page * page;
	if (bytes > UINT32_MAX)
		return NULL;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	*cap = (uint32_t)(bytes / stride);
	*mapped = (uint32_t)bytes;
	return p;
}

void
pagetab_array_free(unsigned char *slots, uint32_t mapped)
{
	if (mapped)
		munmap(slots, mapped);
	else
		free(slots);
}

/*
 * Copies every entry of s into a new array of want slots laid out by
 * (stride, weight_off) for the extensions ext: the extensions that both
 * layouts have move along, new ones start zeroed.  The new array is
 * returned in *out; s is not changed.
 */
static int
pagetab_sub_copy(const struct pagetab *t, const struct pagetab_sub *s,
		 size_t want, unsigned ext, unsigned stride,
		 unsigned weight_off, struct pagetab_sub *out)
{
	memset(out, 0, sizeof(*out));
	out->slots = pagetab_array_new(want, stride, &out->cap, &out->mapped);
	if (!out->slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->cap; i++) {
		struct page_entry *e = pagetab_at(s->slots, t->stride, i), *d;

		if (e->key == 0)
			continue;
		d = pagetab_probe(out->slots, out->cap, stride,
				  pagetab_hash(e->key), e->key);
		memcpy(d, e, PAGETAB_BASE);
		if ((ext & ~t->ext) & PAGETAB_EXT_LOCALITY)
			d->ivl &= PAGETAB_IVL_EPOCH;
		if (weight_off && t->weight_off)
			memcpy((unsigned char *)d + weight_off,
			       (unsigned char *)e + t->weight_off,
			       PAGETAB_WEIGHT_BYTES);
	}
	out->count = s->count;
	out->grow_at = (uint32_t)((uint64_t)out->cap * PAGETAB_LOAD_NUM /
				  PAGETAB_LOAD_DEN);
	return 0;
}

/* 0 or -ENOMEM (s unchanged). */
int
pagetab_sub_grow(struct pagetab *t, struct pagetab_sub *s)
{
	size_t want = s->cap ? (size_t)s->cap * PAGETAB_GROW_NUM /
			       PAGETAB_GROW_DEN + 1 : PAGETAB_SUB_MIN;
	struct pagetab_sub n;

	if (pagetab_sub_copy(t, s, want, t->ext, t->stride, t->weight_off,
			     &n) < 0)
		return -ENOMEM;
	if (s->slots)
		pagetab_array_free(s->slots, s->mapped);
	*s = n;
	t->gen++;
	return 0;
}

int
pagetab_set_ext(struct pagetab *t, unsigned ext)
{
	unsigned want = t->ext | (ext & (PAGETAB_EXT_LOCALITY |
					 PAGETAB_EXT_WEIGHT));
	unsigned stride, weight_off;
	struct pagetab_sub *n;

	if (want == t->ext)
		return 0;
	pagetab_layout(want, &stride, &weight_off);
	/* All or nothing: every new array first, then the switch. */
	n = calloc(PAGETAB_SUBS, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (unsigned i = 0; i < PAGETAB_SUBS; i++) {
		const struct pagetab_sub *s = &t->subs[i];

		if (s->cap && pagetab_sub_copy(t, s, s->cap, want, stride,
					       weight_off, &n[i]) < 0) {
			while (i-- > 0)
				if (n[i].slots)
					pagetab_array_free(n[i].slots,
							   n[i].mapped);
			free(n);
			return -ENOMEM;
		}
	}
	for (unsigned i = 0; i < PAGETAB_SUBS; i++) {
		struct pagetab_sub *s = &t->subs[i];

		if (s->slots)
			pagetab_array_free(s->slots, s->mapped);
		*s = n[i];
	}
	free(n);
	t->ext = want;
	t->stride = stride;
	t->weight_off = weight_off;
	t->gen++;
	return 0;
}
