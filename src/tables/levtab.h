/*
 * Where accesses were served (data_src level classes) per page and per
 * interval, for sources that give data_src (pebs, ibs).  Collector thread
 * only.  A page gets a counter block on its first sample with a level;
 * samples whose data_src says nothing (faults: all NA) are not kept.
 * The blocks are one 64-byte record each, inline in an open-addressing
 * array grown at 3/4 load: no allocation per page, and a sample reads its
 * page's record (one cache line) and on average 1.5 more adjacent ones
 * at the highest load; 85 to 171 bytes a page.  Counts are exact up to
 * UINT32_MAX a page and level, where they stay.
 */
#ifndef MEMTOP_LEVTAB_H
#define MEMTOP_LEVTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datasrc.h"
#include "pagetab.h"

/*
 * Open addressing with linear probing over inline records, grown (rehash)
 * at 3/4 load (a lower cap would double the memory of a page for half a
 * record read less per sample).  n[DATASRC_LVL_NA] is never counted (levtab_add drops NA),
 * so it serves as the record's "in use" mark.
 */
struct levtab_page {
	uint64_t key;
	uint32_t n[DATASRC_LVL__COUNT];	/* [DATASRC_LVL_NA]: 1 = in use */
} __attribute__((aligned(64)));

/* datasrc_level answers remembered: a source gives few distinct data_src
 * values, and decoding one costs more than the rest of levtab_add. */
#define LEVTAB_MEMO_BITS	4

struct levtab {
	struct levtab_page *slots;	/* NULL until the first level */
	void *mem;			/* what calloc gave for slots */
	size_t mask;			/* slots - 1 */
	size_t count;
	size_t max_pages;
	uint64_t interval[DATASRC_LVL__COUNT];
	uint64_t untracked;		/* samples of pages past max_pages */
	/* Direct-mapped by a hash of data_src; memo_src 0 = empty (0 is
	 * never looked up). */
	uint64_t memo_src[1u << LEVTAB_MEMO_BITS];
	uint8_t memo_lvl[1u << LEVTAB_MEMO_BITS];
	/* The last data_src seen without a level (0: none yet): a source
	 * without one writes the same "not available" value in every
	 * sample (a software event's), which levtab_add then drops inline. */
	uint64_t no_level_src;
};

/* The page table's key format: pages come from its entries, so they fit
 * (pid_max is at most 2^22). */
static inline uint64_t
levtab_key(int32_t pid, uint64_t page)
{
	return ((uint64_t)(uint32_t)pid + 1) << PAGETAB_PAGE_BITS | page;
}

/*
 * Home slot of key in a table of mask + 1 slots (a power of two up to
 * 2^32): pagetab_key_mix's top bits.  Not the product's bits 32 up,
 * masked: a heap's consecutive pages and the same pages of many pids
 * formed long runs there (2.8 and 38 slots a lookup at half load, against
 * 1.5 at random; stest_levels_spread in tests/unit/tables/test-sidetabs.c).
 */
static inline size_t
levtab_home(uint64_t key, size_t mask)
{
	uint64_t h = pagetab_key_mix(key);

	return (size_t)(((h >> 32) * ((uint64_t)mask + 1)) >> 32);
}

/* max_pages 0 = unlimited; pages past it are counted in `untracked`. */
struct levtab *levtab_new(size_t max_pages);
void levtab_free(struct levtab *t);	/* NULL-safe */

void levtab_add_slow(struct levtab *t, int32_t pid, uint64_t page,
		     uint64_t data_src);

/* The memo slot of data_src. */
static inline size_t
levtab_memo_slot(uint64_t data_src)
{
	return (size_t)((data_src * 0x9e3779b97f4a7c15ull) >>
			(64 - LEVTAB_MEMO_BITS));
}

/* One sample of (pid, page) with this data_src (0 = none: ignored).
 * Inline when the page is in its home slot and data_src's level is in
 * the memo (most samples of a page seen before): no call. */
static inline void
levtab_add(struct levtab *t, int32_t pid, uint64_t page, uint64_t data_src)
{
	if (!t || data_src == 0 || data_src == t->no_level_src)
		return;
	if (t->slots) {
		uint64_t key = levtab_key(pid, page);
		struct levtab_page *p = &t->slots[levtab_home(key, t->mask)];
		size_t m = levtab_memo_slot(data_src);
		unsigned lvl = t->memo_lvl[m];

		if (p->key == key && p->n[DATASRC_LVL_NA] &&
		    t->memo_src[m] == data_src && lvl != DATASRC_LVL_NA) {
			t->interval[lvl]++;
			if (p->n[lvl] != UINT32_MAX)
				p->n[lvl]++;
			return;
		}
	}
	levtab_add_slow(t, pid, page, data_src);
}
/* Fetches the record of (pid, page) into the cache ahead of levtab_add;
 * nothing while no sample had a level (faults never have one). */
static inline __attribute__((always_inline)) void
levtab_prefetch(const struct levtab *t, int32_t pid, uint64_t page)
{
	if (t && t->count)
		__builtin_prefetch(&t->slots[levtab_home(levtab_key(pid, page),
							 t->mask)], 1);
}
/* Per-page counts since reset into out[DATASRC_LVL__COUNT]; false when
 * the page has none. */
bool levtab_page(const struct levtab *t, int32_t pid, uint64_t page,
		 uint64_t *out);
/* This interval's counts, all pages, into out[DATASRC_LVL__COUNT]. */
void levtab_interval(const struct levtab *t, uint64_t *out);
uint64_t levtab_untracked(const struct levtab *t);
/* Pages with a level mix now. */
size_t levtab_count(const struct levtab *t);
/* Bytes the table holds (struct and slots); 0 for NULL. */
size_t levtab_bytes(const struct levtab *t);
/* Adds src's pages and counts to dst's (NULL-safe). */
void levtab_merge(struct levtab *dst, const struct levtab *src);
void levtab_next_interval(struct levtab *t);
/* Forgets pages and counts (reset, or a new page size). */
void levtab_reset(struct levtab *t);
/* The same at the size it has (sitetab_clear). */
void levtab_clear(struct levtab *t);

#endif
