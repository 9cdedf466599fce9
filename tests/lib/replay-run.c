/* See replay-run.h. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "frame.h"
#include "perfdata_read.h"
#include "producer.h"
#include "queue.h"
#include "replay-run.h"
#include "topo.h"

int
replay_run_open(struct replay_run *rr, const char *path, size_t frames_cap,
		double interval_s, size_t top_k, bool batch, bool end,
		char *err, size_t errlen)
{
	struct cmd stop = { .type = CMD_REPLAY_END };

	memset(rr, 0, sizeof(*rr));
	rr->cfg.frames = queue_new(frames_cap, sizeof(struct frame *));
	rr->cfg.cmds = queue_new(16, sizeof(struct cmd));
	if (!rr->cfg.frames || !rr->cfg.cmds) {
		snprintf(err, errlen, "queues: out of memory");
		return -1;
	}
	if (perfdata_reader_open(&rr->reader, path, err, errlen) < 0)
		return -1;
	rr->topo = perfdata_info_topo(perfdata_reader_info(rr->reader), err,
				      errlen);
	if (!rr->topo)
		return -1;
	rr->cfg.reader = rr->reader;
	rr->cfg.topo = rr->topo;
	rr->cfg.path = path;
	rr->cfg.interval_s = interval_s;
	rr->cfg.top_k = top_k;
	rr->cfg.batch = batch;
	if (replay_new(&rr->rp, &rr->cfg, err, errlen) < 0)
		return -1;
	if (end)
		queue_push(rr->cfg.cmds, &stop);
	return 0;
}

int
replay_run_frames(struct replay_run *rr,
		  void (*fn)(const struct frame *f, void *ctx), void *ctx)
{
	bool final = false;
	struct frame *f;

	if (producer_start(replay_producer(rr->rp)) < 0)
		return -1;
	while (!final) {
		if (queue_pop(rr->cfg.frames, &f) < 0) {
			usleep(1000);
			continue;
		}
		final = f->final;
		fn(f, ctx);
		frame_free(f);
	}
	return producer_join(replay_producer(rr->rp));
}

void
replay_run_close(struct replay_run *rr)
{
	if (rr->rp)
		producer_free(replay_producer(rr->rp));
	perfdata_reader_free(rr->reader);
	topo_free(rr->topo);
	queue_free(rr->cfg.frames);
	queue_free(rr->cfg.cmds);
	memset(rr, 0, sizeof(*rr));
}
