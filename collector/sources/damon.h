/*
 * DAMON through its sysfs interface (docs/kernel.md, "DAMON"): a kdamond
 * of memtop's own, with one monitoring context (vaddr for processes,
 * paddr for the whole machine) and one `stat` scheme whose tried regions
 * are read back as snapshots.  Paths honour MEMTOP_SYSFS_ROOT, so the
 * unit tests drive a fake tree (tests/unit/collector/test-damon.c).
 *
 * DAMON's sysfs is shared: another user's kdamond cannot be changed
 * without stopping it, and changing nr_kdamonds removes every kdamond's
 * directory.  So memtop uses DAMON only when nr_kdamonds is 0, and never
 * writes anything when it is not.  damon_check on the main thread
 * (source selection, --list-events); damon_start and the rest on the
 * thread that owns the handle (the collector's).
 */
#ifndef MEMTOP_DAMON_H
#define MEMTOP_DAMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * One snapshot region: [start, end) accessed in nr_accesses of the
 * aggregation's sampling intervals, with that pattern for age of them,
 * of the target-th target.  The tried regions do not name their target:
 * the kernel lists them target after target, each in address order, so a
 * region starting below its predecessor opens the next target (every
 * process has its stack at the top of its address space, so a target's
 * first region starts below the last one of the target before).
 */
struct damon_region {
	uint64_t start, end;
	uint32_t nr_accesses;
	uint32_t age;
	uint32_t target;
};

struct damon_opts {
	bool paddr;		/* physical address space (-a) */
	const pid_t *pids;	/* vaddr: the processes */
	size_t n_pids;
	const uint64_t (*ranges)[2];	/* paddr: [start, end) ranges */
	size_t n_ranges;
	uint64_t sample_us;	/* accessed-bit check interval */
	uint64_t aggr_us;	/* aggregation: nr_accesses <= aggr/sample */
	uint64_t update_us;	/* operations update (new mappings) */
};

struct damon;

/*
 * Whether memtop may set up a kdamond here with the operations ops
 * ("vaddr" or "paddr"; NULL: not asked): 0; -EOPNOTSUPP (no DAMON sysfs,
 * or a kernel without those operations), -EACCES (not writable: needs
 * root), -EBUSY (kdamonds of another user exist: why names the first,
 * with its state and pid; nothing written).  The operations are asked of
 * a kdamond of memtop's own, made and removed at once (nr_kdamonds 1,
 * then 0, the second retried while DAMON's lock is taken, a failure
 * reported) once nr_kdamonds is 0 and writable: avail_operations exists
 * only in a context, and a kernel built without CONFIG_DAMON_VADDR takes
 * "vaddr" into `operations` and refuses only to start.  damon_start asks
 * its own context the same way.
 */
int damon_check(const char *ops, char *why, size_t whylen);

/* Sets up and starts memtop's kdamond.  0 or -errno with why. */
int damon_start(struct damon **out, const struct damon_opts *o, char *why,
		size_t whylen);

/*
 * Asks the kdamond for its current regions (DAMOS tried regions of the
 * stat scheme; the kernel answers after its next aggregation) and reads
 * them into *regs (realloc'd, *cap entries).  Number of regions or -errno
 * with why.
 */
int damon_snapshot(struct damon *d, struct damon_region **regs, size_t *cap,
		   char *why, size_t whylen);

/* Changes the processes of the running vaddr kdamond (commit): one
 * target per pid, in that order.  0 or -errno with why. */
int damon_set_pids(struct damon *d, const pid_t *pids, size_t n, char *why,
		   size_t whylen);

/* Changes the intervals of the running kdamond (commit). 0 or -errno. */
int damon_set_intervals(struct damon *d, uint64_t sample_us,
			uint64_t aggr_us);

/* The kdamond's pid (its CPU time is memtop's cost); -1 unknown. */
pid_t damon_kdamond_pid(const struct damon *d);

/* Stops the kdamond and removes it (nr_kdamonds 0).  NULL-safe. */
void damon_stop(struct damon *d);

#endif
