/*
 * Page -> node upkeep of the aggregation (see aggr.h): setting nodes from
 * outside (migration, tests), the PHYS_ADDR map, the revalidation budget
 * and the per-interval figures.  Collector thread only.
 *
 * Revalidation rides on ingest: a sampled page whose known node was last
 * asked AGGR_REVAL_AGE or more intervals ago joins the batch's move_pages
 * query (aggr.c), up to reval_allow pages an interval; when more are due
 * than allowed, the age that makes a page due grows until the budget
 * keeps up, oldest answers first.  So the pages that make the interval's
 * figures are the ones kept current, no table walk is needed (a walk over
 * the table costs about what a frame's scan does), and pages that nobody
 * samples cost nothing; the frame re-reads the node of every page it
 * lists (framebuild.c), sampled or not.
 */
#include "config.h"

#include <errno.h>

#include "aggr.h"
#include "cpuvote.h"
#include "frame.h"
#include "nodemap.h"
#include "pagetab.h"

/* Until this many pages were asked, assume what a batched move_pages
 * query costs a page (a few hundred ns; bench/bench-nodes.c measures it,
 * docs/kernel.md, "NUMA" says why batches are cheaper). */
#define AGGR_REVAL_MIN_PAGES	1024
#define AGGR_REVAL_DEFAULT_NS	400
#define AGGR_REVAL_MIN_NS	50	/* floor of the measured cost a page */
/* Query stamps keep 15 bits of the interval number. */
#define AGGR_REVAL_MAX_AGE	0x4000u

void
aggr_set_physnode(struct aggr *a, const struct physnode *p)
{
	a->physnode = p;
}

void
aggr_votes_off(struct aggr *a)
{
	cpuvote_free(a->cpuvote);
	a->cpuvote = NULL;
}

int
aggr_set_node(struct aggr *a, int32_t pid, uint64_t addr, int node)
{
	bool inserted;
	struct page_entry *e = pagetab_get(a->pages, pid, addr, &inserted);

	if (!e)
		return -ENOSPC;
	e->node = node >= 0 && node <= INT16_MAX ? (int16_t)node :
						   PAGE_NODE_UNKNOWN;
	return 0;
}

uint64_t
aggr_revalidate_budget(struct aggr *a, uint64_t budget_ns)
{
	uint64_t per = AGGR_REVAL_DEFAULT_NS;
	uint32_t epoch = pagetab_epoch(a->pages);

	/* Once an interval: pages were refused last interval for want of
	 * budget, so make them due later (old ones first); else relax. */
	if (a->reval_age == 0)
		a->reval_age = AGGR_REVAL_AGE;
	if (epoch != a->reval_epoch) {
		if (a->reval_skipped && a->reval_age < AGGR_REVAL_MAX_AGE)
			a->reval_age++;
		else if (!a->reval_skipped && a->reval_age > AGGR_REVAL_AGE)
			a->reval_age--;
		a->reval_skipped = 0;
		a->reval_epoch = epoch;
	}
	if (!a->nodemap) {
		a->reval_allow = 0;
		return 0;
	}
	/* The average so far; calls of 1-256 pages from the ingest path,
	 * bigger ones from the frame's refresh. */
	{
		const struct nodemap_stats *st = nodemap_stats(a->nodemap);

		if (st->pages >= AGGR_REVAL_MIN_PAGES)
			per = st->ns / st->pages;
	}
	if (per < AGGR_REVAL_MIN_NS)
		per = AGGR_REVAL_MIN_NS;
	a->reval_ns_per_page = per;
	a->reval_allow = budget_ns / per;
	return a->reval_allow;
}

void
aggr_noderes(const struct aggr *a, struct frame_noderes *out)
{
	out->revalidated = a->reval_pages;
	out->changed = a->reval_changed;
	out->phys = a->phys_resolved;
	out->queried = out->resolved = out->query_us = 0;
	if (a->nodemap) {
		const struct nodemap_stats *st = nodemap_stats(a->nodemap);

		out->queried = st->pages - a->nm_pages_mark;
		out->resolved = st->resolved - a->nm_resolved_mark;
		out->query_us = (st->ns - a->nm_ns_mark) / 1000;
	}
}
