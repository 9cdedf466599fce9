/*
 * Collector thread.  See collector.h.
 *
 * Loop: epoll over the rings (watermark wakeups, task rings woken by
 * every FORK, COMM and EXIT record) and the command queue, with a timeout
 * that ends at the next frame or rescan (or sweep, see COLLECTOR_POLL_MS).
 * At each interval boundary every ring is drained, a frame is built and
 * published, and a new interval starts.  Threads are followed through FORK
 * records and a rescan of /proc/PID/task every COLLECTOR_RESCAN_MS
 * (follow.c); the UI's commands are applied in commands.c.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aggr.h"
#include "chanset.h"
#include "env.h"
#include "collector_int.h"
#include "frame.h"
#include "framebuild.h"
#include "ingest.h"
#include "lathist.h"
#include "log.h"
#include "migrate.h"
#include "names.h"
#include "nodemap.h"
#include "pagetab.h"
#include "physnode.h"
#include "producer.h"
#include "queue.h"
#include "record.h"
#include "recorder.h"
#include "sides.h"
#include "source.h"

/*
 * MEMTOP_RING_PAGES=N (a power of two, at least 2: a channel maps no
 * smaller ring) replaces the ring size, so tests and benchmarks can force
 * losses and check that each is counted.
 */
static unsigned
collector_ring_pages(unsigned pages)
{
	unsigned long v;

	if (!env_ulong("MEMTOP_RING_PAGES", 2, 1ul << 20, &v) || (v & (v - 1)))
		return pages;
	return (unsigned)v;
}

int
collector_new(struct collector **out, const struct collector_config *cfg,
	      char *err, size_t errlen)
{
	struct collector *c = calloc(1, sizeof(*c));
	int ret;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->cfg = *cfg;
	producer_init(&c->prod, &collector_ops, cfg->frames, cfg->cmds,
		      cfg->batch, cfg->sort, cfg->top_k);
	c->child_wstatus = -1;
	c->spare_fd = -1;
	collector_proc_end(c);
	if (cfg->resolve_nodes)
		c->nodemap = nodemap_new();
	if (cfg->resolve_nodes && !c->nodemap) {
		ret = -ENOMEM;
		goto out_oom;
	}
	ret = aggr_init(&c->aggr, cfg->topo, c->nodemap,
			cfg->page_shift ? cfg->page_shift : 12, cfg->max_pages);
	if (ret < 0 || aggr_procs_config(&c->aggr, cfg->max_processes, true))
		goto out_oom;
	/* Asked even on one node: to compare, and for the tests of the
	 * asking (man page, ENVIRONMENT). */
	if (getenv("MEMTOP_ASK_NODES"))
		c->aggr.sole_node = -1;
	/* Every channel asks for MMAP2 records where it asks for task
	 * records (source_open_event): regions come from them.  The ELF
	 * helper is forked now, before the collector thread exists. */
	if (sides_names(aggr_sides(&c->aggr))) {
		names_use_records(sides_names(aggr_sides(&c->aggr)), false);
		names_start_helper(sides_names(aggr_sides(&c->aggr)));
	}
	if (collector_objects_init(c) < 0)
		goto out_oom;
	/* Without memory blocks in sysfs, PHYS_ADDR samples use move_pages
	 * like the others. */
	if (cfg->resolve_nodes && physnode_new(&c->physnode) == 0)
		aggr_set_physnode(&c->aggr, c->physnode);
	c->migrate = migrate_new();
	if (!c->migrate) {
		ret = -ENOMEM;
		goto out_oom;
	}
	ingest_init(&c->ingest, &c->aggr);
	collector_rearm_setup(c);
	ret = collector_par_setup(c, err, errlen);
	if (ret < 0)
		goto out_free;
	if (getenv("MEMTOP_DEBUG_LATENCY")) {
		c->lat = lathist_new(getenv("MEMTOP_DEBUG_LATENCY"));
		if (!c->lat) {
			ret = -errno;
			snprintf(err, errlen, "MEMTOP_DEBUG_LATENCY %s: %s",
				 getenv("MEMTOP_DEBUG_LATENCY"),
				 strerror(errno));
			goto out_free;
		}
		c->ingest.lat = c->lat;
	}
	ret = chanset_new(&c->cs, cfg->src,
			  collector_ring_pages(cfg->ring_pages), cfg->period);
	if (ret < 0) {
		snprintf(err, errlen, "epoll: %s", strerror(-ret));
		goto out_free;
	}
	ret = chanset_watch_fd(c->cs, queue_fd(cfg->cmds), &c->cmd_tag);
	if (ret < 0) {
		snprintf(err, errlen, "epoll: %s", strerror(-ret));
		goto out_free;
	}
	*out = c;
	return 0;

out_oom:
	snprintf(err, errlen, "out of memory");
out_free:
	producer_free(&c->prod);
	return ret;
}

