/* Collector thread only.  See levtab.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "levtab.h"

_Static_assert(sizeof(struct levtab_page) == 64,
	       "a page's level mix is one cache line");

#define LEVTAB_MIN_SLOTS 1024u

struct levtab *
levtab_new(size_t max_pages)
{
	struct levtab *t = calloc(1, sizeof(*t));

	if (t)
		t->max_pages = max_pages;
	return t;
}

void
levtab_free(struct levtab *t)
{
	if (!t)
		return;
	free(t->mem);
	free(t);
}

/* calloc, aligned to a cache line by hand: a large calloc maps zero
 * pages lazily, where aligned_alloc + memset would write them all. */
static struct levtab_page *
levtab_alloc(size_t n, void **mem)
{
	unsigned char *p = calloc(n * sizeof(struct levtab_page) + 64, 1);

	*mem = p;
	if (!p)
		return NULL;
	return (struct levtab_page *)(p + ((64 - ((uintptr_t)p & 63)) & 63));
}

static struct levtab_page *
levtab_probe(struct levtab_page *slots, size_t mask, uint64_t key)
{
	size_t i = levtab_home(key, mask);

	while (slots[i].n[DATASRC_LVL_NA] && slots[i].key != key)
		i = (i + 1) & mask;
	return &slots[i];
}

static int
levtab_grow(struct levtab *t)
{
	size_t n = t->slots ? (t->mask + 1) * 2 : LEVTAB_MIN_SLOTS;
	void *mem;
	struct levtab_page *slots = levtab_alloc(n, &mem);

	if (!slots)
		return -1;
	if (t->slots)
		for (size_t i = 0; i <= t->mask; i++)
			if (t->slots[i].n[DATASRC_LVL_NA])
				*levtab_probe(slots, n - 1, t->slots[i].key) =
					t->slots[i];
	free(t->mem);
	t->mem = mem;
	t->slots = slots;
	t->mask = n - 1;
	return 0;
}

static enum datasrc_level
levtab_level(struct levtab *t, uint64_t data_src)
{
	size_t i = levtab_memo_slot(data_src);

	if (t->memo_src[i] != data_src) {
		t->memo_src[i] = data_src;
		t->memo_lvl[i] = (uint8_t)datasrc_level(data_src);
	}
	return (enum datasrc_level)t->memo_lvl[i];
}

/* The page of key, inserted when new; NULL when it cannot be (the
 * caller counts it untracked). */
static struct levtab_page *
levtab_get(struct levtab *t, uint64_t key)
{
	struct levtab_page *p;

	if (!t->slots && levtab_grow(t) < 0)
		return NULL;
	p = levtab_probe(t->slots, t->mask, key);
	if (!p->n[DATASRC_LVL_NA]) {
		if (t->max_pages && t->count >= t->max_pages)
			return NULL;
		if ((t->count + 1) * 4 > (t->mask + 1) * 3) {
			if (levtab_grow(t) < 0)
				return NULL;
			p = levtab_probe(t->slots, t->mask, key);
		}
		p->key = key;
		p->n[DATASRC_LVL_NA] = 1;
		t->count++;
	}
	return p;
}

void
levtab_add_slow(struct levtab *t, int32_t pid, uint64_t page,
		uint64_t data_src)
{
	enum datasrc_level lvl;
	struct levtab_page *p;

	lvl = levtab_level(t, data_src);
	if (lvl == DATASRC_LVL_NA) {
		t->no_level_src = data_src;
		return;
	}
	t->interval[lvl]++;
	p = levtab_get(t, levtab_key(pid, page));
	if (!p)
		t->untracked++;
	else if (p->n[lvl] != UINT32_MAX)
		p->n[lvl]++;
}

void
levtab_merge(struct levtab *dst, const struct levtab *src)
{
	if (!dst || !src)
		return;
	for (int i = 0; i < DATASRC_LVL__COUNT; i++)
		dst->interval[i] += src->interval[i];
	dst->untracked += src->untracked;
	for (size_t i = 0; src->slots && i <= src->mask; i++) {
		const struct levtab_page *s = &src->slots[i];
		struct levtab_page *p;

		if (!s->n[DATASRC_LVL_NA])
			continue;
		p = levtab_get(dst, s->key);
		for (int l = DATASRC_LVL_NA + 1; l < DATASRC_LVL__COUNT; l++) {
			if (!p)
				dst->untracked += s->n[l];
			else
				p->n[l] = p->n[l] + s->n[l] < p->n[l] ?
					  UINT32_MAX : p->n[l] + s->n[l];
		}
	}
}

bool
levtab_page(const struct levtab *t, int32_t pid, uint64_t page,
	    uint64_t *out)
{
	const struct levtab_page *p;

	if (!t || !t->slots)
		return false;
	p = levtab_probe(t->slots, t->mask, levtab_key(pid, page));
	if (!p->n[DATASRC_LVL_NA])
		return false;
	out[DATASRC_LVL_NA] = 0;
	for (int i = DATASRC_LVL_NA + 1; i < DATASRC_LVL__COUNT; i++)
		out[i] = p->n[i];
	return true;
}

void
levtab_interval(const struct levtab *t, uint64_t *out)
{
	if (t)
		memcpy(out, t->interval, sizeof(t->interval));
	else
		memset(out, 0, DATASRC_LVL__COUNT * sizeof(*out));
}

uint64_t
levtab_untracked(const struct levtab *t)
{
	return t ? t->untracked : 0;
}

size_t
levtab_count(const struct levtab *t)
{
	return t ? t->count : 0;
}

size_t
levtab_bytes(const struct levtab *t)
{
	if (!t)
		return 0;
	return sizeof(*t) + (t->slots ? (t->mask + 1) * sizeof(*t->slots) : 0);
}

void
levtab_next_interval(struct levtab *t)
{
	if (t)
		memset(t->interval, 0, sizeof(t->interval));
}

void
levtab_clear(struct levtab *t)
{
	if (!t)
		return;
	if (t->slots)
		memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
	t->count = 0;
	memset(t->interval, 0, sizeof(t->interval));
	t->untracked = 0;
}

void
levtab_reset(struct levtab *t)
{
	if (!t)
		return;
	/* Back to nothing, as before the first level: a table grown for a
	 * large run does not stay resident after it. */
	free(t->mem);
	t->mem = NULL;
	t->slots = NULL;
	t->mask = 0;
	t->count = 0;
	memset(t->interval, 0, sizeof(t->interval));
	t->untracked = 0;
}
