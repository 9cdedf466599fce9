/*
 * Page table: samples folded per (pid, page).  Collector thread only; the
 * UI never reads it, it gets frames.
 *
 * An entry is 24 bytes whatever the node count: the key, the interval's
 * loads/stores/other as u16, the total since insert or reset as u16, the
 * page's memory node, a word for the caller, and one u32 holding the
 * interval (epoch) the interval counts belong to and the interval's
 * local/remote split as 12 bits each.  Counts that outgrow their field
 * continue exactly in a side map (see pagetab_read); read them through
 * pagetab_read() or the sort keys, never from the fields.  The weight sum
 * (sources with latency) sits in an extension behind each entry, present
 * only when asked for (pagetab_set_ext); the local/remote split is counted
 * only with PAGETAB_EXT_LOCALITY (more than one node), which costs no
 * space.
 *
 * Interval counters are reset lazily: an entry's counts belong to the
 * interval in the low 8 bits of `ivl`; pagetab_next_interval() advances
 * the table's epoch, and an entry whose epoch is older reads as zero.
 *
 * Keys: pid 0 .. PAGETAB_MAX_PID and pages below 2^PAGETAB_PAGE_BITS
 * (2^53 bytes of address space at 4 KiB pages).  Anything else cannot be
 * tracked: pagetab_get returns NULL, as for a full table, and the caller
 * counts it `untracked`.
 */
#ifndef MEMTOP_PAGETAB_H
#define MEMTOP_PAGETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sample.h"
#include "sortkey.h"

#define PAGE_NODE_UNKNOWN	(-1)	/* asked, kernel had no answer */
#define PAGE_NODE_UNQUERIED	(-2)	/* never asked */

#define PAGETAB_PAGE_BITS	41
#define PAGETAB_PAGE_MASK	((UINT64_C(1) << PAGETAB_PAGE_BITS) - 1)
#define PAGETAB_MAX_PID		((INT32_C(1) << (64 - PAGETAB_PAGE_BITS)) - 2)

/*
 * The weight extension saturates: a field at its maximum means the real
 * value is in the side map.  kinds[], total, local and remote carry: a
 * field below half its range is the count; from half on, the side map
 * may hold a base and the count is base + field - half.  A saturated
 * field sends every further count to the side map, a carried one only
 * one in (max - half), which suits the counts that grow past their field
 * on every hot page (total over a long run, kinds and local/remote per
 * interval).
 */
#define PAGETAB_KIND_MAX	UINT16_MAX
#define PAGETAB_KIND_HALF	0x8000u
#define PAGETAB_WEIGHT_SAT	UINT32_MAX
#define PAGETAB_TOTAL_MAX	UINT16_MAX
#define PAGETAB_TOTAL_HALF	0x8000u
#define PAGETAB_LOC_MAX		0xfffu
#define PAGETAB_LOC_HALF	0x800u

/* The key of (pid, page) in this table's format (struct page_entry),
 * for a pid and page the table can hold (pagetab_get checks; the side
 * tables kept by page take their keys from its entries). */
static inline uint64_t
pagetab_key_of(int32_t pid, uint64_t page)
{
	return ((uint64_t)(uint32_t)pid + 1) << PAGETAB_PAGE_BITS | page;
}

/*
 * A key of this table's format, mixed for a hash table: the pid folded
 * onto the page bits, then an odd multiplier.  The product's top bits
 * depend on every key bit; its bits 32 up alone follow the multiplier's
 * low bits and spread consecutive pages badly.  The page table (whose
 * hash folds the high half down), the code-site and the level tables
 * take their home slots from it.
 */
static inline uint64_t
pagetab_key_mix(uint64_t key)
{
	return (key ^ key >> PAGETAB_PAGE_BITS) * 0x9e3779b97f4a7c15ull;
}

/* Ways a set of the side tables kept by page (sitetab.h, levtab.h). */
#define PAGETAB_SIDE_WAYS	4
_Static_assert(PAGETAB_SIDE_WAYS == 4,
	       "pagetab_side_home picks a way from 2 bits");

