/*
 * Where accesses were served (data_src level classes) per page and per
 * interval, for sources that give data_src (pebs, ibs).  Collector thread
 * only.  A page gets a counter block on its first sample with a level;
 * samples whose data_src says nothing (faults: all NA) are not kept.
 * Counts are exact up to UINT32_MAX a page and level, where they stay.
 *
 * The blocks are one 64-byte record each, inline in a set-associative
 * array of LEVTAB_WAYS records a set (four adjacent cache lines): no
 * allocation per page, and a sample reads its page's home record (one
 * line, prefetched) and only when another page holds it the rest of the
 * set.  The table starts at LEVTAB_FIRST_SETS sets and doubles (a set's
 * pages go to the two sets it splits into, so a doubling never overflows
 * a set) when a new page finds its set full or the table 3/4 used, up to
 * the capacity levtab_new was given, or the room levtab_set_room leaves
 * it (memtop gives the code-site table's capacity and room: sides.h).  A
 * table at its room evicts, as the code-site table does
 * (sitetab.h): a page new to a full set takes the place of the set's page
 * of least weight (the samples in its mix plus what it inherited), which
 * loses its mix (counted in levtab_evicted), and inherits that weight, so
 * a page with more than a quarter of its set's samples since the start
 * always holds a record, however heavy the pages before it (Space-Saving
 * by page).  Before the bound the level records were a random line and
 * 85 to 171 bytes a page at any working set (issue 15).
 */
#ifndef MEMTOP_LEVTAB_H
#define MEMTOP_LEVTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admit.h"
#include "datasrc.h"
#include "pagetab.h"

#define LEVTAB_WAYS		PAGETAB_SIDE_WAYS	/* pagetab_side_home's */
/* Sets of a new (or reset) table: 1024 pages, 64 KiB. */
#define LEVTAB_FIRST_SETS	256

/*
 * key is the page table's ((pid + 1) << PAGETAB_PAGE_BITS | page), 0 = a
 * free way.  n[DATASRC_LVL_NA] is never a level's count (levtab_add drops
 * NA): it holds the page's weight, the samples of its mix plus what it
 * inherited when it took another's place (saturated at UINT32_MAX), so an
 * eviction reads four words instead of summing four mixes.
 */
#define LEVTAB_WEIGHT	DATASRC_LVL_NA

struct levtab_page {
	uint64_t key;
	uint32_t n[DATASRC_LVL__COUNT];	/* [LEVTAB_WEIGHT]: weight */
} __attribute__((aligned(64)));

/* datasrc_level answers remembered: a source gives few distinct data_src
 * values, and decoding one costs more than the rest of levtab_add. */
#define LEVTAB_MEMO_BITS	4

struct levtab {
	/* n_sets * LEVTAB_WAYS records; NULL until the first level */
	struct levtab_page *slots;
	void *mem;			/* what calloc gave for slots */
	size_t n_sets;			/* power of two */
	size_t max_sets;		/* the capacity's sets */
	size_t room_sets;		/* sets it may grow to now */
	size_t count;			/* records holding a page */
	uint64_t evicted;		/* pages whose mix was forgotten */
	struct admit admit;		/* the bar once it displaces */
	bool grow_failed;		/* ENOMEM once: stay at n_sets */
	uint64_t interval[DATASRC_LVL__COUNT];
	uint64_t untracked;		/* samples without a record (ENOMEM) */
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
	return pagetab_key_of(pid, page);
}

/* Index of key's home way (pagetab_side_home, as the code-site table's). */
static inline size_t
levtab_home(uint64_t key, size_t n_sets)
{
	return pagetab_side_home(key, n_sets);
}

/* Room for about max_pages pages (rounded up to a power of two, at least
 * LEVTAB_WAYS; 0 = no bound), at first for LEVTAB_FIRST_SETS sets of
 * them (fewer when max_pages is smaller). */
struct levtab *levtab_new(size_t max_pages);
void levtab_free(struct levtab *t);	/* NULL-safe */
/* Lets the table grow to about pages pages for now, as sitetab_set_room
 * (at least LEVTAB_FIRST_SETS sets, at most the capacity; a new table may
 * grow to its capacity).  A table already larger keeps its size. */
