/*
 * Replay thread.  See replay.h.
 *
 * Records come in time order (perfdata_order.h, perf's ordered-events
 * rule: sorted within FINISHED_ROUND windows; a capture without rounds
 * through a window of PERFDATA_ORDER_MAX_BYTES), so the frames of a
 * system-wide capture are cut at sample time across CPUs, not in the
 * order the rings were read.
 *
 * Recorded time: t0 is the first sample's TIME; frame k covers
 * [t0 + k * interval, t0 + (k + 1) * interval).  A sample at or past the
 * current frame's end first emits the frames before it (empty ones too,
 * as live would), at most REPLAY_MAX_EMPTY in a row: a longer silence
 * becomes one frame spanning it, so a hostile timestamp cannot make a
 * billion frames.  A sample older than the current frame (one the order
 * could not place: see perfdata_order.h) counts in the current frame,
 * and the clock never runs backwards.  Samples without TIME all fall in
 * the final frame.
 *
 * Pacing (TUI): the frame ending at recorded time B is published when the
 * wall clock reaches play_wall + (B - play_rec) / speed.  A speed change
 * or a resume moves (play_wall, play_rec) to the current position, so the
 * picture continues from where it is.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aggr.h"
#include "cmd.h"
#include "frame.h"
#include "framebuild.h"
#include "log.h"
#include "pagetab.h"
#include "perfdata_read.h"
#include "producer.h"
#include "queue.h"
#include "record.h"
#include "replay.h"
#include "replay_int.h"
#include "sides.h"
#include "source.h"
#include "topo.h"


static void
replay_note(struct replay *r)
{
	const struct perfdata_info *info = perfdata_reader_info(r->cfg.reader);
	char speed[32];

	if (r->to_end)
		snprintf(speed, sizeof(speed), "to the end");
	else if (r->cfg.batch)
		snprintf(speed, sizeof(speed), "as fast as possible");
	else
		snprintf(speed, sizeof(speed), "speed %gx", r->speed);
	snprintf(r->note, sizeof(r->note),
		 "replay of %s (%s%s%s; recorded on %s, %s): %s; %s",
		 r->cfg.path,
		 perfdata_reader_is_pipe(r->cfg.reader) ? "pipe mode" :
		 "perf.data",
		 perfdata_reader_is_swapped(r->cfg.reader) ?
		 ", other byte order" : "",
		 info->compressed ? ", zstd" : "",
		 info->hostname[0] ? info->hostname : "an unknown host",
		 info->perf_version[0] ? info->perf_version : "unknown perf",
		 r->all_faults ? "samples are page faults (first touch, "
		 "copy-on-write, refault), not access frequency" :
		 "samples as recorded", speed);
}

int
replay_new(struct replay **out, const struct replay_config *cfg, char *err,
	   size_t errlen)
{
	struct replay *r = replay_alloc_zeroed();
	int ret;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = replay_pipe_choose(&r->pipe, err, errlen);
	if (ret < 0) {
		free(r);
		return ret;
	}
	r->cfg = *cfg;
	producer_init(&r->prod, &replay_ops, cfg->frames, cfg->cmds,
		      cfg->batch, cfg->sort, cfg->top_k);
	r->speed = 1.0;
	r->src.period_in_sample = true;
	snprintf(r->src.name, sizeof(r->src.name), "replay");
	r->interval_ns = (uint64_t)(cfg->interval_s * 1e9);
	if (r->interval_ns == 0)
		r->interval_ns = 1;
	for (size_t i = 0; i < REPLAY_SEEN; i++)
		r->seen[i].tid = -1;
	ret = aggr_init(&r->aggr, cfg->topo, NULL, 12, cfg->max_pages);
	/* A replay migrates nothing: the votes (a table as large as the
	 * pages, a random line a sample) would never be read. */
	if (ret == 0)
		aggr_votes_off(&r->aggr);
	/* A recording's pids are not processes of this machine now: names
	 * come from its records alone, never /proc, and symbols from the
	 * files they name, proven by the build ids it lists. */
	if (ret == 0)
		ret = replay_names_setup(r);
	/* The aggregation places a page from its sample's PHYS_ADDR in the
	 * pass that finds the page anyway; doing it here too cost a second
	 * page-table lookup (a cache miss on a large table) per sample.  It
	 * gets the map with the first event whose samples have PHYS_ADDR
	 * (replay_sync_events). */
	if (ret == 0) {
		ret = replay_physnode_build(perfdata_reader_info(cfg->reader),
					    &r->phys);
		if (ret == -EINVAL) {
			r->phys_slow = true;
			ret = 0;
		}
	}
	if (ret == 0)
		ret = replay_sync_events(r);
	if (ret == 0)
		ret = replay_callers_setup(r);
	if (ret == 0)
		ret = perfdata_order_new(&r->order, PERFDATA_ORDER_MAX_BYTES);
	if (ret < 0) {
		snprintf(err, errlen, "out of memory");
		producer_free(&r->prod);
		return ret;
	}
	*out = r;
	return 0;
}

