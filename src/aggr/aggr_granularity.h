/* Switching the aggregation's page size while running.  Collector thread. */
#ifndef MEMTOP_AGGR_GRANULARITY_H
#define MEMTOP_AGGR_GRANULARITY_H

#include <stddef.h>

struct aggr;

/*
 * Rebuilds the page table at shift.  Coarser: every entry folds into the
 * page that holds it (counters add up; interval counters only when they
 * belong to the current interval; the node stays when all folded pages
 * agree, else it is asked again).  Finer: counts cannot be split, so the
 * table starts empty (frame totals and cumulative counters stay).
 * Queued samples are accounted first.  0, -EINVAL (not a granularity),
 * -ENOMEM (the old table stays).
 */
int aggr_granularity_apply(struct aggr *a, unsigned shift, size_t max_pages);

#endif
