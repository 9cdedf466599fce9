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
 * Only ips that fit 48 bits sign-extended are recorded (every x86-64
 * address with 4-level page tables, user and kernel; the record has
 * room for no more); a sample at another ip counts in sites_other.
 *
 * The table is set-associative, SITETAB_WAYS pages per set, and sized to
 * the pages it holds: it starts at SITETAB_FIRST_SETS sets and doubles
 * (up to its room, at most the capacity sitetab_new was given) when a
 * new page finds its set full or the table half used, so a few thousand
 * pages sit in a few hundred KiB instead of spread over the whole
 * capacity (a TLB miss a sample: issue 15).  A set's pages go to two
 * sets of the doubled table (the set is the hash's top bits), so growing
 * never overflows a set; they move a few sets at a time (sitetab_claim),
 * so no sample pays for the whole table.
 * Below its capacity the aggregation may give it less room for now
 * (sitetab_set_room: a byte a page the page table tracks, sides.h).
 * Only a table at its room evicts: a page that finds its set full
 * takes the place of the set's page of least weight (its slots' ranks
 * added up), which loses its sites (counted in sitetab_evicted), and
 * inherits that weight, spread evenly over its slots' ranks: Space-Saving
 * again, one level up, so a page with more than 1/SITETAB_WAYS of its
 * set's samples since the start always holds a record, however heavy the
 * pages that came before it.  Its sites then compete as before: every
 * slot starts from the same inherited rank.  A doubling that cannot
 * allocate leaves the table as it is (it evicts from then on).
 *
 * Keys are the page table's: pid 0 .. PAGETAB_MAX_PID, page below
 * 2^PAGETAB_PAGE_BITS (pagetab.h); the page table never hands out others,
 * and sitetab_add ignores them.  A page's record holds its key (no
 * separate key array, whose line would be one more miss a sample): a set is
 * four adjacent cache lines, prefetched together, and sitetab_add looks
 * first at the page's home way (the one its hash prefers), where a new
 * page goes when it is free and a page found elsewhere in the set moves
 * when it outweighs the page there, so most samples need no other way.
 * The per-sample path is inline (sides_account).
 */
#ifndef MEMTOP_SITETAB_H
#define MEMTOP_SITETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admit.h"
#include "pagetab.h"

#define SITETAB_SITES	4
#define SITETAB_WAYS	PAGETAB_SIDE_WAYS	/* pagetab_side_home's */
/* Sets of a new (or reset) table: 1024 pages, 64 KiB. */
#define SITETAB_FIRST_SETS	256
/* Sets moved from the table before a doubling at each claim. */
#define SITETAB_MOVE_SETS	16

struct sitetab_site {
	uint64_t ip;
	uint32_t count;
};

/*
 * A set is SITETAB_WAYS records of one cache line each, side by side.
 * key is ((pid + 1) << PAGETAB_PAGE_BITS | page), 0 = free way.  Slot i
 * holds ip (ip_hi[i] << 32 | ip_lo[i]) sign-extended from bit 47; it is
 * free when both halves are 0 (an unknown ip is never recorded); slots
 * fill in order and empty only all at once.  rank[i] is count[i] plus
 * what slot i inherited when its ip took it (in a page that displaced
 * another, every slot also a quarter of that page's weight; a free
 * slot's rank is what it will inherit).
 */
struct sitetab_rec {
	uint64_t key;
	uint32_t ip_lo[SITETAB_SITES];
	uint16_t ip_hi[SITETAB_SITES];
	uint32_t count[SITETAB_SITES];
	uint32_t rank[SITETAB_SITES];
};

struct sitetab {
	struct sitetab_rec *rec;	/* n_sets * SITETAB_WAYS, aligned */
	void *rec_mem;			/* what calloc or mmap gave */
	size_t rec_len;			/* mmap's length; 0: calloc's */
	size_t n_sets;			/* power of two */
	size_t max_sets;		/* the capacity's sets */
	size_t room_sets;		/* sets it may grow to now */
	size_t n_used;			/* records holding a page */
	uint64_t evicted;
	struct admit admit;		/* the bar once it displaces */
	unsigned grown;			/* doublings since new or reset */
	bool grow_failed;		/* ENOMEM once: stay at n_sets */
	/* The table before the last doubling while its pages move (NULL
	 * once they all have): old_sets sets, those below `moved` moved,
	 * others moved (empty) or not. */
	struct sitetab_rec *old;
	void *old_mem;
	size_t old_len, old_sets, moved;
};

/* Room for about max_pages pages (rounded up to a power of two, at least
 * SITETAB_WAYS), at first for SITETAB_FIRST_SETS sets of them (fewer
 * when max_pages is smaller).  NULL on ENOMEM. */
struct sitetab *sitetab_new(size_t max_pages);
void sitetab_free(struct sitetab *t);	/* NULL-safe */