struct producer *
replay_producer(struct replay *r)
{
	return &r->prod;
}

static void
replay_destroy(struct producer *p)
{
	struct replay *r = replay_of(p);

	replay_pipe_end(&r->pipe, &r->aggr);
	replay_callers_fini(r);
	aggr_fini(&r->aggr);
	heapobjs_fini(&r->heap);	/* its sites are allocs' */
	allocs_fini(&r->allocs);
	physnode_free(r->phys);
	perfdata_order_free(r->order);
	free(r->events);
	free(r->event_names);
	replay_tasks_fini(&r->procs);
	replay_tasks_fini(&r->threads);
	free(r);
}

/* The recorded time the picture has reached now (TUI pacing). */
static uint64_t
replay_position(const struct replay *r, double now)
{
	double ahead = (now - r->play_wall) * 1e9 * r->speed;
	uint64_t pos = r->play_rec + (ahead > 0 ? (uint64_t)ahead : 0);

	return pos > r->frame_end ? r->frame_end : pos;
}

static void
replay_rebase(struct replay *r)
{
	double now = base_now_s();

	r->play_rec = replay_position(r, now);
	r->play_wall = now;
}

static void
replay_apply(struct producer *p, const struct cmd *cmd)
{
	struct replay *r = replay_of(p);
	bool was_paused = r->paused;

	switch (cmd->type) {
	case CMD_PAUSE:
	case CMD_RESUME:
	case CMD_TOGGLE_PAUSE:
		if (!was_paused)
			replay_rebase(r);
		r->paused = cmd->type == CMD_PAUSE ? true :
			    cmd->type == CMD_RESUME ? false : !r->paused;
		if (was_paused && !r->paused)
			r->play_wall = base_now_s();
		break;
	case CMD_REPLAY_FASTER:
	case CMD_REPLAY_SLOWER:
		if (!r->paused)
			replay_rebase(r);
		r->speed *= cmd->type == CMD_REPLAY_FASTER ? 2.0 : 0.5;
		if (r->speed > REPLAY_SPEED_MAX)
			r->speed = REPLAY_SPEED_MAX;
		if (r->speed < REPLAY_SPEED_MIN)
			r->speed = REPLAY_SPEED_MIN;
		break;
	case CMD_REPLAY_END:
		r->to_end = true;
		r->paused = false;
		break;
	case CMD_RESET:
		replay_pipe_sync(&r->pipe, &r->aggr);
		aggr_reset(&r->aggr);
		break;
	case CMD_SET_PERIOD:
		log_msg("replay: the period of a recording cannot change");
		break;
	default:
		/* Live-only commands (e.g. page migration): a recording has
		 * no process to act on. */
		break;
	}
}

/* Waits for a command or timeout_ms. */
static void
replay_wait(struct replay *r, int timeout_ms)
{
	struct pollfd pfd = { .fd = queue_fd(r->cfg.cmds), .events = POLLIN };

	if (poll(&pfd, 1, timeout_ms) > 0)
		producer_commands(&r->prod);
}