/*
 * Index of key's home way in a side table of n_sets sets (a power of two
 * up to 2^32) of PAGETAB_SIDE_WAYS records side by side: its set,
 * pagetab_key_mix's top bits (the multiply takes log2(n_sets) of them,
 * so a set splits into sets 2s and 2s + 1 when n_sets doubles), plus the
 * way bits 30-31 prefer.  Not the product's bits 32 up, masked: those
 * follow the multiplier's low bits, so a heap's consecutive pages and
 * the same pages of many pids crowded a few sets
 * (tests/unit/tables/test-sitetab.c stest_sites_spread,
 * tests/unit/tables/test-sidetabs.c stest_levels_spread).
 */
static inline size_t
pagetab_side_home_mixed(uint64_t h, size_t n_sets)
{
	return (size_t)(((h >> 32) * n_sets) >> 32) * PAGETAB_SIDE_WAYS +
	       (size_t)((h >> 30) & (PAGETAB_SIDE_WAYS - 1));
}

/* The same from the key (h: pagetab_key_mix(key), which the aggregation
 * computes once a sample for every side table kept by page). */
static inline size_t
pagetab_side_home(uint64_t key, size_t n_sets)
{
	return pagetab_side_home_mixed(pagetab_key_mix(key), n_sets);
}

/* Sets a side table kept by page may grow to for room of about `pages`
 * pages: the power of two of sets whose ways fit in it, at least first
 * and at most max_sets (first <= max_sets; sitetab_set_room,
 * levtab_set_room). */
static inline size_t
pagetab_side_room_sets(size_t first, size_t max_sets, size_t pages)
{
	size_t sets = first;

	while (sets < max_sets && sets * 2 * PAGETAB_SIDE_WAYS <= pages)
		sets <<= 1;
	return sets;
}

/* Extensions (pagetab_set_ext). */
#define PAGETAB_EXT_LOCALITY	1u	/* count local/remote this interval */
#define PAGETAB_EXT_WEIGHT	2u	/* weight sum and count since reset */

struct page_entry {
	uint64_t key;		/* (pid + 1) << PAGETAB_PAGE_BITS | page; 0 = empty */
	uint16_t kinds[3];	/* this interval, by enum sample_kind */
	uint16_t total;		/* samples since insert or reset (carried) */
	int16_t node;		/* memory node or PAGE_NODE_* */
	uint16_t flags;		/* free for the caller (node query stamp) */
	uint32_t ivl;		/* epoch | local | remote, see below */
};

/*
 * ivl, the interval word: bits 0-7 the interval (its low bits) that
 * kinds[], local and remote belong to; bits 8-19 local, this interval's
 * samples from a CPU of the page's node; bits 20-31 remote, from another
 * node (both carried, PAGETAB_EXT_LOCALITY only).  One word, so that a
 * new interval resets all three with one store.
 */
#define PAGETAB_IVL_EPOCH	0xffu
#define PAGETAB_LOCAL_SHIFT	8
#define PAGETAB_REMOTE_SHIFT	20

/* Arithmetic, not a choice: the per-sample increment stays free of
 * branches and of the registers two constants would take. */
static inline unsigned
pagetab_loc_shift(bool local)
{
	return PAGETAB_REMOTE_SHIFT -
	       (unsigned)local * (PAGETAB_REMOTE_SHIFT - PAGETAB_LOCAL_SHIFT);
}

/* The local (or remote) field of e. */
static inline uint32_t
pagetab_entry_loc(const struct page_entry *e, bool local)
{
	return e->ivl >> pagetab_loc_shift(local) & PAGETAB_LOC_MAX;
}

/* An entry's counts at full width, as of now. */
struct page_counts {
	uint64_t loads;		/* this interval */
	uint64_t stores;	/* this interval */
	uint64_t other;		/* this interval */
	uint64_t total;		/* since insert or reset */
	uint64_t local;		/* this interval: CPU node == page node */
	uint64_t remote;	/* this interval: CPU node != page node */
	uint64_t weight_sum;	/* since reset; latency = weight_sum/weight_n */
	uint64_t weight_n;	/* (0 without PAGETAB_EXT_WEIGHT) */
};

/* What pagetab_topk hands out: a copy, valid after the table changes. */
struct page_info {
	int32_t pid;
	int16_t node;
	uint64_t page;
	struct page_counts c;
};

struct pagetab;