/* 0 for keys the page table cannot hold. */
static inline uint64_t
sitetab_key(int32_t pid, uint64_t page)
{
	if ((uint32_t)pid > (uint32_t)PAGETAB_MAX_PID ||
	    page > PAGETAB_PAGE_MASK)
		return 0;
	return pagetab_key_of(pid, page);
}

/* Index of key's home way (pagetab_side_home).  The pid is folded onto
 * the page bits first (pagetab_key_mix), as in pagetab_hash: without it
 * the same few pages of thousands of pids spread worse than at random
 * (at full load, more than twice the evictions). */
static inline size_t
sitetab_home(const struct sitetab *t, uint64_t key)
{
	return pagetab_side_home(key, t->n_sets);
}

/* Whether the record can hold ip (see the top comment). */
static inline bool
sitetab_ip_fits(uint64_t ip)
{
	return (uint64_t)((int64_t)(ip << 16) >> 16) == ip;
}

/* Brings the set of the page whose key mixes to h (pagetab_key_mix)
 * into the cache ahead of sitetab_add_key: its home way, and the other
 * three (four adjacent lines), which a page away from home and a new
 * page (claim, eviction) read: where sets are full and pages come and
 * go, those reads are common enough that fetching the home way alone
 * costs more than it saves. */
static inline __attribute__((always_inline)) void
sitetab_prefetch_mixed(const struct sitetab *t, uint64_t h)
{
	const struct sitetab_rec *r =
		&t->rec[pagetab_side_home_mixed(h, t->n_sets) &
			~(size_t)(SITETAB_WAYS - 1)];

	__builtin_prefetch(&r[0], 1);
	__builtin_prefetch(&r[1], 1);
	__builtin_prefetch(&r[2], 1);
	__builtin_prefetch(&r[3], 1);
}

/* The record of key when it is not in its home way: another way of the
 * set, or one claimed (growing the table, or evicting when the set is
 * full at full size, if admit_displace lets the page of this page-table
 * total in; NULL when not).  Out of line. */
struct sitetab_rec *sitetab_claim(struct sitetab *t, uint64_t key,
				  size_t home, uint32_t total);
/* Space-Saving for one sample at an ip that holds no slot of r. */
void sitetab_slot_miss(struct sitetab_rec *r, uint64_t ip);

/* One sample at ip (0 = unknown: not recorded) of the page whose key
 * (sitetab_key; a page table entry's, never 0) mixes to h
 * (pagetab_key_mix) and whose page-table total, counting the sample, is
 * total (ADMIT_TOTAL_ANY: unknown; admit.h).  A page without a record
 * that a full set does not let in is not recorded. */
static inline void
sitetab_add_key(struct sitetab *t, uint64_t key, uint64_t h, uint64_t ip,
		uint32_t total)
{
	uint32_t lo = (uint32_t)ip;
	uint16_t hi = (uint16_t)(ip >> 32);
	struct sitetab_rec *r;
	size_t home;

	if (ip == 0 || !sitetab_ip_fits(ip))
		return;
	home = pagetab_side_home_mixed(h, t->n_sets);
	r = &t->rec[home];
	if (r->key != key) {
		r = sitetab_claim(t, key, home, total);
		if (!r)
			return;
	}
	/* Free slots hold 0 and never match. */
	for (unsigned i = 0; i < SITETAB_SITES; i++) {
		if (r->ip_lo[i] == lo && r->ip_hi[i] == hi) {
			r->count[i]++;
			r->rank[i]++;
			return;
		}
	}
	sitetab_slot_miss(r, ip);
}

/* One sample of (pid, page) at ip (ip 0 = unknown: not recorded). */
static inline void
sitetab_add(struct sitetab *t, int32_t pid, uint64_t page, uint64_t ip)
{
	uint64_t key = sitetab_key(pid, page);

	if (key)
		sitetab_add_key(t, key, pagetab_key_mix(key), ip,
				ADMIT_TOTAL_ANY);
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
/* The same at the size it has: for a table refilled at once (a shard's,
 * src/aggr/aggr_merge.c), which would otherwise grow again each time. */
void sitetab_clear(struct sitetab *t);
/* Pages the table may grow to hold (sitetab_new's max_pages, rounded). */
size_t sitetab_capacity(const struct sitetab *t);
/*
 * Lets the table grow to about pages pages for now (the power of two of
 * sets at or below it, at least the first size, at most the capacity;
 * a new table may grow to its capacity): a table at its room evicts as
 * one at its capacity, and one given room to grow again drops its
 * admission bar (admit.h).  A table already larger keeps its size.
 */
void sitetab_set_room(struct sitetab *t, size_t pages);
/* Pages the table has room for now, and holds. */
size_t sitetab_slots(const struct sitetab *t);
size_t sitetab_used(const struct sitetab *t);
/* Bytes the table holds (struct, records, and the table before the
 * last doubling while its pages move). */
size_t sitetab_bytes(const struct sitetab *t);
/* Pages that lost their sites to make room (since reset). */
uint64_t sitetab_evicted(const struct sitetab *t);

#endif