/* TUI: holds the frame ending at frame_end until its wall time. */
static void
replay_pace(struct replay *r)
{
	for (;;) {
		double now = base_now_s(), due;

		producer_commands(&r->prod);
		if (r->prod.quit || r->to_end || r->cfg.batch)
			return;
		if (r->paused) {
			replay_wait(r, -1);
			continue;
		}
		due = r->play_wall + (double)(r->frame_end - r->play_rec) /
				     1e9 / r->speed;
		if (now >= due)
			return;
		replay_wait(r, (int)((due - now) * 1000) + 1 > REPLAY_WAIT_MS ?
			    REPLAY_WAIT_MS : (int)((due - now) * 1000) + 1);
	}
}

static size_t
replay_fill_targets(const struct replay *r, struct frame_target *ft)
{
	size_t n = 0;

	for (size_t i = 0; i < r->procs.n && n < REPLAY_MAX_TARGETS; i++) {
		const struct replay_task *t = &r->procs.v[i];

		if (!t->sampled)
			continue;
		memset(&ft[n], 0, sizeof(ft[n]));
		ft[n].pid = t->id;
		memcpy(ft[n].comm, t->comm, sizeof(ft[n].comm));
		ft[n].comm[sizeof(ft[n].comm) - 1] = '\0';
		if (!ft[n].comm[0])
			snprintf(ft[n].comm, sizeof(ft[n].comm), ":%d", t->id);
		ft[n].threads = t->threads;
		ft[n].alive = !t->exited;
		n++;
	}
	return n;
}

/* Bodies the reader could not swap, and samples that named no event,
 * were never handed over as samples: count them as lost. */
static void
replay_count_reader_losses(struct replay *r)
{
	const struct perfdata_stats *st =
		perfdata_reader_stats(r->cfg.reader);

	if (st->bad_records > r->reader_bad_seen) {
		aggr_count_lost(&r->aggr, st->bad_records -
			       r->reader_bad_seen);
		r->reader_bad_seen = st->bad_records;
	}
}

static int
replay_emit(struct replay *r, bool final)
{
	struct frame_target ft[REPLAY_MAX_TARGETS];
	struct frame_meta m = { 0 };
	const struct perf_event_attr *a0 = &r->events[0].spec.attr;
	uint64_t end = final ? (r->rec_now > r->frame_start ? r->rec_now :
				r->frame_start) : r->frame_end;
	struct frame *f;

	/* A TUI behind by a frame: this interval joins the next frame. */
	if (!producer_room(&r->prod, final))
		return 0;
	/* Every sample before the frame's end accounted (with the pipe
	 * off, the partial batch: the flush below then only ends it). */
	replay_pipe_sync(&r->pipe, &r->aggr);
	aggr_flush(&r->aggr);
	replay_count_reader_losses(r);
	replay_note(r);
	m.time = r->have_t0 ? (double)(end - r->t0) / 1e9 : 0;
	m.interval = (double)(end - r->frame_start) / 1e9;
	m.final = final;
	m.paused = r->paused;
	m.source = "replay";
	m.events = r->event_names;
	m.n_events = r->n_names;
	m.source_note = r->note;
	m.has_kinds = r->has_kinds;
	m.period = a0->freq ? 0 : a0->sample_period;
	m.targets = ft;
	m.n_targets = replay_fill_targets(r, ft);
	m.exit_status = -1;
	m.error = r->error[0] ? r->error : NULL;
	/* An object's age at the frame's recorded end. */
	r->aggr.objects_now = end;
	f = producer_build(&r->prod, &r->aggr, &m);
	if (!f)
		return -ENOMEM;
	snprintf(f->follow_mode, sizeof(f->follow_mode), "replay");
	replay_objects_frame(r, f);
	aggr_next_interval(&r->aggr);
	r->frame_start = end;
	return producer_publish(&r->prod, f);
}

