/*
 * Helpers the aggregation's unit tests (tests/unit/aggr/) share: the
 * frame description they build frames with, and samples of memtop's own
 * pages.
 */
#ifndef MEMTOP_AGGR_TEST_H
#define MEMTOP_AGGR_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "aggr.h"
#include "framebuild.h"

static const char *const ftest_events[] = { "page-faults" };

/* One event, "page-faults", at period 1, from the given source, frame
 * seq at recorded time seq seconds over a 1-second interval, sorted by
 * sort, the first top_k pages, no exit status.  A test sets the other
 * fields (final, targets, ...) on the copy. */
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

/* One store by this process on each of the n pages at buf, flushed. */
static inline void
ftest_own_pages(struct aggr *a, const char *buf, size_t n)
{
	size_t page_size = (size_t)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < n; i++) {
		struct sample s = {
			.addr = (uint64_t)(uintptr_t)(buf + i * page_size),
			.pid = getpid(), .tid = getpid(), .cpu = 0,
			.kind = SAMPLE_STORE, .period = 1,
		};

		aggr_add(a, &s);
	}
	aggr_flush(a);
}

#endif