struct producer *
collector_producer(struct collector *c)
{
	return &c->prod;
}

static void
collector_destroy(struct producer *p)
{
	struct collector *c = collector_of(p);

	collector_damon_stop(c);
	collector_par_fini(c);
	chanset_free(c->cs);
	aggr_fini(&c->aggr);
	heapobjs_fini(&c->heap_objs);
	allocs_fini(&c->allocs);
	nodemap_free(c->nodemap);
	physnode_free(c->physnode);
	migrate_free(c->migrate);
	lathist_free(c->lat);
	free(c->targets);
	collector_proc_begin(c);
	free(c);
}

/* CPU time of the collector thread (the caller) and of its drain
 * threads, ns. */
static uint64_t
collector_cpu_ns(struct collector *c)
{
	return base_clock_ns(CLOCK_THREAD_CPUTIME_ID) + collector_par_cpu_ns(c);
}

/* Counts what the channel lost and was not counted yet (channel.h). */
static void
collector_count_lost(struct collector *c, struct channel *ch)
{
	uint64_t lost = channel_take_lost(ch);

	if (lost)
		aggr_count_lost(&c->aggr, lost);
}

/* After a drain: the events' own lost counts, for what no LOST record
 * has reported yet.  At every frame and before a channel closes. */
void
collector_sync_lost(struct collector *c, struct channel *ch)
{
	if (channel_read_lost(ch) == 0)
		collector_count_lost(c, ch);
}

void
collector_lost_records(struct collector *c, struct channel *ch, uint64_t n)
{
	channel_add_lost_records(ch, n);
	collector_count_lost(c, ch);
}

int
collector_on_record(const struct perf_event_header *hdr, void *ctx)
{
	struct collector_drain *d = ctx;
	struct collector *c = d->c;
	struct names *names = sides_names(aggr_sides(&c->aggr));
	struct record_task task;
	uint64_t n;

	/* A channel with a task ring has each COMM twice (both events ask):
	 * the file gets the one in order with the MMAP2s, the sample ring's. */
	if (c->cfg.recorder && !(d->task && hdr->type == PERF_RECORD_COMM))
		recorder_record(c->cfg.recorder, c->cfg.src, d->ch, hdr);
	switch (hdr->type) {
	case PERF_RECORD_SAMPLE:
		if (ingest_sample(&c->ingest, channel_events(d->ch), hdr,
				  d->period) ==
		    -EINVAL)
			c->bad_records++;
		break;
	case PERF_RECORD_LOST:
		if (record_parse_lost(hdr, &n) != 0)
			break;
		if (d->task) {
			c->task_lost += n;
			/* FORK records among them: find their threads now. */
			collector_rescan_soon(c);
		} else {
			collector_lost_records(c, d->ch, n);
		}
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (record_parse_lost(hdr, &n) == 0)
			aggr_count_lost(&c->aggr, n);
		break;
	case PERF_RECORD_THROTTLE:
		aggr_count_throttled(&c->aggr, 1);
		break;
	case PERF_RECORD_UNTHROTTLE:
		break;
	case PERF_RECORD_FORK:
		if (record_parse_task(hdr, &task) != 0)
			break;
		if (task.pid == task.tid) {
			aggr_proc_fork(&c->aggr, (int32_t)task.pid,
				       (int32_t)task.ppid);
			if (names)
				names_fork(names, (int32_t)task.pid,
					   (int32_t)task.ppid, task.time);
		}
		collector_on_fork(c, &task);
		break;
	case PERF_RECORD_EXIT:
		if (record_parse_task(hdr, &task) != 0)
			break;
		if ((pid_t)task.tid == channel_tid(d->ch))
			channel_mark_exited(d->ch);
		if (task.pid == task.tid) {
			aggr_proc_exit(&c->aggr, (int32_t)task.pid,
				       task.time);
			if (names)
				names_exit(names, (int32_t)task.pid);
			allocs_exit(&c->allocs, (int32_t)task.pid);
		}
		break;
	case PERF_RECORD_COMM:
		collector_on_comm(c, d->ch, hdr, d->task);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		collector_on_mmap(c, d->ch, hdr);
		break;
	default:
		c->unknown_records++;
		break;
	}
	return 0;
}