static inline int32_t
pagetab_entry_pid(const struct page_entry *e)
{
	return (int32_t)(e->key >> PAGETAB_PAGE_BITS) - 1;
}

static inline uint64_t
pagetab_entry_page(const struct page_entry *e)
{
	return e->key & PAGETAB_PAGE_MASK;
}

/* max_pages 0 = unlimited.  NULL on ENOMEM (EINVAL for a bad shift). */
struct pagetab *pagetab_new(unsigned page_shift, size_t max_pages);
void pagetab_free(struct pagetab *t);	/* NULL-safe */

unsigned pagetab_page_shift(const struct pagetab *t);

/*
 * Adds extensions (PAGETAB_EXT_*; never removes one).  Entries already in
 * the table get them zeroed.  O(n): meant for an empty or young table.
 * 0 or -ENOMEM (the table is then unchanged).
 */
int pagetab_set_ext(struct pagetab *t, unsigned ext);
unsigned pagetab_ext(const struct pagetab *t);

/*
 * Returns the entry for (pid, addr >> page_shift), inserting a zeroed one
 * (node = PAGE_NODE_UNQUERIED, epoch = current) when absent; *inserted
 * says which.  If the entry's epoch is older than the table's, its
 * interval counters are zeroed and its epoch set to current.  NULL when
 * the table is at max_pages, the key cannot be tracked (see above) or on
 * ENOMEM.  The pointer is valid until the next insert or reset.
 */
struct page_entry *pagetab_get(struct pagetab *t, int32_t pid, uint64_t addr,
			       bool *inserted);
/*
 * pagetab_get for n keys at once (n <= PAGETAB_MANY), with the slot of
 * key i + PAGETAB_PREFETCH fetched from memory while key i is served.
 * Every out[] pointer is valid when it returns, until the next insert.
 * inserted may be NULL.
 */
#define PAGETAB_MANY		256
#define PAGETAB_PREFETCH	8
void pagetab_get_many(struct pagetab *t, const int32_t *pid,
		      const uint64_t *addr, size_t n, struct page_entry **out,
		      bool *inserted);
/* The same for the (pid, addr) of n <= PAGETAB_MANY samples, read in
 * place. */
void pagetab_get_samples(struct pagetab *t, const struct sample *s, size_t n,
			 struct page_entry **out, bool *inserted);
/* Lookup without insert; NULL when absent.  Does not touch the epoch. */
struct page_entry *pagetab_find(struct pagetab *t, int32_t pid,
				uint64_t page);
/* What the side tables' admission (admit.h) asks of the page of this
 * key (pagetab_key_of), in one look-up: whether it has samples in the
 * current interval (the 8-bit epoch wraps: a page quiet for a multiple of
 * 256 intervals passes for sampled until the next one), and in *total
 * its total field, a floor of its samples since insert or reset (at
 * least min(samples, PAGETAB_TOTAL_HALF)).  false and 0 when not
 * tracked. */
bool pagetab_key_peek(const struct pagetab *t, uint64_t key, uint32_t *total);

/* Counting into an entry of the current interval (from pagetab_get). */
void pagetab_count_slow(struct pagetab *t, struct page_entry *e,
			unsigned kind, uint64_t n);

/* One sample of kind (enum sample_kind) on e. */
static inline void
pagetab_count1(struct pagetab *t, struct page_entry *e, unsigned kind)
{
	if (__builtin_expect(e->kinds[kind] < PAGETAB_KIND_MAX - 1 &&
			     e->total < PAGETAB_TOTAL_MAX - 1, 1)) {
		e->kinds[kind]++;
		e->total++;
	} else {
		pagetab_count_slow(t, e, kind, 1);
	}
}

/* One sample from a CPU of the page's node (local) or another; no-op
 * without PAGETAB_EXT_LOCALITY. */
void pagetab_add_locality(struct pagetab *t, struct page_entry *e,
			  bool local);
/* One sample's weight; no-op without PAGETAB_EXT_WEIGHT. */
void pagetab_add_weight(struct pagetab *t, struct page_entry *e,
			uint64_t weight);

/* pagetab_add_locality(t, e, local) for a table that counts locality
 * (pagetab_ext has PAGETAB_EXT_LOCALITY; a caller counting sample by
 * sample asks once):
 * inline below the carry, out of line at it.  No branch on local, a coin
 * flip on pages that both nodes touch. */
