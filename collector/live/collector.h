/*
 * The collector thread: owns the perf fds, the rings, epoll, the page
 * table and the topology caches.  It drains the rings, applies commands
 * from the UI between drains, and publishes one frame per interval.
 *
 * Setup (collector_new, collector_attach_*) runs on the main thread; then
 * its producer (collector_producer) is started, joined and freed like
 * replay's (producer.h), and only the collector thread touches it in
 * between.
 */
#ifndef MEMTOP_COLLECTOR_H
#define MEMTOP_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapopt.h"
#include "heapprobe.h"
#include "sortkey.h"

struct cpulist;
struct perfdata_writer;
struct producer;
struct queue;
struct source;
struct topo;
struct collector;

/* How new threads are caught: time from a thread's creation (its FORK
 * record) to its channel being open, in per-thread mode. */
struct collector_follow {
	uint64_t threads;	/* threads opened from FORK records */
	uint64_t gap_max_ns;
	uint64_t gap_sum_ns;
};

/* What -a, -G and -C resolve to (collector/live/scope.c). */
struct collector_scope {
	int *cgroup_fds;		/* -G: each cgroup's directory */
	size_t n_cgroups;
	bool v2;			/* the cgroups are cgroup2 ones */
	const struct cpulist *cpus;	/* -C, borrowed; NULL = every CPU */
	char *name;			/* "all CPUs", "cgroup /x", "CPUs 0-3" */
};

struct collector_config {
	const struct source *src;	/* outlives the collector */
	const struct topo *topo;	/* outlives the collector */
	uint64_t period;
	double interval_s;
	size_t top_k;			/* pages per frame */
	enum sort_key sort;
	size_t max_pages;		/* 0 = unlimited */
	unsigned page_shift;		/* page aggregation 12, 21, 30; 0 = 12 */
	unsigned ring_pages;		/* data pages per thread ring */
	bool batch;			/* never skip frames: wait for room */
	bool resolve_nodes;		/* ask move_pages for page nodes */
	size_t migrate_hot;		/* pages moved after each frame; 0 = off */
	bool inherit_launched;		/* launched command: per-CPU inherit */
	struct queue *frames;		/* out: struct frame * */
	struct queue *cmds;		/* in: struct cmd */
	/* --record: every drained record goes here too; NULL = off. */
	struct perfdata_writer *recorder;
	/* -a, -G (collector_attach_system): what they resolved to; it
	 * outlives the collector.  NULL otherwise. */
	const struct collector_scope *scope;
	size_t max_processes;		/* process rows; 0 = the default */
	/* --rearm: soft-dirty re-arm of the targets (collector/live/rearm.c)
	 * at every frame (rearm_s < 0) or every rearm_s seconds; 0 = off. */
	double rearm_s;
	/* --heap-objects (heapprobe.h): the options, and the cost of one
	 * allocation measured by heapprobe_prepare. */
	struct heap_opts heap;
	struct heap_cost heap_cost;
};

/*
 * Whether a launched command may be followed through per-CPU inherited
 * channels: not on a hybrid machine (cpu_atom events cannot open on
 * P-cores), and not with heap probes (an allocation's entry and return
 * must be read in order: one ring per thread).
 */
bool collector_inherit_ok(const struct source *src);

int collector_new(struct collector **out, const struct collector_config *cfg,
		  char *err, size_t errlen);
/* The frame producer: producer_start, producer_join, producer_free (which
 * closes everything). */
struct producer *collector_producer(struct collector *c);

/*
 * Watches process pid: a channel for every thread listed in /proc/PID/task
 * now, later ones through FORK records and rescans.  0 or -errno with a
 * one-line reason.
 */
int collector_attach_pid(struct collector *c, pid_t pid, char *err,
			 size_t errlen);

/*
 * Main thread, before the collector: finds the hierarchy perf_event_open
 * takes cgroups from, opens each -G cgroup's directory, checks -C's CPUs
 * exist, and names the scope.  0; -EINVAL for what the user must change
 * (overlapping cgroups, a CPU the machine lacks: a usage error); other
 * -errno (-ENOENT: no such cgroup, or no cgroup mount) with a one-line
 * reason.  Release with collector_scope_fini (NULL-safe fields).
 */
int collector_scope_resolve(struct collector_scope *s,
			    const char *const *cgroups, size_t n_cgroups,
			    const struct cpulist *cpus, char *err,
			    size_t errlen);
void collector_scope_fini(struct collector_scope *s);

/*
 * Watches every process (or those of cfg->cgroup_fds) on every online CPU
 * of cfg->cpus through system channels (collector/live/system.c); CPUs
 * going offline and online later are followed at each rescan.  0 or
 * -errno with a one-line reason (permissions: what is needed).
 */
int collector_attach_system(struct collector *c, char *err, size_t errlen);
/* Watches a launched child held before exec: its events start at exec.
 * The collector reaps it and reports its exit status. */
int collector_attach_child(struct collector *c, pid_t pid, char *err,
			   size_t errlen);

/* After join: the launched child's wait status, or -1 if it was not
 * reaped (still running: the caller kills and reaps it). */
int collector_child_wstatus(const struct collector *c);

#endif
