/*
 * A channel: one target thread's events sharing one mmap ring (the first
 * event owns the ring, the others are redirected into it with
 * PERF_EVENT_IOC_SET_OUTPUT).  Opened per thread with pid=tid, cpu=-1,
 * inherit=0, so PERF_EVENT_IOC_PERIOD reaches every event.
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

struct channel {
	pid_t pid;		/* thread group */
	pid_t tid;		/* -1 for a per-CPU inherited channel */
	int cpu;		/* -1 for a per-thread channel */
	const struct source *src;
	int fds[SOURCE_MAX_EVENTS];
	uint64_t ids[SOURCE_MAX_EVENTS];	/* PERF_EVENT_IOC_ID values */
	size_t n_fds;
	void *map;
	size_t map_len;
	unsigned ring_pages;	/* data pages actually mapped */
	struct ring ring;
	/*
	 * Per-thread channels: a dummy event on the same thread with its own
	 * one-page ring and a 1-byte watermark carries the FORK, COMM and
	 * EXIT records, so a new thread wakes the collector at once (the
	 * sample ring only wakes at its watermark).  task_fd -1 when the
	 * kernel refused it; the first event then carries them.
	 */
	int task_fd;
	uint64_t task_id;
	void *task_map;		/* CHANNEL_TASK_MAP_PAGES pages */
	size_t task_map_len;
	struct ring task_ring;
	bool hup;		/* POLLHUP seen: the thread has exited */
	bool enabled;
	/*
	 * Losses of the sample ring, two ways: the kernel's LOST records
	 * (late: written with the next record that fits, so a burst just
	 * before the thread exits is never reported) and the events' own
	 * lost counts read with PERF_FORMAT_LOST (exact, Linux 6.0+).  Both
	 * count the same records; the collector counts the larger, once.
	 */
	uint64_t lost_records;
	uint64_t lost_read;
	uint64_t lost_counted;
};

/* The task ring's mapping: the header page and one data page.  Locked
 * memory like the sample ring (rlimits.h). */
#define CHANNEL_TASK_MAP_PAGES 2

/* A per-thread channel without a task ring (the kernel refused the dummy
 * event): its FORK records sit in the sample ring, which wakes nobody
 * below its watermark. */
static inline bool
channel_tasks_in_ring(const struct channel *ch)
{
	return ch->cpu < 0 && ch->task_fd < 0;
}

struct channel_params {
	pid_t pid;
	pid_t tid;		/* per-thread: the thread; inherit: ignored */
	int cpu;		/* -1 = per thread; >= 0 = that CPU, inherit */
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
 * Reads every event's lost-record count (PERF_FORMAT_LOST) into
 * ch->lost_read.  Returns 0, or -ENOTSUP when the kernel gives no count
 * (before 6.0; lost_read then stays as it was).
 */
int channel_read_lost(struct channel *ch);
/* The event spec a record's IDENTIFIER belongs to, or NULL. */
const struct event_spec *channel_event_by_id(const struct channel *ch,
					     uint64_t id);

#endif
