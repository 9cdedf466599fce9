/*
 * The cost of the heap probes, measured at start (heapprobe.h): memtop's
 * own malloc(64) + free, timed without probes, with the probes recording
 * (an entry with its registers and stack, a return, a free: what a target
 * pays for each allocation memtop names), and with the probes firing but
 * recording nothing (a huge sample period: what a target pays for an
 * allocation --heap-objects=N samples out).  The ring is emptied between
 * batches so that no record is dropped for want of room (a dropped one
 * costs less).  Main thread, before any other thread exists.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "heapprobe.h"
#include "source.h"

#define HEAPCAL_BATCH 100	/* calls per batch: fits the ring */
#define HEAPCAL_BATCHES 5
#define HEAPCAL_PAGES 64
#define HEAPCAL_EVENTS 3

/* Through a volatile pointer, so the pair is not optimised away. */
static void *(*volatile heapcal_malloc)(size_t) = malloc;
static void (*volatile heapcal_free)(void *) = free;

/* ns per malloc + free over every batch; the ring emptied between. */
static uint64_t
heapcal_loop(struct perf_event_mmap_page *meta)
{
	uint64_t total = 0;

	for (int b = 0; b < HEAPCAL_BATCHES; b++) {
		uint64_t t0 = base_clock_ns(CLOCK_MONOTONIC);

		for (int i = 0; i < HEAPCAL_BATCH; i++)
			heapcal_free(heapcal_malloc(64));
		total += base_clock_ns(CLOCK_MONOTONIC) - t0;
		if (meta)
			__atomic_store_n(&meta->data_tail,
					 __atomic_load_n(&meta->data_head,
							 __ATOMIC_ACQUIRE),
					 __ATOMIC_RELEASE);
	}
	return total / (HEAPCAL_BATCH * HEAPCAL_BATCHES);
}

/* The events, the others redirected into the first's ring (mapped
 * first: a redirect needs its buffer). */
static int
heapcal_open(struct source *src, int *fds, void **map, size_t *map_len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < HEAPCAL_EVENTS; i++) {
		struct open_params op = { .pid = 0, .cpu = -1, .group_fd = -1,
					  .period = 1 };

		fds[i] = source_open_event(&src->alloc[1 + i], &op);
		if (fds[i] < 0)
			return fds[i];
		if (i > 0 && ioctl(fds[i], PERF_EVENT_IOC_SET_OUTPUT,
				   fds[0]) < 0)
			return -errno;
		if (i > 0)
			continue;
		*map_len = (1 + HEAPCAL_PAGES) * page;
		*map = mmap(NULL, *map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			    fds[0], 0);
		if (*map == MAP_FAILED) {
			*map = NULL;
			return -errno;
		}
	}
	return 0;
}

static void
heapcal_ioctl(const int *fds, unsigned long req, uint64_t arg)
{
	for (size_t i = 0; i < HEAPCAL_EVENTS; i++)
		(void)ioctl(fds[i], req, req == PERF_EVENT_IOC_PERIOD ?
			    (unsigned long)&arg : (unsigned long)0);
}

int
heapcal_measure(const char *path, uint64_t malloc_off, uint64_t free_off,
		struct heap_cost *cost)
{
	struct source *src = calloc(1, sizeof(*src));
	int fds[HEAPCAL_EVENTS] = { -1, -1, -1 }, ret = -ENOMEM;
	void *map = NULL;
	size_t map_len = 0;

	memset(cost, 0, sizeof(*cost));
	if (!src)
		return -ENOMEM;
	src->n_alloc = 1;
	snprintf(src->heap_paths[0], sizeof(src->heap_paths[0]), "%s", path);
	if (source_heap_add(src, 0, malloc_off, HEAP_MALLOC, false, 1) < 0 ||
	    source_heap_add(src, 0, malloc_off, HEAP_MALLOC, true, 1) < 0 ||
	    source_heap_add(src, 0, free_off, HEAP_FREE, false, 1) < 0)
		goto out;
	/* Before the probes exist: a disabled probe still traps. */
	(void)heapcal_loop(NULL);	/* warm the allocator */
	cost->plain_ns = heapcal_loop(NULL);
	ret = heapcal_open(src, fds, &map, &map_len);
	if (ret < 0)
		goto out;
	heapcal_ioctl(fds, PERF_EVENT_IOC_ENABLE, 0);
	cost->full_ns = heapcal_loop(map);
	heapcal_ioctl(fds, PERF_EVENT_IOC_PERIOD, UINT64_C(1) << 40);
	cost->trap_ns = heapcal_loop(map);
	heapcal_ioctl(fds, PERF_EVENT_IOC_DISABLE, 0);
	/* The extra cost of the probes, not the allocator's own. */
	cost->full_ns = cost->full_ns > cost->plain_ns ?
			cost->full_ns - cost->plain_ns : 0;
	cost->trap_ns = cost->trap_ns > cost->plain_ns ?
			cost->trap_ns - cost->plain_ns : 0;
	if (cost->trap_ns > cost->full_ns)
		cost->trap_ns = cost->full_ns;
	ret = 0;
out:
	if (map)
		munmap(map, map_len);
	for (size_t i = 0; i < HEAPCAL_EVENTS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(src);
	return ret;
}