static inline void
pagetab_locality_inc(struct pagetab *t, struct page_entry *e, bool local)
{
	unsigned shift = pagetab_loc_shift(local);

	if (__builtin_expect((e->ivl >> shift & PAGETAB_LOC_MAX) <
			     PAGETAB_LOC_MAX - 1, 1))
		e->ivl += UINT32_C(1) << shift;
	else
		pagetab_add_locality(t, e, local);
}

/* Byte offset of the weight extension in an entry (0 without it), for
 * pagetab_weight_add; valid until pagetab_set_ext. */
unsigned pagetab_weight_off(const struct pagetab *t);

/*
 * pagetab_add_weight(t, e, weight) when weight_off = pagetab_weight_off(t)
 * is not 0: inline while u32 sum and n stay below their maximum, which is
 * where pagetab_add_weight would put them too; the rest (the side map)
 * out of line.
 */
static inline void
pagetab_weight_add(struct pagetab *t, struct page_entry *e,
		   unsigned weight_off, uint64_t weight)
{
	unsigned char *p = (unsigned char *)e + weight_off;
	uint32_t w[2];

	memcpy(w, p, sizeof(w));
	if (__builtin_expect((uint64_t)w[0] + weight < PAGETAB_WEIGHT_SAT &&
			     w[1] < PAGETAB_WEIGHT_SAT - 1, 1)) {
		w[0] += (uint32_t)weight;
		w[1]++;
		memcpy(p, w, sizeof(w));
	} else {
		pagetab_add_weight(t, e, weight);
	}
}

/* Adds every count of c (folding tables); the extension parts only when
 * the table has them. */
void pagetab_add_counts(struct pagetab *t, struct page_entry *e,
			const struct page_counts *c);

/* e's counts as of now (interval ones 0 when its epoch is old). */
void pagetab_read(const struct pagetab *t, const struct page_entry *e,
		  struct page_counts *out);
/* loads + stores + other of e this interval. */
uint64_t pagetab_interval_samples(const struct pagetab *t,
				  const struct page_entry *e);

void pagetab_next_interval(struct pagetab *t);
uint32_t pagetab_epoch(const struct pagetab *t);
/* Forget every page (keeps the extensions). */
void pagetab_reset(struct pagetab *t);
size_t pagetab_count(const struct pagetab *t);
size_t pagetab_capacity(const struct pagetab *t);
/* The max_pages pagetab_new was given (0: unlimited). */
size_t pagetab_max_pages(const struct pagetab *t);
/* Memory the table holds: slot arrays, headers, side map. */
size_t pagetab_bytes(const struct pagetab *t);

/*
 * Best k entries by key, best first, copied into out[] (room for k).
 * Only entries with a non-zero key value take part (for interval keys:
 * touched this interval).  Ties break by (pid, page) ascending so the
 * order is deterministic.  O(n log k); never sorts the whole table.
 * Returns the number copied.
 */
size_t pagetab_topk(const struct pagetab *t, enum sort_key key, size_t k,
		    struct page_info *out);
/* The same among the pages of pid only (pid < 0: every page). */
size_t pagetab_topk_pid(const struct pagetab *t, enum sort_key key, size_t k,
			int32_t pid, struct page_info *out);
/* pagetab_topk_pid that also calls visit (when not NULL) for each entry
 * with samples this interval, in table order, in the same walk: a frame
 * that needs both reads the table once (out may be NULL when k is 0).
 * visit must not change t. */
size_t pagetab_topk_visit(const struct pagetab *t, enum sort_key key,
			  size_t k, int32_t pid, struct page_info *out,
			  void (*visit)(const struct page_entry *e, void *ctx),
			  void *ctx);

/* Calls fn for every entry; stops early when fn returns non-zero and
 * returns that value.  fn must not insert into t. */
int pagetab_foreach(struct pagetab *t,
		    int (*fn)(struct page_entry *e, void *ctx), void *ctx);

/* O(n) consistency check (probe chains, subtables, counts); 0 or
 * -EINVAL. */
int pagetab_check(const struct pagetab *t);

#endif
