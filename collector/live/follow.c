/*
 * Collector: following the targets and their threads.  See
 * collector_int.h.
 *
 * A target's threads get channels when it is attached (one scan of
 * /proc/PID/task), when their FORK records are read, and at each rescan,
 * which also catches the threads FORK records missed, counts those left
 * without a channel (unwatched) and tells when a target is gone.  A
 * spare descriptor keeps one free for these /proc accesses.  Collector
 * thread only (and collector_attach_* before it starts).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collector_int.h"
#include "log.h"
#include "names.h"
#include "procfs.h"
#include "record_mmap.h"
#include "recorder.h"
#include "rlimits.h"
#include "sides.h"
#include "source.h"
#include "topo.h"

/* Frees the spare descriptor for a /proc access on this thread. */
void
collector_proc_begin(struct collector *c)
{
	if (c->spare_fd >= 0)
		close(c->spare_fd);
	c->spare_fd = -1;
}

/* Takes the spare descriptor back, so channels cannot use it up. */
void
collector_proc_end(struct collector *c)
{
	if (c->spare_fd < 0)
		c->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

struct target *
collector_find_target(struct collector *c, pid_t pid)
{
	for (size_t i = 0; i < c->n_targets; i++)
		if (c->targets[i].pid == pid)
			return &c->targets[i];
	return NULL;
}

struct target *
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

void
collector_scan_thread(pid_t tid, void *ctx)
{
	struct collector_scan *s = ctx;
	char msg[256];
	int ret;

	/* Inherited per-CPU channels already cover every thread; DAMON
	 * watches the process, with no channel. */
	if (s->c->cfg.src->damon) {
		s->opened++;
		return;
	}
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
 * count changes, not one per thread per retry: the first thread left out
 * at once, a later count once two scans agree on it (scans come quickly
 * while a burst of threads is born, and a second apart after it).
 */
static void
collector_note_unwatched(struct target *t, const struct collector_scan *s)
{
	bool settled = !t->told || s->failed == t->settling;

	t->unwatched = s->failed;
	t->settling = s->failed;
	if (s->failed == t->told || !settled)
		return;
	if (s->failed)
		log_msg("pid %d: %u thread(s) not watched: %s", (int)t->pid,
			s->failed, s->err ? s->err : strerror(-s->first_err));
	else
		log_msg("pid %d: every thread watched again", (int)t->pid);
	t->told = s->failed;
}

/* After a full scan of t's threads (not a FORK record's one thread). */
void
collector_scanned(struct target *t, const struct collector_scan *s)
{
	collector_note_unwatched(t, s);
	t->scanned_ns = base_now_ns();
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
	/* --record: what it had mapped before now, as perf would write. */
	if (c->cfg.recorder)
		recorder_synthesize(c->cfg.recorder, c->cfg.src,
				    chanset_find(c->cs, pid), pid);
	/* Watching some threads is a success: err must not linger. */
	err[0] = '\0';
	return 0;
}

int
collector_attach_child(struct collector *c, pid_t pid, char *err,
		       size_t errlen)
{
	int ret, n_cpus = topo_n_cpus(c->cfg.topo), opened = 0;

	if (c->cfg.src->damon) {
		/* DAMON follows the pid across exec: no channel. */
	} else if (!c->cfg.inherit_launched) {
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

/* Brings the next rescan to within COLLECTOR_POLL_MS. */
void
collector_rescan_soon(struct collector *c)
{
	double soon = base_now_s() + COLLECTOR_POLL_MS / 1000.0;

	if (soon < c->next_rescan)
		c->next_rescan = soon;
}

/* COMM: a process's name (pid == tid), for its target and its process
 * row; exec(2) also drops the names of its old image. */
void
collector_on_comm(struct collector *c, struct channel *ch,
		  const struct perf_event_header *hdr, bool task)
{
	struct record_layout l;
	struct record_id rid;
	uint32_t pid, tid;
	char comm[16];
	struct target *t;

	if (record_parse_comm(hdr, &pid, &tid, comm) != 0 || pid != tid)
		return;
	/* exec(2): same pid, new address space.  Any watched pid, a
	 * followed child's too; only names are dropped here (pages
	 * and code sites stay, keyed by pid). */
	/* The trailer's time (sample_id_all); 0 without one. */
	source_layout(&channel_events(ch)->src->events[0], &l);
	if (record_parse_id(&l, hdr, 8, &rid) != 0)
		rid.time = 0;
	if ((hdr->misc & PERF_RECORD_MISC_COMM_EXEC) && !task)
		sides_forget_pid(aggr_sides(&c->aggr), (int32_t)pid,
				 rid.time);
	aggr_proc_comm(&c->aggr, (int32_t)pid, comm, rid.time);
	if ((hdr->misc & PERF_RECORD_MISC_COMM_EXEC) && rid.time) {
		allocs_exec(&c->allocs, (int32_t)pid, rid.time);
		heapobjs_exec(&c->heap_objs, (int32_t)pid, rid.time);
	}
	t = collector_find_target(c, (pid_t)pid);
	if (t && rid.time >= t->comm_time) {
		memcpy(t->comm, comm, sizeof(t->comm));
		t->comm_time = rid.time;
	}
}

/* MMAP, MMAP2: a mapping of any watched process, for its names, with its
 * time (names.h: per-CPU rings come in no time order). */
void
collector_on_mmap(struct collector *c, struct channel *ch,
		  const struct perf_event_header *hdr)
{
	struct names *names = sides_names(aggr_sides(&c->aggr));
	struct record_layout l;
	struct record_mmap m;
	struct names_map nm;
	uint64_t time;

	if (!names || record_parse_mmap(hdr, &m) != 0)
		return;
	source_layout(&channel_events(ch)->src->events[0], &l);
	if (record_time(&l, hdr, &time) != 0)
		time = 0;
	nm = (struct names_map){
		.start = m.addr, .end = m.addr + m.len, .pgoff = m.pgoff,
		.inode = m.ino, .dev_major = m.maj, .dev_minor = m.min,
		.prot = m.prot, .shared = (m.flags & MAP_SHARED) != 0,
		.name = m.filename, .name_len = m.filename_len,
		.build_id = m.build_id, .build_id_size = m.build_id_size,
		.time = time,
	};
	names_mmap(names, (int32_t)m.pid, &nm);
}

/* FORK: a new thread of a target, or a child process of one. */
void
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
	now = base_now_ns();
	if (s.opened && now > t->time) {
		uint64_t gap = now - t->time;

		c->follow.threads++;
		c->follow.gap_sum_ns += gap;
		if (gap > c->follow.gap_max_ns)
			c->follow.gap_max_ns = gap;
	}
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
void
collector_rescan(struct collector *c)
{
	if (c->system) {
		collector_rescan_cpus(c);
		return;
	}
	for (size_t i = 0; i < c->n_targets; i++) {
		struct target *t = &c->targets[i];
		char msg[256];
		struct collector_scan s = { .c = c, .pid = t->pid, .err = msg,
					    .errlen = sizeof(msg) };
		char state, comm[sizeof(t->comm)];
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
		/* The name now, whatever records said: an exec before the
		 * target's channel opened (a child that perf stat or a
		 * shell starts) sent its COMM-exec to no ring.  Records
		 * older than this read do not undo it (the same clock). */
		if (n >= 0 && procfs_comm(t->pid, comm, sizeof(comm)) == 0) {
			memcpy(t->comm, comm, sizeof(t->comm));
			t->comm_time = base_now_ns();
		}
		collector_proc_end(c);
		if (n == -ESRCH) {
			/* The launched command is ours to reap, and ends
			 * only when waitpid() gives its status: it may have
			 * become a zombie just after collector_reap() looked,
			 * and taking it for gone then lost the status (memtop
			 * exited 0 and the final frame had no exit_status).
			 * A zombie leader whose threads still run is reaped
			 * at a later rescan. */
			if (t->launched)
				collector_reap(c, t);
			else if (chanset_count_pid(c->cs, t->pid) == 0)
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

bool
collector_all_exited(struct collector *c)
{
	/* A whole-machine view has no target to outlive: it ends on q, a
	 * signal or -n. */
	if (c->system)
		return false;
	for (size_t i = 0; i < c->n_targets; i++)
		if (c->targets[i].alive)
			return false;
	return true;
}
