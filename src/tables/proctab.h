/*
 * Process table: one row per sampled process (pid), with this interval's
 * counts by kind, by locality and by memory node, and what names it.
 * Collector thread only.
 *
 * Bounded: at most `max` rows; a sample of a process that finds the table
 * full counts in the sink row (proctab_sink), which the frame reports as
 * untracked, so every sample still lands in exactly one row.  Rows are
 * heap objects that stay put while the table grows, so the aggregation may
 * keep a row's pointer for the length of a batch (src/aggr/aggr.c); rows
 * are only removed between batches (proctab_remove, at a frame).
 *
 * Keyed by pid alone: what tells a reused pid from its old process (the
 * start time, EXIT records) is the aggregation's business
 * (src/aggr/aggr_procs.c).
 */
#ifndef MEMTOP_PROCTAB_H
#define MEMTOP_PROCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* struct proc_entry.flags */
#define PROC_INFO	1u	/* start time and cgroup read (or tried) */
#define PROC_NAMED	2u	/* comm known (COMM record, fork, /proc) */
#define PROC_EXITED	4u	/* dead as of the frame being built */
#define PROC_UNKNOWN	8u	/* /proc gone or unreadable when first read */
#define PROC_SAMPLED	16u	/* had a sample since insert or reset */
#define PROC_VIRTUAL	32u	/* no process of /proc: never read there */

/* lr[] of struct proc_entry: a sample's locality, as the frame's node
 * matrix sees it. */
enum proc_locality {
	PROC_LOC_UNKNOWN = 0,	/* CPU or page node unknown */
	PROC_LOC_REMOTE = 1,	/* page on another node than the CPU */
	PROC_LOC_LOCAL = 2,	/* page on the CPU's node */
};

struct proc_entry {
	int32_t pid;
	uint32_t flags;
	/* This interval: by enum sample_kind, by enum proc_locality. */
	uint64_t kinds[3];
	uint64_t lr[3];
	uint64_t total;		/* samples of earlier intervals, since reset */
	uint64_t start_time;	/* /proc/PID/stat starttime; 0 unknown */
	uint64_t comm_time;	/* time of the COMM record comm came from */
	/* When it was known dead (its EXIT record's time, or when /proc
	 * said so); 0 while it runs.  CLOCK_MONOTONIC ns. */
	uint64_t dead_ns;
	uint32_t idle;		/* frames in a row without samples */
	uint32_t threads;	/* frame building: threads with samples */
	char comm[16];
	char *cgroup;		/* heap; NULL unknown */
	/* This interval, by memory node: [0] page node unknown, [i + 1]
	 * node index i; n_nodes + 1 of them. */
	uint64_t nodes[];
};

struct proctab;

/* n_nodes >= 1; max >= 1 rows.  NULL on ENOMEM. */
struct proctab *proctab_new(int n_nodes, size_t max);
void proctab_free(struct proctab *t);	/* NULL-safe */

/* The row of pid, inserted (zeroed) when absent; the sink when the table
 * is full or out of memory (*inserted false).  inserted may be NULL. */
struct proc_entry *proctab_get(struct proctab *t, int32_t pid,
			       bool *inserted);
/* The row of pid, or NULL. */
struct proc_entry *proctab_find(struct proctab *t, int32_t pid);
/* Where samples of processes without a row go. */
struct proc_entry *proctab_sink(struct proctab *t);
/* Drops pid's row (not during a batch: see above). */
void proctab_remove(struct proctab *t, int32_t pid);

/* Samples of e this interval. */
static inline uint64_t
proctab_samples(const struct proc_entry *e)
{
	return e->kinds[0] + e->kinds[1] + e->kinds[2];
}

/* Every row (not the sink); fn may not insert or remove. */
void proctab_foreach(struct proctab *t,
		     void (*fn)(struct proc_entry *e, void *ctx), void *ctx);
/* The rows' pids, for a caller that removes while it walks; *n gets the
 * count.  NULL with *n 0 when empty or on ENOMEM.  Caller frees. */
int32_t *proctab_pids(const struct proctab *t, size_t *n);

/* Interval counts into totals, then zeroed (the sink's too). */
void proctab_next_interval(struct proctab *t);
/* Every count and total zeroed; rows stay. */
void proctab_reset(struct proctab *t);
size_t proctab_count(const struct proctab *t);
size_t proctab_max(const struct proctab *t);
int proctab_n_nodes(const struct proctab *t);

#endif
