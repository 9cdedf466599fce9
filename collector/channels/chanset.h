/*
 * Channel set: every channel of every target thread, and one epoll set
 * over their ring owners plus any extra fds the collector watches (the
 * command queue).  Only fds that own a ring are polled: an fd without a
 * ring reports POLLHUP at once (docs/kernel.md, "Ring buffer").
 * Collector thread only (setup may run on the main thread before the
 * collector thread starts).
 */
#ifndef MEMTOP_CHANSET_H
#define MEMTOP_CHANSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/types.h>

#include "channel.h"

struct chanset;

struct chanset_stats {
	uint64_t opened;	/* channels opened */
	uint64_t closed;	/* channels closed */
	uint64_t open_failed;	/* open attempts that failed (thread gone...) */
};

int chanset_new(struct chanset **out, const struct source *src,
		unsigned ring_pages, uint64_t period);
void chanset_free(struct chanset *cs);	/* closes every channel; NULL-safe */

enum chanset_start {
	CHANSET_START_FOLLOW,	/* enabled unless the set is paused */
	CHANSET_START_ON_EXEC,	/* enable_on_exec: a launched command */
	CHANSET_START_DISABLED,	/* the caller enables it later */
};

/* Which channels an operation applies to. */
enum chanset_which {
	CHANSET_ALL,
	CHANSET_THREADS,	/* per-thread channels */
	CHANSET_CPUS,		/* per-CPU channels (inherited or system) */
};

/*
 * Opens a per-thread channel for (pid, tid) with the set's period.
 * -EEXIST when tid already has one; other -errno with err filled.
 */
int chanset_add_thread(struct chanset *cs, pid_t pid, pid_t tid,
		       enum chanset_start start, char *err, size_t errlen);
/*
 * Opens an inherited channel for process pid on one CPU: it samples pid
 * and every thread and process it creates later, from birth.  Note that
 * PERF_EVENT_IOC_PERIOD does not reach the inherited copies.
 */
int chanset_add_cpu(struct chanset *cs, pid_t pid, int cpu,
		    enum chanset_start start, char *err, size_t errlen);
/*
 * Opens a system channel on one CPU: every process there (cgroup_fd -1,
 * -a) or those of one cgroup (-G; scope names which, for
 * chanset_find_cpu).  Not inherited, so a period change reaches it.
 * -EEXIST when (cpu, scope) has one; other -errno with err filled
 * (-ENODEV: the CPU is offline).
 */
int chanset_add_system(struct chanset *cs, int cpu, int cgroup_fd, int scope,
		       enum chanset_start start, char *err, size_t errlen);
/* The system channel of (cpu, scope), or NULL. */
struct channel *chanset_find_cpu(struct chanset *cs, int cpu, int scope);
/* Unregisters and closes ch (after its last drain). */
void chanset_remove(struct chanset *cs, struct channel *ch);
struct channel *chanset_find(struct chanset *cs, pid_t tid);

/* Watches an extra fd; epoll events for it come back with data.ptr ==
 * tag. */
int chanset_watch_fd(struct chanset *cs, int fd, void *tag);
/* epoll_wait; channel events carry data.ptr = struct channel *. */
int chanset_wait(struct chanset *cs, struct epoll_event *evs, int max,
		 int timeout_ms);

/* Every channel, existing and future.  0 disables every channel (like
 * chanset_enable(cs, false, CHANSET_ALL)) and keeps the period. */
int chanset_set_period(struct chanset *cs, uint64_t period);
/* Only the period future channels get. */
void chanset_set_default_period(struct chanset *cs, uint64_t period);
/* Enables or disables `which` channels; for CHANSET_ALL also the state
 * future channels start in. */
int chanset_enable(struct chanset *cs, bool on, enum chanset_which which);
uint64_t chanset_period(const struct chanset *cs);

size_t chanset_count(const struct chanset *cs);
/*
 * Per-thread channels without a task ring of their own (the kernel refused
 * the dummy event): their FORK records wake nobody until the sample ring
 * reaches its watermark, so the collector must sweep them.  Per-CPU
 * inherited channels need no sweep: they cover new threads from birth.
 */
size_t chanset_n_untasked(const struct chanset *cs);
/* Channels whose thread belongs to process pid. */
size_t chanset_count_pid(const struct chanset *cs, pid_t pid);
struct channel *chanset_at(struct chanset *cs, size_t i);
const struct chanset_stats *chanset_stats(const struct chanset *cs);
unsigned chanset_ring_pages(const struct chanset *cs);
/* Data pages of rings opened from now on (a power of two, >= 2). */
void chanset_set_ring_pages(struct chanset *cs, unsigned pages);

#endif
