/*
 * Inside the channels room (and its unit tests): the layout of struct
 * channel.  Collector thread only.
 */
#ifndef MEMTOP_CHANNEL_INT_H
#define MEMTOP_CHANNEL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "channel.h"
#include "ring.h"

struct channel {
	pid_t pid;		/* thread group */
	pid_t tid;		/* -1 for a per-CPU inherited channel */
	int cpu;		/* -1 for a per-thread channel */
	bool system;		/* every process on cpu, or one cgroup's */
	int scope;		/* system: the cgroup's index; else -1 */
	struct channel_events ev;	/* source and event ids */
	/* -1 for an event whose PMU does not cover cpu (hybrid parts). */
	int fds[SOURCE_MAX_EVENTS];
	size_t owner;		/* the event whose fd owns the ring */
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
	/* The allocation events and their ring (channel_alloc.c); n_alloc
	 * 0 when the source has none or they did not open. */
	int alloc_fds[SOURCE_ALLOC_EVENTS];
	uint64_t alloc_ids[SOURCE_ALLOC_EVENTS];
	size_t n_alloc;
	void *alloc_map;
	size_t alloc_map_len;
	struct ring alloc_ring;
	uint64_t heap_period;	/* of the heap entries; 0: the source's */
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

void channel_alloc_init(struct channel *ch);	/* every fd -1 */
/* Opens the allocation events; failure (logged) leaves none, -errno. */
int channel_open_alloc(struct channel *ch, const struct channel_params *p);
void channel_close_alloc(struct channel *ch);

#endif
