/*
 * The page table's insides, shared by pagetab.c (lookups, counts,
 * intervals), pagetab_grow.c (growth and re-layout of the slot arrays)
 * and pagetab_topk.c (top-K selection): the structs, and the slot helpers
 * the hot paths inline, so they stay static inline here.  Not for other
 * modules: see pagetab.h.  Collector thread only, like the table.
 */
#ifndef MEMTOP_PAGETAB_INT_H
#define MEMTOP_PAGETAB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pagetab.h"

#define PAGETAB_SUB_BITS	10
#define PAGETAB_SUBS		(1u << PAGETAB_SUB_BITS)
#define PAGETAB_SUB_MIN		16	/* slots of a subtable's first array */
/* Load limit count <= cap * 7 / 8; growth to cap * 7 / 6 (6/5 averaged
 * 30.2 bytes a page, 7/6 29.8; 9/8 29.2, but its subtables, which fill
 * alike, grew in bursts: 256 inserts took up to 8.7 ms at 10 Mi pages,
 * bench-ingest). */
#define PAGETAB_LOAD_NUM	7
#define PAGETAB_LOAD_DEN	8
#define PAGETAB_GROW_NUM	7
#define PAGETAB_GROW_DEN	6
#define PAGETAB_MMAP_BYTES	(64u << 10)
#define PAGETAB_BASE		((unsigned)sizeof(struct page_entry))
#define PAGETAB_WEIGHT_BYTES	8	/* u32 sum, u32 n */

/* Memory per page rests on it: 24 bytes a slot whatever the node count. */
_Static_assert(sizeof(struct page_entry) == 24,
	       "struct page_entry outgrew 24 bytes");

struct pagetab_sub {
	unsigned char *slots;	/* cap * stride bytes; NULL when cap 0 */
	uint32_t cap;
	uint32_t count;
	uint32_t grow_at;	/* count that makes the next insert grow */
	uint32_t mapped;	/* bytes when from mmap, 0 from calloc */
};

/* Counts past their field, for the entry with this key. */
struct pagetab_ovf {
	uint64_t key;		/* 0 = free */
	uint64_t weight_sum;	/* valid where the weight extension's */
	uint64_t weight_n;	/* field is SAT */
	/* Bases of the carried counts (see pagetab.h); 0 = none.  The
	 * interval counts' (kinds, local, remote) only count in the interval
	 * ivl_epoch. */
	uint64_t kinds[3];
	uint64_t total;
	uint64_t local;
	uint64_t remote;
	uint32_t ivl_epoch;
};

/* The member of struct pagetab_ovf holding kind k's base. */
#define PAGETAB_OVF_KIND(k)						\
	(offsetof(struct pagetab_ovf, kinds) + (size_t)(k) * sizeof(uint64_t))

struct pagetab {
	struct pagetab_sub subs[PAGETAB_SUBS];
	size_t count;
	size_t max_pages;	/* 0 = unlimited */
	unsigned page_shift;
	unsigned ext;		/* PAGETAB_EXT_* */
	unsigned stride;	/* bytes a slot */
	unsigned weight_off;	/* byte offset in a slot; 0 = absent */
	uint32_t epoch;
	uint64_t gen;		/* bumped whenever entries move */
	struct pagetab_ovf *ovf;	/* power-of-two array, load <= 1/2 */
	size_t ovf_cap;
	size_t ovf_count;
};

/* The weight extension; both saturate into the side map. */
struct pagetab_weight {
	uint32_t sum;
	uint32_t n;
};

/*
 * Fibonacci hashing with the high half folded down: a bijection (the
 * pid folded onto the page bits, an odd multiplier, then a xor-shift)
 * whose top bits, the subtable, depend on every key bit.  The home slot
 * is the low 32 bits' top bits: the product's low half, which depends
 * only on the key's low 32 bits (hence the pid folded in first, or every
 * process's copy of a page would start at one slot), xor its high half,
 * whose top bits are the subtable's (constant within it).  Folding at 29
 * bits instead put product bits 49-60 on the home slot, mostly the
 * subtable's own bits: the same pages of many pids (forked workers, a
 * system-wide run, 1 GiB pages) then fell into a few runs of hundreds of
 * slots in each subtable (tests/unit/tables/test-pagetab.c, probe lengths).  Five
 * instructions: it runs for every sample (splitmix64's finaliser took
 * eight).
 */
static inline uint64_t
pagetab_hash(uint64_t key)
{
	uint64_t h = pagetab_key_mix(key);

	return h ^ (h >> 32);
}

/*
 * e's interval counts belong to the table's interval `epoch`.  Eight bits
 * suffice: pagetab_next_interval zeroes every entry's interval counts
 * at least once in 256 intervals.
 */
static inline bool
pagetab_current(const struct page_entry *e, uint32_t epoch)
{
	return (uint8_t)e->ivl == (uint8_t)epoch;
}

/* 0 when (pid, page) cannot be tracked. */
static inline uint64_t
pagetab_key(int32_t pid, uint64_t page)
{
	if (pid < 0 || pid > PAGETAB_MAX_PID || page > PAGETAB_PAGE_MASK)
		return 0;
	return pagetab_key_of(pid, page);
}

static inline struct pagetab_sub *
pagetab_sub_of(const struct pagetab *t, uint64_t hash)
{
	return (struct pagetab_sub *)&t->subs[hash >> (64 - PAGETAB_SUB_BITS)];
}

static inline size_t
pagetab_home(uint32_t cap, uint64_t hash)
{
	return (size_t)(((uint64_t)(uint32_t)hash * cap) >> 32);
}

static inline struct page_entry *
pagetab_at(unsigned char *slots, unsigned stride, size_t i)
{
	return (struct page_entry *)(slots + i * stride);
}

/*
 * Slot holding key in an array, or the empty slot that ends its probe
 * chain.  Terminates because every array keeps empty slots.
 */
static inline struct page_entry *
pagetab_probe(unsigned char *slots, uint32_t cap, unsigned stride,
	      uint64_t hash, uint64_t key)
{
	size_t i = pagetab_home(cap, hash);

	for (;;) {
		struct page_entry *e = pagetab_at(slots, stride, i);

		if (e->key == key || e->key == 0)
			return e;
		if (++i == cap)
			i = 0;
	}
}

/* pagetab_grow.c */
void pagetab_layout(unsigned ext, unsigned *stride, unsigned *weight_off);
void pagetab_array_free(unsigned char *slots, uint32_t mapped);
int pagetab_sub_grow(struct pagetab *t, struct pagetab_sub *s);

#endif
