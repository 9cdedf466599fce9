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
 */
#ifndef MEMTOP_SITETAB_H
#define MEMTOP_SITETAB_H

#include <stddef.h>
#include <stdint.h>

#define SITETAB_SITES	4
#define SITETAB_WAYS	4

struct sitetab_site {
	uint64_t ip;
	uint32_t count;
};

struct sitetab;

/* Room for about max_pages pages (rounded up to a power of two, at least
 * SITETAB_WAYS).  NULL on ENOMEM. */
struct sitetab *sitetab_new(size_t max_pages);
void sitetab_free(struct sitetab *t);	/* NULL-safe */

/* Brings the set of (pid, page) into the cache ahead of sitetab_add. */
void sitetab_prefetch(const struct sitetab *t, int32_t pid, uint64_t page);

/* One sample of (pid, page) at ip (ip 0 = unknown: not recorded). */
void sitetab_add(struct sitetab *t, int32_t pid, uint64_t page, uint64_t ip);

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
