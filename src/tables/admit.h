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
 * running mean of the weights it displaced, and the aggregation hands it
 * only the samples of pages whose page-table total (exact, from the page
 * table entry the sample already read) has reached the bar.  A page
 * below it is left out at no cost: its samples count in the frame's
 * sites_other, as those of any page without a record.
 *
 * The weights displaced are Space-Saving's, samples since the start and
 * inherited ones: they grow with the run's length, and a page turning hot
 * starts at total 1.  So the bar stops at ADMIT_BAR_MAX, what a page hot
 * now may leave out before it gets its place, however long the run and
 * however heavy the pages before it.  Past that a working set wider than
 * the table whose pages all have more samples than the cap displaces at
 * every sample again, as without the bar; the bar serves the cold tail
 * (pages with fewer samples than the cap since the start) and the start
 * of a run.  Collector thread only (each shard has its own tables).
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
	uint32_t bar;		/* 0 until the table displaces a page */
};

/* A page of weight w was displaced. */
static inline void
admit_displaced(struct admit *a, uint64_t w)
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

static inline void
admit_clear(struct admit *a)
{
	a->acc = 0;
	a->bar = 0;
}

#endif
