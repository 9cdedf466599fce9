/*
 * Collector thread.  See collector.h.
 *
 * Loop: epoll over the rings (watermark wakeups, task rings woken by
 * every FORK, COMM and EXIT record) and the command queue, with a timeout
 * that ends at the next frame or rescan (or sweep, see COLLECTOR_POLL_MS).
 * At each interval boundary every ring is drained, a frame is built and
 * published, and a new interval starts.  Threads are followed through FORK
 * records and a rescan of /proc/PID/task every COLLECTOR_RESCAN_MS.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aggr.h"
#include "chanset.h"
#include "cmd.h"
#include "collector.h"
#include "frame.h"
#include "framebuild.h"
#include "granularity.h"
#include "ingest.h"
#include "lathist.h"
#include "log.h"
#include "migrate.h"
#include "nodemap.h"
#include "pagetab.h"
#include "physnode.h"
#include "procfs.h"
#include "queue.h"
#include "record.h"
#include "rlimits.h"
#include "recorder.h"
#include "source.h"
#include "topo.h"

/*
 * Longest a FORK record may wait in a sample ring below its watermark, on
 * a channel without a task ring of its own (chanset_n_untasked): it
 * bounds that thread's birth gap.  Other rings need no sweep: FORK, COMM
 * and EXIT records wake the collector through the task ring at once,
 * samples through the watermark, and every frame drains every ring.  Each
 * wakeup costs some 60 us of the collector's CPU on a KVM guest, so it
 * only wakes for work.
 */
#define COLLECTOR_POLL_MS	25
#define COLLECTOR_RESCAN_MS	1000
/* Without a locked-memory limit (root), the rings of a process's threads
 * still take at most this many pages together: 256 MiB, 256 threads at
 * the default ring size. */
#define COLLECTOR_RING_CAP_PAGES	65536u
#define COLLECTOR_MAX_EVENTS	64
/* Share of each interval that re-asking known page nodes may take: 1 %,
 * about 40 K pages a second at the ~250 ns a page move_pages costs. */
#define COLLECTOR_REVAL_SHARE	0.01

struct target {
	pid_t pid;
	char comm[16];
	uint32_t threads;	/* from the last /proc rescan */
	bool alive;
	bool launched;		/* our child: reap it */
	bool followed;		/* a child process found by its FORK record */
	/* Threads seen in /proc/PID/task (or FORK records) whose channel
	 * could not be opened (EMFILE, EPERM ...), as of the last scan. */
	uint32_t unwatched;
	uint32_t told;		/* the count the log last gave */
	/* CLOCK_MONOTONIC ns at the end of that scan: a thread born before
	 * it may be among the unwatched already. */
	uint64_t scanned_ns;
	int scan_err;		/* why the last rescan failed, -errno; 0 */
	/* Time of the COMM record comm came from: per-CPU rings are drained
	 * one after the other, so an older COMM (the shell before its exec)
	 * may come after a newer one. */
	uint64_t comm_time;
};

struct collector {
	struct collector_config cfg;
	struct chanset *cs;
	struct aggr aggr;
	struct ingest ingest;		/* the per-sample path into aggr */
	/* MEMTOP_DEBUG_LATENCY=FILE: sample -> frame latency; NULL = off */
	struct lathist *lat;
	struct nodemap *nodemap;
	struct physnode *physnode;	/* NULL: no memory-block map */
	struct migrate *migrate;	/* candidates of the last frame */
	pthread_t thread;
	bool started;
	int result;

	struct target *targets;
	size_t n_targets;

	uint64_t seq;
	uint64_t skipped;	/* frames dropped because the UI lagged */
	uint64_t unknown_records;
	uint64_t bad_records;
	bool paused;
	bool quit;
	/* Launched command watched by per-CPU inherited channels (exact from
	 * each thread's birth) until a period change moves it to per-thread
	 * channels, which IOC_PERIOD reaches. */
	bool inherit;
	struct collector_follow follow;
	uint64_t cpu_at_interval;	/* thread CPU ns at interval start */
	int child_wstatus;
	double t0;
	double interval_start;
	double next_rescan;	/* collector_now() time of the next rescan */
	char error[256];
	char cmd_tag;		/* epoll tag of the command queue */
	/*
	 * A descriptor held so that one stays free for /proc: channels are
	 * opened until EMFILE, and a rescan that cannot open /proc/PID/task
	 * would leave threads born since (FORK records lost, or read while
	 * no descriptor was free) neither watched nor counted, and a target
	 * without channels taken for dead.  Released around each /proc
	 * access (collector_proc_begin/end); -1 while released.
	 */
	int spare_fd;
};