void
collector_drain(struct collector *c, struct channel *ch)
{
	struct collector_drain d = { .c = c, .ch = ch,
				     .period = chanset_period(c->cs) };
	struct ring *tasks = channel_task_ring(ch);
	struct ring_stats st = { 0 };

	/* Allocations before the samples of their pages. */
	collector_allocs_drain(c, ch);
	/* Task records first: a FORK opens the new thread's channel before
	 * more of the parent's samples are read. */
	if (tasks) {
		d.task = true;
		ring_drain(tasks, collector_on_record, &d, &st);
		d.task = false;
	}
	if (c->cfg.recorder) {
		ring_drain(channel_ring(ch), collector_on_record, &d, &st);
	} else {
		/* Samples without a callback each; the rest as above. */
		uint64_t bad = c->ingest.stats.bad;

		ingest_drain(&c->ingest, channel_events(ch), channel_ring(ch),
			     chanset_period(c->cs),
			     collector_on_record, &d, &st);
		c->bad_records += c->ingest.stats.bad - bad;
	}
	collector_drain_bad(c, ch, &st);
}

void
collector_drain_bad(struct collector *c, struct channel *ch,
		    const struct ring_stats *st)
{
	if (st->bad_size) {
		/* A skipped stretch of ring held records we cannot count
		 * exactly; count at least one lost record per skip. */
		aggr_count_lost(&c->aggr, st->bad_size);
		log_msg("tid %d: %llu malformed record header(s), %llu bytes "
			"skipped", (int)channel_tid(ch),
			(unsigned long long)st->bad_size,
			(unsigned long long)st->skipped_bytes);
	}
}

static void
collector_fill_targets(struct collector *c, struct frame_target *ft)
{
	for (size_t i = 0; i < c->n_targets; i++) {
		const struct target *t = &c->targets[i];

		ft[i].pid = t->pid;
		memcpy(ft[i].comm, t->comm, sizeof(ft[i].comm));
		ft[i].comm[sizeof(ft[i].comm) - 1] = '\0';
		ft[i].threads = c->inherit ? t->threads :
			(uint32_t)chanset_count_pid(c->cs, t->pid);
		ft[i].alive = t->alive;
		ft[i].unwatched = t->unwatched;
	}
}

/*
 * Drops followed child processes that have exited and been shown dead in
 * a frame: a target that forks thousands of children would otherwise grow
 * the table and every frame without bound.  Targets the user named (-p,
 * the launched command) stay to the end.
 */
static void
collector_prune_targets(struct collector *c)
{
	size_t kept = 0;

	for (size_t i = 0; i < c->n_targets; i++) {
		const struct target *t = &c->targets[i];

		if (t->followed && !t->alive)
			continue;
		c->targets[kept++] = *t;
	}
	c->n_targets = kept;
}

