/*
 * Helpers shared by the page-table tests (test-pagetab.c,
 * test-pagetab-counts.c, test-pagetab-growth.c): a seeded generator,
 * page addresses, counts in and out, and the keys of the growth test.
 */
#ifndef MEMTOP_PAGETAB_TEST_H
#define MEMTOP_PAGETAB_TEST_H

#include <stdint.h>

#include "pagetab.h"

#define PTEST_SHIFT	12

struct ptest_rng {
	uint64_t s;
};

/* splitmix64: deterministic per seed, good enough to scatter test data. */
static inline uint64_t
ptest_rand(struct ptest_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t
ptest_below(struct ptest_rng *r, uint64_t n)
{
	return n ? ptest_rand(r) % n : 0;
}

static inline uint64_t
ptest_addr(uint64_t page)
{
	return page << PTEST_SHIFT;
}

static inline struct page_counts
ptest_read(const struct pagetab *t, const struct page_entry *e)
{
	struct page_counts c;

	pagetab_read(t, e, &c);
	return c;
}

/* Adds loads, stores, other (this interval; total grows by their sum). */
static inline void
ptest_add(struct pagetab *t, struct page_entry *e, uint64_t loads,
	  uint64_t stores, uint64_t other)
{
	struct page_counts c = { .loads = loads, .stores = stores,
				 .other = other,
				 .total = loads + stores + other };

	pagetab_add_counts(t, e, &c);
}

/* Keys of the growth test: pages repeat across pids. */
static inline int32_t
ptest_growth_pid(size_t i)
{
	return (int32_t)(i % 5);
}

static inline uint64_t
ptest_growth_page(size_t i)
{
	return i / 5 * 3 + 1;
}

#endif