struct collector_drain {
	struct collector *c;
	struct channel *ch;
	uint64_t period;	/* in force for this drain's samples */
	bool task;		/* draining the task ring */
};

static double
collector_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t
collector_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t
collector_now_ns(void)
{
	return collector_clock_ns(CLOCK_MONOTONIC);
}

/* Frees the spare descriptor for a /proc access on this thread. */
static void
collector_proc_begin(struct collector *c)
{
	if (c->spare_fd >= 0)
		close(c->spare_fd);
	c->spare_fd = -1;
}

/* Takes the spare descriptor back, so channels cannot use it up. */
static void
collector_proc_end(struct collector *c)
{
	if (c->spare_fd < 0)
		c->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static struct target *
collector_find_target(struct collector *c, pid_t pid)
{
	for (size_t i = 0; i < c->n_targets; i++)
		if (c->targets[i].pid == pid)
			return &c->targets[i];
	return NULL;
}

static struct target *
collector_add_target(struct collector *c, pid_t pid, bool launched)
{
	struct target *t = collector_find_target(c, pid), *n;

	if (t)
		return t;
	n = realloc(c->targets, (c->n_targets + 1) * sizeof(*n));
	if (!n)
		return NULL;
	c->targets = n;
	t = &c->targets[c->n_targets++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->alive = true;
	t->launched = launched;
	collector_proc_begin(c);
	if (procfs_comm(pid, t->comm, sizeof(t->comm)) < 0)
		snprintf(t->comm, sizeof(t->comm), "?");
	collector_proc_end(c);
	return t;
}

/*
 * MEMTOP_RING_PAGES=N (a power of two, at least 2: a channel maps no
 * smaller ring) replaces the ring size, so tests and benchmarks can force
 * losses and check that each is counted.
 */
static unsigned
collector_ring_pages(unsigned pages)
{
	const char *env = getenv("MEMTOP_RING_PAGES");
	unsigned long v;
	char *end;

	if (!env || !*env)
		return pages;
	v = strtoul(env, &end, 10);
	if (*end || v < 2 || v > (1ul << 20) || (v & (v - 1)))
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
	c->child_wstatus = -1;
	c->spare_fd = -1;
	collector_proc_end(c);
	if (cfg->resolve_nodes) {
		c->nodemap = nodemap_new();
		if (!c->nodemap) {
			ret = -ENOMEM;
			goto out_oom;
		}
	}
	ret = aggr_init(&c->aggr, cfg->topo, c->nodemap,
			cfg->page_shift ? cfg->page_shift : 12, cfg->max_pages);
	if (ret < 0)
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
	collector_free(c);
	return ret;
}

void
collector_free(struct collector *c)
{
	if (!c)
		return;
	if (c->started)
		collector_join(c);
	chanset_free(c->cs);
	aggr_fini(&c->aggr);
	nodemap_free(c->nodemap);
	physnode_free(c->physnode);
	migrate_free(c->migrate);
	lathist_free(c->lat);
	free(c->targets);
	collector_proc_begin(c);
	free(c);
}

struct collector_scan {
	struct collector *c;
	pid_t pid;
	enum chanset_start start;
	int first_err;
	char *err;		/* first failure's message; may be NULL */
	size_t errlen;
	unsigned opened;
	unsigned failed;	/* threads left without a channel */
};

static void
collector_scan_thread(pid_t tid, void *ctx)
{
	struct collector_scan *s = ctx;
	char msg[256];
	int ret;

	/* Inherited per-CPU channels already cover every thread. */
	if (s->c->inherit || chanset_find(s->c->cs, tid))
		return;
	ret = chanset_add_thread(s->c->cs, s->pid, tid, s->start, msg,
				 sizeof(msg));
	if (ret == 0) {
		s->opened++;
		return;
	}
	/* A thread exiting while we open it is normal. */
	if (ret == -ESRCH || ret == -ENOENT || ret == -EEXIST)
		return;
	s->failed++;
	if (!s->first_err) {
		s->first_err = ret;
		if (s->err)
			snprintf(s->err, s->errlen, "%s", msg);
	}
}

/*
 * Records how many of t's threads a scan left without a channel.  Failed
 * opens are retried on every rescan, so the log gets a line when the
 * count changes, not one per thread per retry.
 */
static void
collector_note_unwatched(struct target *t, const struct collector_scan *s)
{
	if (s->failed && s->failed != t->told)
		log_msg("pid %d: %u thread(s) not watched: %s", (int)t->pid,
			s->failed, s->err ? s->err : strerror(-s->first_err));
	else if (!s->failed && t->told)
		log_msg("pid %d: every thread watched again", (int)t->pid);
	t->unwatched = t->told = s->failed;
}

/* After a full scan of t's threads (not a FORK record's one thread). */
static void
collector_scanned(struct target *t, const struct collector_scan *s)
{
	collector_note_unwatched(t, s);
	t->scanned_ns = collector_now_ns();
}

static void
collector_count_thread(pid_t tid, void *ctx)
{
}

/*
 * Unprivileged rings come out of a small locked-memory allowance: the
 * first threads' full-size rings would use it up and leave later threads
 * unwatched (EPERM).  Sizes rings so that every thread present now fits,
 * twice over, before opening any.  Without a limit, COLLECTOR_RING_CAP_PAGES
 * plays its part, so a process of thousands of threads does not pin
 * gigabytes.
 */
static void
collector_size_rings(struct collector *c, pid_t pid)
{
	unsigned long budget = rlimits_ring_budget();
	unsigned want = chanset_ring_pages(c->cs), pages;
	bool capped = budget == 0;
	int n;

	/* rlimits_ring_pages leaves half the budget for threads to come. */
	if (capped)
		budget = 2ul * COLLECTOR_RING_CAP_PAGES;
	n = procfs_tasks(pid, collector_count_thread, NULL);
	if (n <= 0)
		return;
	n += (int)chanset_count(c->cs);
	pages = rlimits_ring_pages(want, (unsigned)n, budget,
				   CHANNEL_TASK_MAP_PAGES);
	if (pages < want && capped) {
		chanset_set_ring_pages(c->cs, pages);
		log_msg("rings of %u pages instead of %u: %u threads share "
			"at most %u pages of rings", pages, want, (unsigned)n,
			COLLECTOR_RING_CAP_PAGES);
	} else if (pages < want) {
		chanset_set_ring_pages(c->cs, pages);
		log_msg("rings of %u pages instead of %u: %u threads and "
			"%lu pages of locked memory (RLIMIT_MEMLOCK, "
			"kernel.perf_event_mlock_kb)", pages, want, (unsigned)n,
			budget);
	}
}

int
collector_attach_pid(struct collector *c, pid_t pid, char *err,
		     size_t errlen)
{
	struct collector_scan s = { .c = c, .pid = pid, .err = err,
				    .errlen = errlen };
	struct target *t;
	int n, kt;

	collector_proc_begin(c);
	kt = procfs_is_kthread(pid);
	if (kt == 1) {
		collector_proc_end(c);
		snprintf(err, errlen, "pid %d is a kernel thread: it has no "
			 "user memory to watch", (int)pid);
		return -EINVAL;
	}
	collector_size_rings(c, pid);
	n = procfs_tasks(pid, collector_scan_thread, &s);
	collector_proc_end(c);
	if (n < 0) {
		snprintf(err, errlen, "pid %d: %s", (int)pid,
			 n == -ESRCH ? "no such process" : strerror(-n));
		return n;
	}
	if (s.opened == 0) {
		if (!s.first_err)
			snprintf(err, errlen, "pid %d: no thread could be "
				 "watched (process exiting?)", (int)pid);
		return s.first_err ? s.first_err : -ESRCH;
	}
	t = collector_add_target(c, pid, false);
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	collector_scanned(t, &s);
	/* Watching some threads is a success: err must not linger. */
	err[0] = '\0';
	return 0;
}

int
collector_attach_child(struct collector *c, pid_t pid, char *err,
		       size_t errlen)
{
	int ret, n_cpus = topo_n_cpus(c->cfg.topo), opened = 0;

	if (!c->cfg.inherit_launched) {
		ret = chanset_add_thread(c->cs, pid, pid,
					 CHANSET_START_ON_EXEC, err, errlen);
		if (ret < 0)
			return ret;
	} else {
		for (int cpu = 0; cpu < n_cpus; cpu++) {
			ret = chanset_add_cpu(c->cs, pid, cpu,
					      CHANSET_START_ON_EXEC, err,
					      errlen);
			/* ENODEV: an offline CPU. */
			if (ret < 0 && ret != -ENODEV)
				return ret;
			opened += ret == 0;
		}
		if (!opened)
			return -ENODEV;
		c->inherit = true;
	}
	if (!collector_add_target(c, pid, true)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* CPU time of the calling thread (the collector), ns. */
static uint64_t
collector_cpu_ns(void)
{
	return collector_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Brings the next rescan to within COLLECTOR_POLL_MS. */
static void
collector_rescan_soon(struct collector *c)
{
	double soon = collector_now() + COLLECTOR_POLL_MS / 1000.0;

	if (soon < c->next_rescan)
		c->next_rescan = soon;
}

/* FORK: a new thread of a target, or a child process of one. */
static void
collector_on_fork(struct collector *c, const struct record_task *t)
{
	char msg[256];
	struct collector_scan s = { .c = c, .pid = (pid_t)t->pid, .err = msg,
				    .errlen = sizeof(msg) };
	struct target *owner;
	uint64_t now;

	if (!collector_find_target(c, (pid_t)t->pid)) {
		if (t->pid == t->tid &&
		    collector_find_target(c, (pid_t)t->ppid)) {
			struct target *child;

			child = collector_add_target(c, (pid_t)t->pid, false);
			if (!child)
				return;
			child->followed = true;
		} else {
			return;
		}
	}
	if (c->inherit)
		return;
	collector_scan_thread((pid_t)t->tid, &s);
	owner = collector_find_target(c, (pid_t)t->pid);
	if (s.failed && owner && t->time > owner->scanned_ns &&
	    !owner->told) {
		/* Born after the last scan, so not counted yet; the first
		 * thread left out is told at once. */
		s.failed += owner->unwatched;
		collector_note_unwatched(owner, &s);
	} else if (s.failed) {
		/* Counted here when born after the last scan; otherwise the
		 * scan may have counted it already (its FORK record read
		 * after the scan).  Either way a rescan brought forward
		 * counts exactly and logs the new count once, not a line per
		 * failed birth of a burst. */
		if (owner && t->time > owner->scanned_ns)
			owner->unwatched += s.failed;
		collector_rescan_soon(c);
	}
	/* FORK times are CLOCK_MONOTONIC (use_clockid). */
	now = collector_now_ns();
	if (s.opened && now > t->time) {
		uint64_t gap = now - t->time;

		c->follow.threads++;
		c->follow.gap_sum_ns += gap;
		if (gap > c->follow.gap_max_ns)
			c->follow.gap_max_ns = gap;
	}
}

/* Counts what the channel lost and was not counted yet (channel.h). */
static void
collector_count_lost(struct collector *c, struct channel *ch)
{
	uint64_t lost = ch->lost_records > ch->lost_read ? ch->lost_records :
							  ch->lost_read;

	if (lost > ch->lost_counted) {
		aggr_count_lost(&c->aggr, lost - ch->lost_counted);
		ch->lost_counted = lost;
	}
}

/* After a drain: the events' own lost counts, for what no LOST record
 * has reported yet.  At every frame and before a channel closes. */
static void
collector_sync_lost(struct collector *c, struct channel *ch)
{
	if (channel_read_lost(ch) == 0)
		collector_count_lost(c, ch);
}

static int
collector_on_record(const struct perf_event_header *hdr, void *ctx)
{
	struct collector_drain *d = ctx;
	struct collector *c = d->c;
	struct record_task task;
	uint64_t n;

	if (c->cfg.recorder)
		recorder_record(c->cfg.recorder, d->ch, hdr);
	switch (hdr->type) {
	case PERF_RECORD_SAMPLE:
		if (ingest_sample(&c->ingest, d->ch, hdr, d->period) ==
		    -EINVAL)
			c->bad_records++;
		break;
	case PERF_RECORD_LOST:
		if (record_parse_lost(hdr, &n) != 0)
			break;
		if (d->task) {
			aggr_count_lost(&c->aggr, n);
			/* FORK records among them: find their threads now. */
			collector_rescan_soon(c);
		} else {
			d->ch->lost_records += n;
			collector_count_lost(c, d->ch);
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
		if (record_parse_task(hdr, &task) == 0)
			collector_on_fork(c, &task);
		break;
	case PERF_RECORD_EXIT:
		if (record_parse_task(hdr, &task) == 0 &&
		    (pid_t)task.tid == d->ch->tid)
			d->ch->hup = true;
		break;
	case PERF_RECORD_COMM: {
		struct record_layout l;
		struct record_id rid;
		uint32_t pid, tid;
		char comm[16];
		struct target *t;

		if (record_parse_comm(hdr, &pid, &tid, comm) != 0 ||
		    pid != tid || !(t = collector_find_target(c, (pid_t)pid)))
			break;
		/* The trailer's time (sample_id_all); 0 without one. */
		source_layout(&d->ch->src->events[0], &l);
		if (record_parse_id(&l, hdr, 8, &rid) != 0)
			rid.time = 0;
		if (rid.time >= t->comm_time) {
			memcpy(t->comm, comm, sizeof(t->comm));
			t->comm_time = rid.time;
		}
		break;
	}
	default:
		c->unknown_records++;
		break;
	}
	return 0;
}

static void
collector_drain(struct collector *c, struct channel *ch)
{
	struct collector_drain d = { .c = c, .ch = ch,
				     .period = chanset_period(c->cs) };
	struct ring_stats st = { 0 };

	/* Task records first: a FORK opens the new thread's channel before
	 * more of the parent's samples are read. */
	if (ch->task_map) {
		d.task = true;
		ring_drain(&ch->task_ring, collector_on_record, &d, &st);
		d.task = false;
	}
	if (c->cfg.recorder) {
		ring_drain(&ch->ring, collector_on_record, &d, &st);
	} else {
		/* Samples without a callback each; the rest as above. */
		uint64_t bad = c->ingest.stats.bad;

		ingest_drain(&c->ingest, ch, &ch->ring, chanset_period(c->cs),
			     collector_on_record, &d, &st);
		c->bad_records += c->ingest.stats.bad - bad;
	}
	if (st.bad_size) {
		/* A skipped stretch of ring held records we cannot count
		 * exactly; count at least one lost record per skip. */
		aggr_count_lost(&c->aggr, st.bad_size);
		log_msg("tid %d: %llu malformed record header(s), %llu bytes "
			"skipped", (int)ch->tid,
			(unsigned long long)st.bad_size,
			(unsigned long long)st.skipped_bytes);
	}
}

/* Drains every ring, then closes the channels of exited threads. */
static void
collector_drain_all(struct collector *c)
{
	for (size_t i = 0; i < chanset_count(c->cs); i++) {
		collector_drain(c, chanset_at(c->cs, i));
		collector_sync_lost(c, chanset_at(c->cs, i));
	}
	for (size_t i = chanset_count(c->cs); i-- > 0;) {
		struct channel *ch = chanset_at(c->cs, i);

		if (ch->hup)
			chanset_remove(c->cs, ch);
	}
	aggr_flush(&c->aggr);
}

static void
collector_reap(struct collector *c, struct target *t)
{
	int status;

	if (!t->launched)
		return;
	if (waitpid(t->pid, &status, WNOHANG) == t->pid) {
		c->child_wstatus = status;
		t->alive = false;
		t->launched = false;
	}
}

/* Updates liveness and opens channels for threads FORK records missed. */
static void
collector_rescan(struct collector *c)
{
	for (size_t i = 0; i < c->n_targets; i++) {
		struct target *t = &c->targets[i];
		char msg[256];
		struct collector_scan s = { .c = c, .pid = t->pid, .err = msg,
					    .errlen = sizeof(msg) };
		char state;
		int n;

		if (!t->alive)
			continue;
		collector_reap(c, t);
		if (!t->alive)
			continue;
		collector_proc_begin(c);
		/* 0: gone, or /proc unreadable, which the listing tells. */
		state = procfs_state(t->pid);
		n = -ESRCH;
		if (state != 'Z' && state != 'X')
			n = procfs_tasks(t->pid, collector_scan_thread, &s);
		collector_proc_end(c);
		if (n == -ESRCH) {
			if (chanset_count_pid(c->cs, t->pid) == 0)
				t->alive = false;
			continue;
		}
		if (n < 0 && n != t->scan_err)
			log_msg("pid %d: cannot list its threads: %s; threads "
				"born since the last scan may be neither "
				"watched nor counted", (int)t->pid,
				strerror(-n));
		t->scan_err = n < 0 ? n : 0;
		if (n >= 0) {
			t->threads = (uint32_t)n;
			collector_scanned(t, &s);
		}
	}
}

static bool
collector_all_exited(struct collector *c)
{
	for (size_t i = 0; i < c->n_targets; i++)
		if (c->targets[i].alive)
			return false;
	return true;
}

/*
 * IOC_PERIOD does not reach inherited copies, so a period change moves a
 * launched command to per-thread channels: open them disabled at the new
 * period, stop the inherited ones (DISABLE reaches the copies), then
 * enable.  Samples in between are missed, none counted twice.
 */
static int
collector_leave_inherit(struct collector *c, uint64_t period)
{
	if (period == 0)
		return -EINVAL;
	chanset_set_default_period(c->cs, period);
	c->inherit = false;
	for (size_t i = 0; i < c->n_targets; i++) {
		char msg[256];
		struct collector_scan s = { .c = c, .pid = c->targets[i].pid,
					    .start = CHANSET_START_DISABLED,
					    .err = msg, .errlen = sizeof(msg) };
		int n;

		if (!c->targets[i].alive)
			continue;
		collector_proc_begin(c);
		n = procfs_tasks(s.pid, collector_scan_thread, &s);
		collector_proc_end(c);
		if (n >= 0)
			collector_scanned(&c->targets[i], &s);
	}
	chanset_enable(c->cs, false, CHANSET_CPUS);
	for (size_t i = 0; i < chanset_count(c->cs); i++) {
		struct channel *ch = chanset_at(c->cs, i);

		if (ch->cpu >= 0) {
			collector_drain(c, ch);
			ch->hup = true;
		}
	}
	log_msg("period %llu: moved to per-thread channels",
		(unsigned long long)period);
	return c->paused ? 0 : chanset_enable(c->cs, true, CHANSET_THREADS);
}

static void
collector_apply(struct collector *c, const struct cmd *cmd)
{
	uint64_t period;
	int ret = 0;

	switch (cmd->type) {
	case CMD_SET_PERIOD:
		/* What the PMU accepts (IBS: multiple of 16, >= 0x90); the
		 * header shows the period in force. */
		period = cmd->value ? source_period(c->cfg.src, cmd->value) : 0;
		if (c->inherit) {
			ret = collector_leave_inherit(c, period);
			break;
		}
		ret = chanset_set_period(c->cs, period);
		if (ret < 0)
			log_msg("period %llu refused: %s",
				(unsigned long long)period,
				strerror(-ret));
		break;
	case CMD_PAUSE:
	case CMD_RESUME:
	case CMD_TOGGLE_PAUSE:
		if (cmd->type == CMD_PAUSE)
			c->paused = true;
		else if (cmd->type == CMD_RESUME)
			c->paused = false;
		else
			c->paused = !c->paused;
		ret = chanset_enable(c->cs, !c->paused, CHANSET_ALL);
		break;
	case CMD_RESET:
		collector_drain_all(c);
		aggr_reset(&c->aggr);
		break;
	case CMD_SORT:
		if (cmd->value < SORT__COUNT)
			c->cfg.sort = (enum sort_key)cmd->value;
		break;
	case CMD_SET_TOP:
		if (cmd->value > 0 && cmd->value <= 100000)
			c->cfg.top_k = (size_t)cmd->value;
		break;
	case CMD_QUIT:
		c->quit = true;
		break;
	case CMD_SET_GRANULARITY:
		ret = granularity_apply(&c->aggr, (unsigned)cmd->value,
					c->cfg.max_pages);
		break;
	case CMD_MIGRATE:
		if (cmd->addr)
			migrate_page(c->migrate, &c->aggr, cmd->pid, cmd->addr);
		else
			migrate_top(c->migrate, &c->aggr, (size_t)cmd->value);
		break;
	case CMD_REPLAY_FASTER:
	case CMD_REPLAY_SLOWER:
	case CMD_REPLAY_END:
		break;		/* replay only */
	}
	if (ret < 0)
		log_msg("command %d: %s", (int)cmd->type, strerror(-ret));
}

/*
 * Applies the commands queued now, not those pushed meanwhile: a UI that
 * keeps pushing must not keep the collector from draining and publishing.
 * The queue's eventfd stays readable while commands remain, so the rest
 * wait for the next pass of the loop.
 */
static void
collector_commands(struct collector *c)
{
	size_t n = queue_len(c->cfg.cmds);
	struct cmd cmd;

	while (n-- > 0 && queue_pop(c->cfg.cmds, &cmd) == 0)
		collector_apply(c, &cmd);
}

static int
collector_publish(struct collector *c, struct frame *f)
{
	while (queue_push(c->cfg.frames, &f) == -EAGAIN) {
		if (!c->cfg.batch) {
			frame_free(f);
			c->skipped++;
			return 0;
		}
		/* Batch never skips: wait for the writer, and keep the
		 * command queue serviced so a quit still gets through. */
		usleep(10000);
		collector_commands(c);
	}
	return 0;
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
	struct frame_target *ft;
	struct frame_meta m = { 0 };
	struct frame *f;
	uint64_t seq;
	int status = -1, ret;

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
	m.seq = ++c->seq;
	m.time = now - c->t0;
	m.interval = now - c->interval_start;
	m.final = final;
	m.paused = c->paused;
	m.source = src->name;
	m.events = events;
	m.n_events = src->n_events;
	m.source_note = src->note;
	m.has_kinds = src->has_kinds;
	m.period = chanset_period(c->cs);
	m.sort = c->cfg.sort;
	m.top_k = c->cfg.top_k;
	m.targets = ft;
	m.n_targets = c->n_targets;
	m.exit_status = status;
	m.error = c->error[0] ? c->error : NULL;
	/* Naming reads /proc/PID/maps and the mapped files. */
	collector_proc_begin(c);
	f = frame_build(&c->aggr, &m);
	collector_proc_end(c);
	free(ft);
	if (!f)
		return -ENOMEM;
	collector_prune_targets(c);
	f->skipped = c->skipped;
	c->skipped = 0;
	snprintf(f->follow_mode, sizeof(f->follow_mode), "%s",
		 c->inherit ? "inherit" : "per-thread");
	f->follow_threads = c->follow.threads;
	f->follow_gap_max_us = c->follow.gap_max_ns / 1000;
	f->collector_cpu_ns = collector_cpu_ns() - c->cpu_at_interval;
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
	seq = f->seq;
	ret = collector_publish(c, f);
	if (c->lat)
		lathist_publish(c->lat, seq, collector_now_ns());
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

static void *
collector_main(void *arg)
{
	struct collector *c = arg;
	struct epoll_event evs[COLLECTOR_MAX_EVENTS];
	double now = collector_now();
	double next_frame, next_sweep;
	int ret = 0;

	c->t0 = c->interval_start = now;
	c->cpu_at_interval = collector_cpu_ns();
	collector_rescan(c);
	next_frame = now + c->cfg.interval_s;
	c->next_rescan = now + COLLECTOR_RESCAN_MS / 1000.0;
	next_sweep = now + COLLECTOR_POLL_MS / 1000.0;
	for (;;) {
		bool final, cmds_ready, frame_due;
		double wake = next_frame < c->next_rescan ? next_frame :
							    c->next_rescan;
		int n, timeout;

		/* Without channels, only a rescan tells the target's exit
		 * (or a new thread): poll as often as the sweep. */
		if ((chanset_n_untasked(c->cs) || chanset_count(c->cs) == 0) &&
		    next_sweep < wake)
			wake = next_sweep;
		timeout = collector_ms_until(now, wake);
		n = chanset_wait(c->cs, evs, COLLECTOR_MAX_EVENTS, timeout);
		if (n < 0) {
			snprintf(c->error, sizeof(c->error), "epoll_wait: %s",
				 strerror(-n));
			c->quit = true;
			n = 0;
		}
		cmds_ready = false;
		for (int i = 0; i < n; i++) {
			struct channel *ch;

			if (evs[i].data.ptr == &c->cmd_tag) {
				cmds_ready = true;
				continue;
			}
			ch = evs[i].data.ptr;
			/* POLLHUP comes without POLLIN even with data
			 * pending: always drain. */
			collector_drain(c, ch);
			if (evs[i].events & (EPOLLHUP | EPOLLERR))
				ch->hup = true;
		}
		/* Only after every event: a command (reset, a period change
		 * leaving inherit mode) may close channels that later events
		 * of the same batch point to. */
		if (cmds_ready)
			collector_commands(c);
		now = collector_now();
		frame_due = now >= next_frame;
		/* Rings whose FORK records wake nobody (no task ring): sweep
		 * them each poll period, so a new thread's channel opens
		 * within COLLECTOR_POLL_MS however quiet its siblings are. */
		if (now >= next_sweep) {
			for (size_t i = 0; i < chanset_count(c->cs); i++) {
				struct channel *ch = chanset_at(c->cs, i);

				if (channel_tasks_in_ring(ch))
					collector_drain(c, ch);
			}
			next_sweep = now + COLLECTOR_POLL_MS / 1000.0;
		}
		/* A frame's wakeup takes along a rescan that would come due
		 * before the next frame: one wakeup instead of two, and the
		 * rescans stay at most COLLECTOR_RESCAN_MS apart. */
		if (now >= c->next_rescan || chanset_count(c->cs) == 0 ||
		    (frame_due && c->next_rescan < now + c->cfg.interval_s)) {
			collector_rescan(c);
			c->next_rescan = now + COLLECTOR_RESCAN_MS / 1000.0;
		}
		final = c->quit || collector_all_exited(c);
		if (final || frame_due) {
			collector_drain_all(c);
			if (!final && chanset_count(c->cs) == 0) {
				collector_rescan(c);
				final = collector_all_exited(c);
			}
			ret = collector_emit(c, now, final);
			if (ret < 0 || final)
				break;
			next_frame += c->cfg.interval_s;
			if (next_frame < now)
				next_frame = now + c->cfg.interval_s;
		} else {
			/* Closes channels whose thread exited. */
			for (size_t i = chanset_count(c->cs); i-- > 0;) {
				struct channel *ch = chanset_at(c->cs, i);

				if (ch->hup) {
					collector_drain(c, ch);
					collector_sync_lost(c, ch);
					chanset_remove(c->cs, ch);
				}
			}
			/* The last thread gone: is the target too? */
			if (chanset_count(c->cs) == 0)
				c->next_rescan = now;
		}
	}
	c->result = ret;
	return NULL;
}

int
collector_start(struct collector *c)
{
	int ret = pthread_create(&c->thread, NULL, collector_main, c);

	if (ret)
		return -ret;
	/* So perf --tid, top -H and bench-live.py can tell it from the UI
	 * and writer threads.  Best effort. */
	pthread_setname_np(c->thread, "memtop-collect");
	c->started = true;
	return 0;
}

int
collector_join(struct collector *c)
{
	if (c->started) {
		pthread_join(c->thread, NULL);
		c->started = false;
	}
	return c->result;
}

int
collector_child_wstatus(const struct collector *c)
{
	return c->child_wstatus;
}
