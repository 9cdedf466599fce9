/*
 * The aggregation's bookkeeping between batches (see aggr.h): counters
 * that arrive outside samples, the end of an interval, reset, and the
 * tables other rooms reach through it.  Collector thread only.
 */
#include "config.h"

#include <string.h>

#include "aggr.h"
#include "cpuvote.h"
#include "nodemap.h"
#include "pagetab.h"
#include "proctab.h"
#include "sides.h"
#include "threadtab.h"

struct pagetab *
aggr_pages(struct aggr *a)
{
	return a->pages;
}

struct sides *
aggr_sides(struct aggr *a)
{
	return a->sides;
}

void
aggr_count_lost(struct aggr *a, uint64_t n)
{
	a->interval.lost += n;
}

void
aggr_count_throttled(struct aggr *a, uint64_t n)
{
	a->interval.throttled += n;
}

void
aggr_count_unattributed(struct aggr *a, uint64_t n)
{
	a->interval.unattributed += n;
}

static void
aggr_clear_interval(struct aggr *a)
{
	size_t nn = (size_t)a->n_nodes;

	memset(&a->interval, 0, sizeof(a->interval));
	memset(a->cpu_samples, 0, (size_t)a->n_cpus * sizeof(uint64_t));
	memset(a->node_mem, 0, nn * sizeof(uint64_t));
	memset(a->matrix, 0, nn * nn * sizeof(uint64_t));
	memset(a->matrix_unknown, 0, nn * sizeof(uint64_t));
	a->mem_unknown = 0;
	a->cpu_unknown = 0;
	a->reval_pages = a->reval_changed = a->phys_resolved = 0;
	if (a->nodemap) {
		const struct nodemap_stats *st = nodemap_stats(a->nodemap);

		a->nm_pages_mark = st->pages;
		a->nm_resolved_mark = st->resolved;
		a->nm_ns_mark = st->ns;
	}
}

void
aggr_next_interval(struct aggr *a)
{
	counts_add(&a->cumulative, &a->interval);
	aggr_clear_interval(a);
	pagetab_next_interval(a->pages);
	threadtab_next_interval(a->threads);
	proctab_next_interval(a->procs);
	cpuvote_next_interval(a->cpuvote);
	sides_next_interval(a->sides);
}

void
aggr_reset(struct aggr *a)
{
	/* Samples still queued belong to the time before the reset. */
	a->n_batch = 0;
	aggr_clear_interval(a);
	memset(&a->cumulative, 0, sizeof(a->cumulative));
	pagetab_reset(a->pages);
	threadtab_reset(a->threads);
	proctab_reset(a->procs);
	cpuvote_reset(a->cpuvote);
	sides_reset(a->sides);
}