void levtab_set_room(struct levtab *t, size_t pages);

/* levtab_add_key's way when the page is not at home or data_src not in
 * the memo. */
void levtab_add_slow(struct levtab *t, uint64_t key, uint64_t data_src,
		     uint32_t total);

/* The memo slot of data_src. */
static inline size_t
levtab_memo_slot(uint64_t data_src)
{
	return (size_t)((data_src * 0x9e3779b97f4a7c15ull) >>
			(64 - LEVTAB_MEMO_BITS));
}

/* One sample with this data_src (0 = none: ignored) of the page whose
 * key (levtab_key) mixes to h (pagetab_key_mix) and whose page-table
 * total, counting the sample, is total (ADMIT_TOTAL_ANY: unknown; a page
 * new to a full set gets a record only if admit_displace says so).
 * Inline when the page is in its home slot and data_src's level is in
 * the memo (most samples of a page seen before): no call. */
static inline void
levtab_add_key(struct levtab *t, uint64_t key, uint64_t h, uint64_t data_src,
	       uint32_t total)
{
	if (!t || data_src == 0 || data_src == t->no_level_src)
		return;
	if (t->slots) {
		struct levtab_page *p =
			&t->slots[pagetab_side_home_mixed(h, t->n_sets)];
		size_t m = levtab_memo_slot(data_src);
		unsigned lvl = t->memo_lvl[m];

		if (p->key == key && t->memo_src[m] == data_src &&
		    lvl != DATASRC_LVL_NA) {
			t->interval[lvl]++;
			if (p->n[lvl] != UINT32_MAX)
				p->n[lvl]++;
			p->n[LEVTAB_WEIGHT] +=
				p->n[LEVTAB_WEIGHT] != UINT32_MAX;
			return;
		}
	}
	levtab_add_slow(t, key, data_src, total);
}

/* One sample of (pid, page) with this data_src (0 = none: ignored). */
static inline void
levtab_add(struct levtab *t, int32_t pid, uint64_t page, uint64_t data_src)
{
	uint64_t key = levtab_key(pid, page);

	levtab_add_key(t, key, pagetab_key_mix(key), data_src,
		       ADMIT_TOTAL_ANY);
}
void levtab_interval_add_slow(struct levtab *t, uint64_t data_src);

/* levtab_add_key for the aggregation, which knows the page's page-table
 * total (counting this sample): below the table's admission bar
 * (admit.h) the sample counts in the interval's levels only, and the
 * table is not read. */
static inline void
levtab_add_total(struct levtab *t, uint64_t key, uint64_t h,
		 uint64_t data_src, uint32_t total)
{
	size_t m;

	if (!t || admit_page(&t->admit, total)) {
		levtab_add_key(t, key, h, data_src, total);
		return;
	}
	if (data_src == 0 || data_src == t->no_level_src)
		return;
	m = levtab_memo_slot(data_src);
	if (t->memo_src[m] != data_src)
		levtab_interval_add_slow(t, data_src);
	else if (t->memo_lvl[m] != DATASRC_LVL_NA)
		t->interval[t->memo_lvl[m]]++;
}
/* Fetches the record of the page whose key mixes to h into the cache
 * ahead of levtab_add_key; nothing while no sample had a level (faults
 * never have one). */
static inline __attribute__((always_inline)) void
levtab_prefetch_mixed(const struct levtab *t, uint64_t h)
{
	if (t && t->count)
		__builtin_prefetch(
			&t->slots[pagetab_side_home_mixed(h, t->n_sets)], 1);
}
/* Per-page counts since reset into out[DATASRC_LVL__COUNT]; false when
 * the page has none. */
bool levtab_page(const struct levtab *t, int32_t pid, uint64_t page,
		 uint64_t *out);
/* This interval's counts, all pages, into out[DATASRC_LVL__COUNT]. */
void levtab_interval(const struct levtab *t, uint64_t *out);
uint64_t levtab_untracked(const struct levtab *t);
/* Pages whose mix was forgotten to make room (since new or reset). */
uint64_t levtab_evicted(const struct levtab *t);
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
