/*
 * The admission bar of a side table kept for the hottest pages (the code
 * sites of sitetab.h, the level mixes of levtab.h), once the table is at
 * its room (its capacity, or less while the page table tracks few pages:
 * sitetab_set_room) and displaces pages; room to grow again clears it.
 *
 * Space-Saving alone gives a page new to a full set the place of the
 * set's lightest page on its first sample.  Over a working set much
 * wider than the table that is nearly every sample: the set's four
 * records read (four random lines) and one rewritten, for a page that
 * may not come back.  So a table that displaces keeps a bar, the
 * running mean of what newcomers met in full sets (the weights they
 * displaced, or those they fell short of: admit_displace), and the
 * aggregation hands it
 * only the samples of pages whose page-table total (exact, from the page
 * table entry the sample already read) has reached the bar.  A page
 * below it is left out at no cost: its samples count in the frame's
 * sites_other, as those of any page without a record.
 *
 * Those weights are Space-Saving's, samples since the start and
 * inherited ones: they grow with the run's length, and a page turning hot
 * starts at total 1.  So the bar stops at ADMIT_BAR_MAX, what a page hot
 * now may leave out before it gets its place, however long the run and
 * however heavy the pages before it.  Past that a working set wider than
 * the table whose pages all have more samples than the cap would
 * displace at every sample again: a set holding four of them and a fifth
 * coming back in turn (a uniform refault of a few thousand pages) reads
 * the set, rewrites a record and loses a page's sites at each sample of
 * that set, to hold each page's sites for a round or less.
 *
 * So past the bar a page new to a full set takes the place of the set's
 * lightest page (admit_displace) only
 *  - when its exact page-table total is above that page's weight by more
 *    than ADMIT_BAR_MAX (a weight counts the samples since the page came
 *    and those it inherited, less those it had below the bar: at most
 *    ADMIT_BAR_MAX fewer than its own total), so a set keeps pages of
 *    about equal samples where they are, however many compete; or
 *  - when that page is light (weight below ADMIT_BAR_MAX) and the
 *    newcomer's total is more than twice that page's own page-table
 *    total, plus one (read from the page table, exact, not its lagging
 *    weight): a page of a few samples gets past pages of one sample that
 *    filled the table in the same interval, where the fixed margin kept
 *    it out for good (the five faults of each hot page of
 *    tests/e2e/e2e-replay-callchain.sh under ThreadSanitizer, behind the
 *    thousands of pages its runtime touches once); pages of equal
 *    samples still keep their places; or
 *  - at every ADMIT_RETRY-th sample of it, when the lightest page has no
 *    sample in the page table's current interval: a page turning hot gets
 *    past pages that no longer come back (whose weights do not decay)
 *    after at most ADMIT_RETRY - 1 samples more than the bar, or, behind
 *    pages quiet only since the interval began, a few more.
 * Over a uniform refault wider than the table that is a displacement for
 * at most one in ADMIT_RETRY samples of the pages without a record, and
 * only early in an interval.  Collector thread only (each shard has its
 * own tables).
 */
#ifndef MEMTOP_ADMIT_H
#define MEMTOP_ADMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "pagetab.h"

/* The highest bar: the samples a page turning hot may leave in
 * sites_other (and out of its level mix).  A page table entry's total
 * holds at least min(samples, PAGETAB_TOTAL_HALF) (pagetab_add_carry
 * leaves it there when it carries), so the cap, below that, is always
 * passed by a page with that many samples. */
#define ADMIT_BAR_MAX	64u
_Static_assert(ADMIT_BAR_MAX < PAGETAB_TOTAL_HALF,
	       "an entry's total must reach the bar");
/* The mean's weight of the newest displacement: 1/2^ADMIT_DECAY. */
#define ADMIT_DECAY	4

struct admit {
	uint64_t acc;		/* 2^ADMIT_DECAY times the running mean */
	uint32_t bar;		/* 0 until a newcomer meets a full set */
	/* The page table whose current interval tells a page still sampled
	 * (admit_displace); NULL: none, every page counts as quiet. */
	const struct pagetab *pages;
	/* Newcomers that read a full set and were refused, since the
	 * table's start: what the bar is there to keep low. */
	uint64_t refused;
};

/* The bar's running mean takes weight w. */
static inline void
admit_mean_add(struct admit *a, uint64_t w)
{
	uint64_t mean;

	a->acc += w - (a->acc >> ADMIT_DECAY);
	mean = a->acc >> ADMIT_DECAY;
	a->bar = mean < ADMIT_BAR_MAX ? (uint32_t)mean : ADMIT_BAR_MAX;
}

/* Whether a sample of a page with this page-table total (counting the
 * sample) goes to the table. */
static inline bool
admit_page(const struct admit *a, uint32_t total)
{
	return total >= a->bar;
}

/* Every this many samples of a page past the bar, it may displace a
 * heavier one (a power of two: a mask). */
#define ADMIT_RETRY	16u
/* The total of a caller that has none (a merge, a fold, a test of the
 * table alone): the newcomer always displaces, Space-Saving's rule. */
#define ADMIT_TOTAL_ANY	UINT32_MAX

/* Whether a page past the bar, with this page-table total (counting the
 * sample), takes the place of a full set's lightest page, of weight w
 * and key victim (the page table's key format): the decision alone. */
static inline bool
admit_wins(const struct admit *a, uint32_t total, uint64_t w,
	   uint64_t victim)
{
	bool retry = (total & (ADMIT_RETRY - 1)) == 0;
	bool light = w < ADMIT_BAR_MAX;
	uint32_t vtotal;
	bool now;

	if (total == ADMIT_TOTAL_ANY || total > w + ADMIT_BAR_MAX)
		return true;
	if (!a->pages)
		return retry;
	if (!light && !retry)
		return false;	/* nothing to ask the page table */
	now = pagetab_key_peek(a->pages, victim, &vtotal);
	return (light && total > 2 * (uint64_t)vtotal + 1) || (retry && !now);
}

/*
 * admit_wins, counted.  In a crowded table (at least half its records
 * used) the bar's mean takes the weight displaced, or the total the page
 * would have needed (w + ADMIT_BAR_MAX): pages that could not get in
 * keep the next ones of their size from reading a set.  A full set in a
 * table less than half used is a collision of a few pages, not a working
 * set wider than the table: the same decision, but the bar, which every
 * later newcomer must pass without its set read, stays where it is.
 * Without that one collision just after the table's last doubling (a
 * set whose four pages all stayed together) raised the bar to 4 samples
 * for good, and the pages of every later process with fewer got no
 * code sites in a table nearly empty.
 */
static inline bool
admit_displace(struct admit *a, uint32_t total, uint64_t w, uint64_t victim,
	       bool crowded)
{
	bool in = admit_wins(a, total, w, victim);

	if (crowded)
		admit_mean_add(a, in ? w : w + ADMIT_BAR_MAX);
	if (!in)
		a->refused++;
	return in;
}

static inline void
admit_clear(struct admit *a)
{
	a->acc = 0;
	a->bar = 0;
}

#endif
