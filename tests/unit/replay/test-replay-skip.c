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

#include "cmd.h"
#include "frame.h"
#include "perfdata-build.h"
#include "perfdata-synth.h"
#include "perfdata_read.h"
#include "producer.h"
#include "queue.h"
#include "replay.h"
#include "testlib.h"
#include "topo.h"

#define SKIP_SAMPLES	40000
#define SKIP_SECONDS	10.0
#define SKIP_INTERVAL	0.05	/* 200 frames of recorded time */

struct taken {
	uint64_t samples, loads, stores, frames, skipped, last_cumulative;
	double interval;
};

/* Takes frames until the final one, slowly: one every 10 ms. */
static void
take_slowly(struct queue *frames, struct taken *t)
{
	bool final = false;
	struct frame *f;

	while (!final) {
		if (queue_pop(frames, &f) < 0) {
			usleep(1000);
			continue;
		}
		final = f->final;
		t->frames++;
		t->samples += f->totals.samples;
		t->loads += f->totals.loads;
		t->stores += f->totals.stores;
		t->skipped += f->skipped;
		t->interval += f->interval;
		t->last_cumulative = f->cumulative.samples;
		frame_free(f);
		usleep(10000);
	}
}

int
main(void)
{
	struct replay_config cfg = { 0 };
	struct perfdata_reader *r = NULL;
	struct cmd end = { .type = CMD_REPLAY_END };
	struct synth_opts o;
	struct replay *rp = NULL;
	struct topo *topo = NULL;
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
	cfg.frames = queue_new(1, sizeof(struct frame *));
	cfg.cmds = queue_new(16, sizeof(struct cmd));
	if (!check(cfg.frames && cfg.cmds) ||
	    !check(perfdata_reader_open(&r, path, err, sizeof(err)) == 0))
		goto out;
	topo = perfdata_info_topo(perfdata_reader_info(r), err, sizeof(err));
	if (!check(topo != NULL))
		goto out;
	cfg.reader = r;
	cfg.topo = topo;
	cfg.path = path;
	cfg.interval_s = SKIP_INTERVAL;
	cfg.top_k = 10;
	cfg.batch = false;		/* the TUI's way: skip, never wait */
	if (!check(replay_new(&rp, &cfg, err, sizeof(err)) == 0))
		goto out;
	queue_push(cfg.cmds, &end);
	if (!check(producer_start(replay_producer(rp)) == 0))
		goto out;
	take_slowly(cfg.frames, &t);
	check_eq_i64(producer_join(replay_producer(rp)), 0);
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
	if (rp)
		producer_free(replay_producer(rp));
	perfdata_reader_free(r);
	topo_free(topo);
	queue_free(cfg.frames);
	queue_free(cfg.cmds);
	tmpdir_remove();
	return test_result();
}