static int
collector_emit(struct collector *c, double now, bool final)
{
	const struct source *src = c->cfg.src;
	const char *events[SOURCE_MAX_EVENTS];
	char note[2048];
	struct frame_target *ft;
	struct frame_meta m = { 0 };
	struct frame *f;
	uint64_t seq;
	int status = -1, ret;

	/* A TUI behind by a frame: this interval joins the next frame. */
	if (!producer_room(&c->prod, final))
		return 0;
	ft = calloc(c->n_targets ? c->n_targets : 1, sizeof(*ft));
	if (!ft)
		return -ENOMEM;
	collector_fill_targets(c, ft);
	for (size_t i = 0; i < src->n_events; i++)
		events[i] = src->events[i].name;
	if (c->child_wstatus != -1) {
		if (WIFEXITED(c->child_wstatus))
			status = WEXITSTATUS(c->child_wstatus);
		else if (WIFSIGNALED(c->child_wstatus))
			status = 128 + WTERMSIG(c->child_wstatus);
	}
	m.time = now - c->t0;
	m.interval = now - c->interval_start;
	m.final = final;
	m.paused = c->paused;
	m.source = src->name;
	m.events = events;
	m.n_events = src->n_events;
	m.source_note = collector_frame_note(c, note, sizeof(note));
	m.has_kinds = src->has_kinds;
	m.period = chanset_period(c->cs);
	m.targets = ft;
	m.n_targets = c->n_targets;
	m.exit_status = status;
	m.error = c->error[0] ? c->error : NULL;
	/* Naming reads /proc/PID/maps and the mapped files. */
	collector_proc_begin(c);
	f = producer_build(&c->prod, &c->aggr, &m);
	collector_proc_end(c);
	free(ft);
	if (!f)
		return -ENOMEM;
	collector_prune_targets(c);
	collector_damon_frame(c, f);
	snprintf(f->follow_mode, sizeof(f->follow_mode), "%s",
		 c->inherit ? "inherit" : "per-thread");
	allocs_frame(&c->allocs, f);
	f->objects_lost += c->heap_objs.st.bad;
	collector_system_frame(c, f);
	f->follow_threads = c->follow.threads;
	f->follow_gap_max_us = c->follow.gap_max_ns / 1000;
	f->follow_task_lost = c->task_lost;
	f->collector_cpu_ns = collector_cpu_ns(c) - c->cpu_at_interval;
	c->cpu_at_interval += f->collector_cpu_ns;
	f->follow_gap_mean_us = c->follow.threads ?
		c->follow.gap_sum_ns / c->follow.threads / 1000 : 0;
	/* Moves since the last frame; then this frame's candidates, moved
	 * at once with --migrate-hot (reported in the next frame). */
	migrate_take(c->migrate, &f->migrations);
	if (migrate_snapshot(c->migrate, f, &c->aggr) < 0)
		log_msg("migrate: out of memory; no candidates this frame");
	if (c->cfg.migrate_hot && !final)
		migrate_top(c->migrate, &c->aggr, c->cfg.migrate_hot);
	aggr_next_interval(&c->aggr);
	aggr_revalidate_budget(&c->aggr, (uint64_t)(c->cfg.interval_s * 1e9 *
						    COLLECTOR_REVAL_SHARE));
	c->interval_start = now;
	if (!final)
		collector_rearm(c, now, true);
	seq = f->seq;
	ret = producer_publish(&c->prod, f);
	if (c->lat)
		lathist_publish(c->lat, seq, base_now_ns());
	return ret;
}

static int
collector_ms_until(double now, double when)
{
	double ms = (when - now) * 1000.0;

	if (ms <= 0)
		return 0;
	if (ms > COLLECTOR_RESCAN_MS)
		return COLLECTOR_RESCAN_MS;
	return (int)ms + 1;
}

/* Drains the channels epoll reported; true when the command queue is
 * among them. */
static bool
collector_on_events(struct collector *c, const struct epoll_event *evs,
		    int n)
{
	struct channel *chans[COLLECTOR_MAX_EVENTS];
	bool cmds_ready = false;
	size_t m = 0;

	for (int i = 0; i < n; i++) {
		if (evs[i].data.ptr == &c->cmd_tag)
			cmds_ready = true;
		else
			chans[m++] = evs[i].data.ptr;
	}
	/* POLLHUP comes without POLLIN even with data pending: always
	 * drain. */
	collector_drain_many(c, chans, m);
	for (int i = 0; i < n; i++)
		if (evs[i].data.ptr != &c->cmd_tag &&
		    (evs[i].events & (EPOLLHUP | EPOLLERR)))
			channel_mark_exited(evs[i].data.ptr);
	return cmds_ready;
}

