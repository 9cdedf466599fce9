/* Collector thread only.  See levtab.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "levtab.h"

/* The most sets a table has (2^30 pages, 64 GiB: no bound in practice). */
#define LEVTAB_MOST_SETS	((size_t)1 << 28)

_Static_assert(sizeof(struct levtab_page) == 64,
	       "a page's level mix is one cache line");

struct levtab *
levtab_new(size_t max_pages)
{
	struct levtab *t = calloc(1, sizeof(*t));
	size_t sets = 1;

	if (!t)
		return NULL;
	/* levtab_home's multiply takes at most 32 bits of sets. */
	if (max_pages == 0 || max_pages > LEVTAB_MOST_SETS * LEVTAB_WAYS)
		max_pages = LEVTAB_MOST_SETS * LEVTAB_WAYS;
	while (sets * LEVTAB_WAYS < max_pages)
		sets *= 2;
	t->max_sets = sets;
	t->room_sets = sets;
	return t;
}

void
levtab_set_room(struct levtab *t, size_t pages)
{
	size_t sets;

	if (!t)
		return;
	sets = pagetab_side_room_sets(LEVTAB_FIRST_SETS < t->max_sets ?
				      LEVTAB_FIRST_SETS : t->max_sets,
				      t->max_sets, pages);
	/* Room to grow again: new pages take free ways, not a bar. */
	if (sets > t->room_sets && sets > t->n_sets)
		admit_clear(&t->admit);
	t->room_sets = sets;
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

/* Where key goes in slots of n_sets sets: its home way if free, else the
 * first free way after it (the set has one). */
static struct levtab_page *
levtab_place(struct levtab_page *slots, size_t n_sets, uint64_t key)
{
	size_t home = levtab_home(key, n_sets);

	for (size_t w = 0; w < LEVTAB_WAYS; w++) {
		struct levtab_page *p = &slots[home ^ w];

		if (p->key == 0)
			return p;
	}
	return NULL;
}

/* Doubles the table (or makes its first sets); false when it is at its
 * capacity or cannot allocate (levtab_claim asks only below its room).
 * A set splits into two sets of the doubled table, so every page finds
 * a free way there. */
static bool
levtab_grow(struct levtab *t)
{
	size_t n = t->slots ? t->n_sets * 2 : LEVTAB_FIRST_SETS;
	void *mem;
	struct levtab_page *slots;

	if (n > t->max_sets)
		n = t->max_sets;
	if (t->grow_failed || (t->slots && n <= t->n_sets))
		return false;
	slots = levtab_alloc(n * LEVTAB_WAYS, &mem);
	if (!slots) {
		t->grow_failed = true;
		return false;
	}
	for (size_t i = 0; t->slots && i < t->n_sets * LEVTAB_WAYS; i++)
		if (t->slots[i].key)
			*levtab_place(slots, n, t->slots[i].key) = t->slots[i];
	free(t->mem);
	t->mem = mem;
	t->slots = slots;
	t->n_sets = n;
	return true;
}

/*
 * The record of key, whose home way holds another page (or none): a way
 * of the set that has it (swapped home when it outweighs the page there,
 * so the pages with most samples are found where levtab_add looks
 * first), else a free way, else a larger table, else the place of the
 * set's lightest page, whose weight it inherits, if admit_displace lets
 * the newcomer of this page-table total in.  NULL when it does not, or
 * when the first sets cannot be allocated.
 */
static struct levtab_page *
levtab_claim(struct levtab *t, uint64_t key, uint32_t total)
{
	size_t home, victim, free_way = SIZE_MAX;
	struct levtab_page *h, tmp;
	uint32_t vw = UINT32_MAX;

	if (!t->slots && !levtab_grow(t))
		return NULL;
	home = levtab_home(key, t->n_sets);
	h = &t->slots[home];
	if (h->key == key)
		return h;
	/* One pass over the set: the page, else its first free way in
	 * order from home, and the lightest page. */
	victim = home;
	for (size_t w = 0; w < LEVTAB_WAYS; w++) {
		struct levtab_page *p = &t->slots[home ^ w];

		if (p->key == key) {
			if (p->n[LEVTAB_WEIGHT] <= h->n[LEVTAB_WEIGHT])
				return p;
			tmp = *h;
			*h = *p;
			*p = tmp;
			return h;
		}
		if (p->key == 0 && free_way == SIZE_MAX)
			free_way = home ^ w;
		if (p->n[LEVTAB_WEIGHT] < vw) {
			vw = p->n[LEVTAB_WEIGHT];
			victim = home ^ w;
		}
	}
	if ((free_way == SIZE_MAX ||
	     (t->count + 1) * 4 > t->n_sets * LEVTAB_WAYS * 3) &&
	    t->n_sets < t->room_sets && !t->grow_failed && levtab_grow(t))
		return levtab_claim(t, key, total);
	if (free_way != SIZE_MAX) {
		t->slots[free_way].key = key;
		t->count++;
		return &t->slots[free_way];
	}
	/* At full size: the set's lightest page makes room, if the
	 * newcomer may take it (admit.h). */
	if (!admit_displace(&t->admit, total, vw, t->slots[victim].key,
			    t->count * 2 >= t->n_sets * LEVTAB_WAYS))
		return NULL;
	t->evicted++;
	t->slots[victim] = (struct levtab_page){ .key = key };
	t->slots[victim].n[LEVTAB_WEIGHT] = vw;
	return &t->slots[victim];
}

static void
levtab_sat_add(uint32_t *c, uint32_t n)
{
	*c = *c + n < *c ? UINT32_MAX : *c + n;
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

void
levtab_add_slow(struct levtab *t, uint64_t key, uint64_t data_src,
		uint32_t total)
{
	enum datasrc_level lvl;
	struct levtab_page *p;

	lvl = levtab_level(t, data_src);
	if (lvl == DATASRC_LVL_NA) {
		t->no_level_src = data_src;
		return;
	}
	t->interval[lvl]++;
	p = levtab_claim(t, key, total);
	if (!p) {
		/* Not let in (its level counts in the interval's), or no
		 * sets could be allocated. */
		if (!t->slots)
			t->untracked++;
		return;
	}
	levtab_sat_add(&p->n[lvl], 1);
	levtab_sat_add(&p->n[LEVTAB_WEIGHT], 1);
}

void
levtab_interval_add_slow(struct levtab *t, uint64_t data_src)
{
	enum datasrc_level lvl = levtab_level(t, data_src);

	if (lvl == DATASRC_LVL_NA)
		t->no_level_src = data_src;
	else
		t->interval[lvl]++;
}

void
levtab_merge(struct levtab *dst, const struct levtab *src)
{
	if (!dst || !src)
		return;
	for (int i = 0; i < DATASRC_LVL__COUNT; i++)
		dst->interval[i] += src->interval[i];
	dst->untracked += src->untracked;
	/* A shard's displaced mixes are lost for good: the frame counts
	 * them (the shard's own count goes at its clear). */
	dst->evicted += src->evicted;
	/* The mixes only, and their weight: what a shard's page inherited
	 * there is not a level's count, nor a weight in dst. */
	for (size_t i = 0; src->slots && i < src->n_sets * LEVTAB_WAYS; i++) {
		const struct levtab_page *s = &src->slots[i];
		struct levtab_page *p;

		if (!s->key)
			continue;
		p = levtab_claim(dst, s->key, ADMIT_TOTAL_ANY);
		for (int l = DATASRC_LVL_NA + 1; l < DATASRC_LVL__COUNT; l++) {
			if (!p) {
				dst->untracked += s->n[l];
				continue;
			}
			levtab_sat_add(&p->n[l], s->n[l]);
			levtab_sat_add(&p->n[LEVTAB_WEIGHT], s->n[l]);
		}
	}
}

bool
levtab_page(const struct levtab *t, int32_t pid, uint64_t page,
	    uint64_t *out)
{
	uint64_t key = levtab_key(pid, page);
	const struct levtab_page *p = NULL;
	size_t home;

	if (!t || !t->slots)
		return false;
	home = levtab_home(key, t->n_sets);
	for (size_t w = 0; w < LEVTAB_WAYS && !p; w++)
		if (t->slots[home ^ w].key == key)
			p = &t->slots[home ^ w];
	if (!p)
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

uint64_t
levtab_evicted(const struct levtab *t)
{
	return t ? t->evicted : 0;
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
	return sizeof(*t) +
	       (t->slots ? t->n_sets * LEVTAB_WAYS * sizeof(*t->slots) : 0);
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
		memset(t->slots, 0,
		       t->n_sets * LEVTAB_WAYS * sizeof(*t->slots));
	t->count = 0;
	t->evicted = 0;
	admit_clear(&t->admit);
	t->grow_failed = false;		/* a later doubling may succeed */
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
	t->n_sets = 0;
	t->count = 0;
	t->evicted = 0;
	admit_clear(&t->admit);
	t->grow_failed = false;
	memset(t->interval, 0, sizeof(t->interval));
	t->untracked = 0;
}
