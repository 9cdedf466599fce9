#include "config.h"

/*
 * Replay's bookkeeping records, counted exactly: replay_record() turns
 * LOST (u64 id, lost) and LOST_SAMPLES (u64 lost) into that many lost
 * samples and each THROTTLE into one throttled interval; UNTHROTTLE and
 * malformed LOST records count nothing.  (The mutation gate's
 * replay-ignores-throttle and throttled-overwritten, issue 17.)  A sample
 * of no event the file describes counts one lost, kept aside while the
 * aggregation thread may run and added at the next sync (a frame, or any
 * record other than a sample).
 */

#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "perfdata_read.h"
#include "record-build.h"
#include "replay_int.h"
#include "testlib.h"
#include "topo.h"

/* Hands b's record to replay_record() as the reader would. */
static void
feed(struct replay *r, struct rb *b)
{
	struct perfdata_record rec = {
		.hdr = rb_end(b), .event_idx = PERFDATA_NO_EVENT,
	};

	check_eq_i64(replay_record(r, &rec), 0);
}

static void
lost(struct replay *r, uint64_t n)
{
	struct rb b;

	rb_begin(&b, PERF_RECORD_LOST);
	rb_u64(&b, 0x1d1);	/* id */
	rb_u64(&b, n);
	feed(r, &b);
}

static void
lost_samples(struct replay *r, uint64_t n)
{
	struct rb b;

	rb_begin(&b, PERF_RECORD_LOST_SAMPLES);
	rb_u64(&b, n);
	feed(r, &b);
}

static void
throttle(struct replay *r, uint32_t type)
{
	struct rb b;

	rb_begin(&b, type);
	rb_u64(&b, 1000);	/* time */
	rb_u64(&b, 0x1d1);	/* id */
	rb_u64(&b, 0x1d1);	/* stream_id */
	feed(r, &b);
}

int
main(void)
{
	static const int cpu_node[2] = { 0, 0 };
	struct topo *topo = topo_new_fake(2, cpu_node);
	struct replay *r = replay_alloc_zeroed();
	struct rb b;

	check(topo != NULL && r != NULL);
	if (!topo || !r)
		return test_result();
	check_eq_i64(aggr_init(&r->aggr, topo, NULL, 12, 0), 0);

	lost(r, 1234);
	check_eq_u64(r->aggr.interval.lost, 1234);
	lost_samples(r, 99);
	lost(r, 1);
	check_eq_u64(r->aggr.interval.lost, 1234 + 99 + 1);

	throttle(r, PERF_RECORD_THROTTLE);
	throttle(r, PERF_RECORD_UNTHROTTLE);
	throttle(r, PERF_RECORD_THROTTLE);
	throttle(r, PERF_RECORD_THROTTLE);
	throttle(r, PERF_RECORD_UNTHROTTLE);
	check_eq_u64(r->aggr.interval.throttled, 3);

	/* A LOST without its count says nothing. */
	rb_begin(&b, PERF_RECORD_LOST);
	rb_u64(&b, 0x1d1);
	feed(r, &b);
	check_eq_u64(r->aggr.interval.lost, 1234 + 99 + 1);
	check_eq_u64(r->aggr.interval.throttled, 3);
	check_eq_u64(r->aggr.interval.samples, 0);

	/* Both carry over into the cumulative counts. */
	aggr_next_interval(&r->aggr);
	throttle(r, PERF_RECORD_THROTTLE);
	lost_samples(r, 5);
	check_eq_u64(r->aggr.interval.throttled, 1);
	check_eq_u64(r->aggr.interval.lost, 5);
	check_eq_u64(r->aggr.cumulative.throttled, 3);
	check_eq_u64(r->aggr.cumulative.lost, 1234 + 99 + 1);

	/* Samples of no event: lost, once synced; the sync's own
	 * flush of nothing counts nothing more. */
	rb_begin(&b, PERF_RECORD_SAMPLE);
	rb_u64(&b, 0x1234);
	feed(r, &b);
	rb_begin(&b, PERF_RECORD_SAMPLE);
	rb_u64(&b, 0x1234);
	feed(r, &b);
	replay_pipe_sync(&r->pipe, &r->aggr);
	check_eq_u64(r->aggr.interval.lost, 5 + 2);
	check_eq_u64(r->bad_samples, 2);
	replay_pipe_sync(&r->pipe, &r->aggr);
	check_eq_u64(r->aggr.interval.lost, 5 + 2);
	check_eq_u64(r->aggr.interval.samples, 0);

	aggr_fini(&r->aggr);
	free(r);
	topo_free(topo);
	return test_result();
}
