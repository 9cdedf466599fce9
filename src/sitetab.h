/*
 * Per-page code sites: for each (pid, page), the few instruction pointers
 * that caused most of its samples.  A side table beside the page table
 * (whose entry stays small); collector thread only.
 *
 * Each page keeps SITETAB_SITES (ip, count) slots.  count is exact: the
 * samples with that ip since the slot took it.  When the slots are full a
 * new ip takes the slot with the lowest rank (count plus the rank it
 * inherited when it took the slot), inheriting that rank: the Space-Saving
 * rule, so an ip with more than 1/SITETAB_SITES of a page's samples always
 * holds a slot.  Samples of ips without a slot are not lost: the frame
 * reports them as the page's sites_other (page total minus the slots'
 * counts).
 *
 * The table has a fixed capacity (set-associative, SITETAB_WAYS pages per
 * set, allocated once): a page that finds its set full takes the place of
 * the set's page with the fewest samples, which loses its sites (counted
 * in sitetab_evicted).  No allocation after sitetab_new.
 *
 * Keys are the page table's: pid 0 .. PAGETAB_MAX_PID, page below
 * 2^PAGETAB_PAGE_BITS (pagetab.h); the page table never hands out others,
 * and sitetab_add ignores them.  A sample reads its set's keys (half a
 * cache line) and its page's record (one line); the per-sample path is
 * inline (sides_account).
 */
#ifndef MEMTOP_SITETAB_H
#define MEMTOP_SITETAB_H

#include <stddef.h>
#include <stdint.h>

#include "pagetab.h"

#define SITETAB_SITES	4
#define SITETAB_WAYS	4	/* sitetab_add's unrolled compares */

struct sitetab_site {
	uint64_t ip;
	uint32_t count;
};

/*
 * A set is SITETAB_WAYS keys (two sets share a cache line) and
 * SITETAB_WAYS records of one cache line each, in two arrays.  A key is
 * ((pid + 1) << PAGETAB_PAGE_BITS | page), 0 = free way.  A record's slot
 * i is free when ip[i] == 0 (an unknown ip is never recorded); slots fill
 * in order and empty only all at once.  rank[i] is count[i] plus what
 * slot i inherited when its ip took it.
 */
struct sitetab_rec {
	uint64_t ip[SITETAB_SITES];
	uint32_t count[SITETAB_SITES];
	uint32_t rank[SITETAB_SITES];
};

struct sitetab {
	uint64_t *key;			/* n_sets * SITETAB_WAYS */
	struct sitetab_rec *rec;	/* n_sets * SITETAB_WAYS, aligned */
	void *key_mem, *rec_mem;	/* what calloc gave */
	size_t n_sets;			/* power of two */
	uint64_t evicted;
};

/* Room for about max_pages pages (rounded up to a power of two, at least
 * SITETAB_WAYS).  NULL on ENOMEM. */
struct sitetab *sitetab_new(size_t max_pages);
void sitetab_free(struct sitetab *t);	/* NULL-safe */

/* 0 for keys the page table cannot hold. */
static inline uint64_t
sitetab_key(int32_t pid, uint64_t page)
{
	if ((uint32_t)pid > (uint32_t)PAGETAB_MAX_PID ||
	    page > PAGETAB_PAGE_MASK)
		return 0;
	return ((uint64_t)pid + 1) << PAGETAB_PAGE_BITS | page;
}

/* Index of the first way of key's set. */
static inline size_t
sitetab_set(const struct sitetab *t, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	return ((size_t)(h >> 32) & (t->n_sets - 1)) * SITETAB_WAYS;
}

/* Brings the set of (pid, page) into the cache ahead of sitetab_add: its
 * keys and every way's record (which one is known only after the keys
 * are read).  A key sitetab_add ignores prefetches a harmless set. */
static inline __attribute__((always_inline)) void
sitetab_prefetch(const struct sitetab *t, int32_t pid, uint64_t page)
{
	size_t set = sitetab_set(t, ((uint64_t)(uint32_t)pid + 1) <<
					    PAGETAB_PAGE_BITS | page);
	const struct sitetab_rec *r = &t->rec[set];

	__builtin_prefetch(&t->key[set], 1);
	__builtin_prefetch(&r[0], 1);
	__builtin_prefetch(&r[1], 1);
	__builtin_prefetch(&r[2], 1);
	__builtin_prefetch(&r[3], 1);
}

/* The record of key in the set starting at set when it has none yet.
 * Out of line: once per page (and per eviction). */
struct sitetab_rec *sitetab_claim(struct sitetab *t, uint64_t key,
				  size_t set);
/* Space-Saving for one sample at an ip that holds no slot of r. */
void sitetab_slot_miss(struct sitetab_rec *r, uint64_t ip);

/* One sample of (pid, page) at ip (ip 0 = unknown: not recorded). */
static inline void
sitetab_add(struct sitetab *t, int32_t pid, uint64_t page, uint64_t ip)
{
	uint64_t key = sitetab_key(pid, page);
	const uint64_t *k;
	struct sitetab_rec *r;
	size_t set;

	if (ip == 0 || key == 0)
		return;
	set = sitetab_set(t, key);
	k = &t->key[set];
	if (k[0] == key)
		r = &t->rec[set];
	else if (k[1] == key)
		r = &t->rec[set + 1];
	else if (k[2] == key)
		r = &t->rec[set + 2];
	else if (k[3] == key)
		r = &t->rec[set + 3];
	else
		r = sitetab_claim(t, key, set);
	/* Free slots hold ip 0 and never match. */
	for (unsigned i = 0; i < SITETAB_SITES; i++) {
		if (r->ip[i] == ip) {
			r->count[i]++;
			r->rank[i]++;
			return;
		}
	}
	sitetab_slot_miss(r, ip);
}

/*
 * Adds n samples at ip to (pid, page) (merging tables); inherit is rank
 * that comes with them (see above).
 */
void sitetab_add_n(struct sitetab *t, int32_t pid, uint64_t page,
		   uint64_t ip, uint32_t n, uint32_t inherit);

/* The page's sites, most samples first, into out[SITETAB_SITES];
 * returns how many. */
size_t sitetab_get(const struct sitetab *t, int32_t pid, uint64_t page,
		   struct sitetab_site *out);

/*
 * Folds every page of src into dst at a coarser granularity: page p
 * becomes p >> (new_shift - old_shift); equal ips add up.
 */
void sitetab_fold(struct sitetab *dst, const struct sitetab *src,
		  unsigned shift_delta);

void sitetab_reset(struct sitetab *t);
size_t sitetab_capacity(const struct sitetab *t);
/* Pages that lost their sites to make room (since reset). */
uint64_t sitetab_evicted(const struct sitetab *t);

#endif