/* Emits every frame that ends at or before t. */
int
replay_advance(struct replay *r, uint64_t t)
{
	unsigned empty = 0;
	int ret;

	/* frame_end saturates at UINT64_MAX: the rest is the final frame. */
	while (t >= r->frame_end && r->frame_end != UINT64_MAX && !r->prod.quit) {
		if (++empty > REPLAY_MAX_EMPTY) {
			/* One frame spans the rest of the silence. */
			uint64_t k = (t - r->t0) / r->interval_ns;

			r->frame_end = r->t0 + k * r->interval_ns;
			if (r->frame_end <= r->frame_start)
				r->frame_end = t;
		}
		replay_pace(r);
		ret = replay_emit(r, false);
		if (ret < 0)
			return ret;
		/* From the frame's end, not its start: a skipped frame
		 * (replay_emit) left frame_start where it was. */
		if (r->frame_end > UINT64_MAX - r->interval_ns)
			r->frame_end = UINT64_MAX;
		else
			r->frame_end += r->interval_ns;
	}
	return 0;
}

static void
replay_log_summary(const struct replay *r)
{
	const struct perfdata_stats *st =
		perfdata_reader_stats(r->cfg.reader);
	const struct perfdata_info *info = perfdata_reader_info(r->cfg.reader);
	const struct perfdata_order_stats *os = perfdata_order_stats(r->order);

	log_msg("replay %s: %llu records, %llu skipped (perf bookkeeping), "
		"%llu of unknown types, %llu unknown kernel types, %llu "
		"undecodable samples (counted lost), %llu compressed records "
		"(%llu -> %llu bytes), %llu unknown and %llu malformed "
		"optional features", r->cfg.path,
		(unsigned long long)st->records,
		(unsigned long long)st->skipped_records,
		(unsigned long long)st->unknown_records,
		(unsigned long long)r->unknown_records,
		(unsigned long long)r->bad_samples,
		(unsigned long long)st->compressed_records,
		(unsigned long long)st->compressed_bytes,
		(unsigned long long)st->decompressed_bytes,
		(unsigned long long)info->unknown_features,
		(unsigned long long)info->bad_features);
	log_msg("replay %s: time order: %llu rounds, at most %llu records "
		"held, %llu handed out early (window full), %llu out of order "
		"(counted where read), %llu without a time",
		r->cfg.path, (unsigned long long)os->rounds,
		(unsigned long long)os->held_max,
		(unsigned long long)os->forced,
		(unsigned long long)os->unordered,
		(unsigned long long)os->untimed);
}

static int
replay_run(struct producer *p)
{
	struct replay *r = replay_of(p);
	struct perfdata_record rec;
	char err[256];
	int ret = 0, got;

	r->frame_end = UINT64_MAX;
	/* The aggregation's own thread, unless a sample may need the page
	 * table on this one: a node from PHYS_ADDR without a usable map
	 * (replay_set_node), callers unwound from user stacks. */
	if (!r->phys_slow && !r->unw_callers)
		replay_pipe_start(&r->pipe, &r->aggr);
	while (!r->prod.quit) {
		got = perfdata_order_next(r->order, r->cfg.reader, &rec, err,
					  sizeof(err));
		if (got < 0) {
			snprintf(r->error, sizeof(r->error), "%s: %s",
				 r->cfg.path, err);
			break;
		}
		if (got == 0)
			break;
		ret = replay_record(r, &rec);
		if (ret < 0)
			break;
		if (++r->since_cmds >= REPLAY_CMD_EVERY) {
			producer_commands(&r->prod);
			r->since_cmds = 0;
		}
	}
	replay_log_summary(r);
	if (ret == 0)
		ret = replay_emit(r, true);
	replay_pipe_end(&r->pipe, &r->aggr);
	return ret;
}

const struct producer_ops replay_ops = {
	.thread_name = "memtop-replay",
	.run = replay_run,
	.apply = replay_apply,
	.destroy = replay_destroy,
};
