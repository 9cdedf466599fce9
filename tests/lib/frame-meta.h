/*
 * The frame description the aggregation's unit tests build frames with
 * (tests/unit/aggr/): one event, "page-faults", at period 1, from the
 * given source, frame seq at recorded time seq seconds over a 1-second
 * interval, sorted by sort, the first top_k pages, no exit status.  A
 * test sets the other fields (final, targets, ...) on the copy.
 */
#ifndef MEMTOP_FRAME_META_TEST_H
#define MEMTOP_FRAME_META_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "framebuild.h"

static const char *const ftest_events[] = { "page-faults" };

static inline struct frame_meta
ftest_meta(const char *source, uint64_t seq, enum sort_key sort,
	   size_t top_k)
{
	struct frame_meta m = {
		.seq = seq, .time = (double)seq, .interval = 1.0,
		.source = source, .events = ftest_events, .n_events = 1,
		.period = 1, .sort = sort, .top_k = top_k, .exit_status = -1,
	};

	return m;
}

#endif