/* The thread's start: the first rescan, re-arm and kdamond. */
static void
collector_begin(struct collector *c, double now)
{
	c->t0 = c->interval_start = now;
	c->cpu_at_interval = collector_cpu_ns(c);
	collector_rescan(c);
	c->rearm.next = now;
	collector_rearm(c, now, true);
	if (collector_damon_start(c) < 0)
		c->prod.quit = true;
}

static int
collector_run(struct producer *p)
{
	struct collector *c = collector_of(p);
	struct epoll_event evs[COLLECTOR_MAX_EVENTS];
	double now = base_now_s();
	double next_frame, next_sweep, next_nodes;
	int ret = 0;

	collector_begin(c, now);
	next_frame = now + c->cfg.interval_s;
	c->next_rescan = now + COLLECTOR_RESCAN_MS / 1000.0;
	next_sweep = now + COLLECTOR_POLL_MS / 1000.0;
	next_nodes = now + COLLECTOR_NODES_MS / 1000.0;
	for (;;) {
		bool final, cmds_ready, frame_due;
		int n, timeout;

		timeout = collector_ms_until(now, collector_wake(c, next_frame,
								 next_sweep,
								 next_nodes));
		n = chanset_wait(c->cs, evs, COLLECTOR_MAX_EVENTS, timeout);
		if (n < 0) {
			snprintf(c->error, sizeof(c->error), "epoll_wait: %s",
				 strerror(-n));
			c->prod.quit = true;
			n = 0;
		}
		cmds_ready = collector_on_events(c, evs, n);
		/* Only after every event: a command (reset, a period change
		 * leaving inherit mode) may close channels that later events
		 * of the same batch point to. */
		if (cmds_ready)
			producer_commands(&c->prod);
		now = base_now_s();
		frame_due = now >= next_frame;
		collector_rearm(c, now, false);
		if (now >= next_sweep) {
			collector_sweep(c);
			next_sweep = now + COLLECTOR_POLL_MS / 1000.0;
		}
		if (c->nodemap && now >= next_nodes && !frame_due) {
			collector_drain_pending(c);
			next_nodes = now + COLLECTOR_NODES_MS / 1000.0;
		}
		/* A frame's wakeup takes along a rescan that would come due
		 * before the next frame: one wakeup instead of two, and the
		 * rescans stay at most COLLECTOR_RESCAN_MS apart. */
		if (now >= c->next_rescan ||
		    (chanset_count(c->cs) == 0 && !c->damon) ||
		    (frame_due && c->next_rescan < now + c->cfg.interval_s)) {
			collector_rescan(c);
			c->next_rescan = now + COLLECTOR_RESCAN_MS / 1000.0;
		}
		final = c->prod.quit || collector_all_exited(c);
		if (final || frame_due) {
			aggr_procs_cutoff(&c->aggr, base_now_ns());
			collector_damon_drain(c);
			collector_drain_all(c);
			if (!final && chanset_count(c->cs) == 0) {
				collector_rescan(c);
				final = collector_all_exited(c);
			}
			/* The last frame: what the drain threads drained
			 * during its merge too (drainpar.c). */
			if (final)
				collector_par_merge(c);
			ret = collector_emit(c, now, final);
			if (ret < 0 || final)
				break;
			next_frame += c->cfg.interval_s;
			if (next_frame < now)
				next_frame = now + c->cfg.interval_s;
		} else {
			collector_close_exited(c);
			/* The last thread gone: is the target too? */
			if (chanset_count(c->cs) == 0)
				c->next_rescan = now;
		}
	}
	return ret;
}

const struct producer_ops collector_ops = {
	.thread_name = "memtop-collect",
	.run = collector_run,
	.apply = collector_apply,
	.destroy = collector_destroy,
};

int
collector_child_wstatus(const struct collector *c)
{
	return c->child_wstatus;
}
