/*
 * A channel: one target thread's events sharing one mmap ring (the first
 * event owns the ring, the others are redirected into it with
 * PERF_EVENT_IOC_SET_OUTPUT).  Opened per thread with pid=tid, cpu=-1,
 * inherit=0, so PERF_EVENT_IOC_PERIOD reaches every event; or per CPU,
 * for a launched command (inherit) or for every process (system).
 * Collector thread only.
 */
#ifndef MEMTOP_CHANNEL_H
#define MEMTOP_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ring.h"
#include "source.h"

struct channel;

/* What a channel's records are decoded against: its source and, per
 * event, the PERF_EVENT_IOC_ID that a record's IDENTIFIER names. */
struct channel_events {
	const struct source *src;
	uint64_t ids[SOURCE_MAX_EVENTS];
	size_t n;		/* events opened: src->n_events */
};

/* The task ring's mapping: the header page and one data page.  Locked
 * memory like the sample ring (rlimits.h). */
#define CHANNEL_TASK_MAP_PAGES 2

struct channel_params {
	pid_t pid;
	pid_t tid;		/* per-thread: the thread; inherit: ignored */
	int cpu;		/* -1 = per thread; >= 0 = that CPU, inherit */
	/* Every process on cpu (-a), or those of one cgroup (-G): pid -1 or
	 * the cgroup directory's fd with PERF_FLAG_PID_CGROUP, no inherit,
	 * so PERF_EVENT_IOC_PERIOD reaches it.  Task records (COMM, FORK,
	 * EXIT of every task on the CPU) share the sample ring. */
	bool system;
	int cgroup_fd;		/* system: -1 = every process */
	int scope;		/* system: which cgroup (index), for lookups */
	unsigned ring_pages;	/* wanted data pages, power of two */
	uint64_t period;
	bool enable_on_exec;	/* launched command: start at exec */
	bool enable;		/* enable right away */
};

/*
 * Opens every event of src for one thread and maps the ring, halving the
 * ring down to 2 pages when RLIMIT_MEMLOCK refuses it.  0 or -errno with a
 * one-line explanation in err.
 */
int channel_open(struct channel **out, const struct source *src,
		 const struct channel_params *p, char *err, size_t errlen);
/* Unmaps and closes.  NULL-safe. */
void channel_close(struct channel *ch);

/* The fd to poll: the ring owner. */
int channel_poll_fd(const struct channel *ch);
/* Applies a new period to every event (PERF_EVENT_IOC_PERIOD); period 0
 * disables the events instead.  0 or -errno. */
int channel_set_period(struct channel *ch, uint64_t period);
/* PERF_EVENT_IOC_ENABLE / DISABLE on every event.  0 or -errno. */
int channel_enable(struct channel *ch, bool on);
/*
 * Reads every event's lost-record count (PERF_FORMAT_LOST).  Returns 0,
 * or -ENOTSUP when the kernel gives no count (before 6.0).
 */
int channel_read_lost(struct channel *ch);
/* Adds n samples the ring's LOST records reported. */
void channel_add_lost_records(struct channel *ch, uint64_t n);
/*
 * The samples lost since the last call.  The kernel reports each loss
 * twice, late in LOST records and exactly in the events' own counts
 * (channel_read_lost): the larger of the two counts, once.
 */
uint64_t channel_take_lost(struct channel *ch);

/* The event spec a record's IDENTIFIER belongs to, or NULL. */
const struct event_spec *channel_events_find(const struct channel_events *ev,
					     uint64_t id);
const struct channel_events *channel_events(const struct channel *ch);

/* The thread (-1 for a per-CPU channel), its process (-1 for a system
 * channel), the CPU (-1 for a per-thread channel). */
pid_t channel_tid(const struct channel *ch);
pid_t channel_pid(const struct channel *ch);
int channel_cpu(const struct channel *ch);
/* A system channel (-a, -G); its cgroup index, -1 otherwise. */
bool channel_system(const struct channel *ch);
int channel_scope(const struct channel *ch);
/* The sample ring; the task ring (FORK, COMM, EXIT), or NULL when the
 * channel has none (per-CPU, or the kernel refused it). */
struct ring *channel_ring(struct channel *ch);
struct ring *channel_task_ring(struct channel *ch);
/* The task ring's event id; false when the channel has none. */
bool channel_task_id(const struct channel *ch, uint64_t *id);
/* A per-thread channel without a task ring (the kernel refused the dummy
 * event): its FORK records sit in the sample ring, which wakes nobody
 * below its watermark. */
bool channel_tasks_in_ring(const struct channel *ch);
/* The allocation ring (issue 18), or NULL when the channel has none; its
 * owner's fd (to poll, -1 when none); the allocation event a record's
 * IDENTIFIER names, or NULL. */
struct ring *channel_alloc_ring(struct channel *ch);
int channel_alloc_fd(const struct channel *ch);
/* The sample period of the heap probes on allocating entries (returns
 * and frees stay at 1); a no-op when it is already that.  0 or -errno. */
int channel_alloc_heap_period(struct channel *ch, uint64_t period);
const struct event_spec *channel_alloc_event(const struct channel *ch,
					     uint64_t id);
/* The thread has exited (POLLHUP, or its EXIT record): the channel is
 * drained and closed at the next chance. */
void channel_mark_exited(struct channel *ch);
bool channel_exited(const struct channel *ch);

#endif
