#include "config.h"

/*
 * A TUI that falls behind loses frames, never counts: replay a synthetic
 * capture at full speed (CMD_REPLAY_END) into a one-frame queue that a
 * slow UI drains, and check that the frames it did take add up to every
 * sample of the file, with their intervals covering the whole recording,
 * while some frames were skipped (producer_room: the skipped interval
 * joins the next frame).  The oracle is the synthetic file's own count.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "perfdata-build.h"
#include "perfdata-synth.h"
#include "replay-run.h"
#include "replay.h"
#include "testlib.h"

#define SKIP_SAMPLES	40000
#define SKIP_SECONDS	10.0
#define SKIP_INTERVAL	0.05	/* 200 frames of recorded time */

struct taken {
	uint64_t samples, loads, stores, frames, skipped, last_cumulative;
	double interval;
};

/* Takes a frame, slowly: one every 10 ms. */
static void
take_slowly(const struct frame *f, void *ctx)
{
	struct taken *t = ctx;

	t->frames++;
	t->samples += f->totals.samples;
	t->loads += f->totals.loads;
	t->stores += f->totals.stores;
	t->skipped += f->skipped;
	t->interval += f->interval;
	t->last_cumulative = f->cumulative.samples;
	usleep(10000);
}

int
main(void)
{
	struct replay_run rr = { 0 };
	struct synth_opts o;
	struct taken t = { 0 };
	char path[512], err[256];

	tmpdir_make();
	path_in_tmp(path, sizeof(path), "skip.data");
	synth_defaults(&o);
	o.samples = SKIP_SAMPLES;
	o.seconds = SKIP_SECONDS;
	o.pids = 1;
	if (synth_write(path, &o, err, sizeof(err)) < 0) {
		test_fail_at(__FILE__, __LINE__, "synth: %s", err);
		goto out;
	}
	/* One frame may wait, and no batch: the TUI's way, skip and never
	 * wait. */
	if (replay_run_open(&rr, path, 1, SKIP_INTERVAL, 10, false, true,
			    err, sizeof(err)) < 0) {
		test_fail_at(__FILE__, __LINE__, "replay: %s", err);
		goto out;
	}
	check_eq_i64(replay_run_frames(&rr, take_slowly, &t), 0);
	printf("# %llu frames taken, %llu skipped, %llu samples, %.2f s\n",
	       (unsigned long long)t.frames, (unsigned long long)t.skipped,
	       (unsigned long long)t.samples, t.interval);
	/* The test means something only when frames were skipped. */
	check(t.skipped > 0);
	check(t.frames + t.skipped >= (uint64_t)(SKIP_SECONDS / SKIP_INTERVAL) - 1);
	check_eq_u64(t.samples, SKIP_SAMPLES);
	check_eq_u64(t.loads + t.stores, SKIP_SAMPLES);
	check_eq_u64(t.last_cumulative, SKIP_SAMPLES);
	/* The taken frames' intervals cover the recording (first sample to
	 * last: within one interval of its span). */
	check(t.interval > SKIP_SECONDS - 2 * SKIP_INTERVAL &&
	      t.interval < SKIP_SECONDS + 2 * SKIP_INTERVAL);
out:
	replay_run_close(&rr);
	tmpdir_remove();
	return test_result();
}
