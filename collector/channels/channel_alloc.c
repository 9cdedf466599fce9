/*
 * A channel's allocation ring (issue 18): the source's allocation events
 * (collector/sources/source_alloc.c) for the channel's thread or CPU, in
 * a ring of their own that wakes the collector at every record, so a
 * mapping is named before its pages' samples are read and the sample
 * ring's fast path never meets a record with a stack in it.  They stay
 * enabled while sampling is paused, as the task ring does, so the object
 * map stays true.  Collector thread only.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "channel.h"
#include "channel_int.h"
#include "log.h"
#include "rlimits.h"

/* Data pages: room for several records of SOURCE_ALLOC_STACK bytes; with
 * heap probes, for bursts of allocations (an entry is ~700 bytes). */
#define CHANNEL_ALLOC_PAGES 32
#define CHANNEL_HEAP_PAGES 256

void
channel_alloc_init(struct channel *ch)
{
	for (size_t i = 0; i < SOURCE_ALLOC_EVENTS; i++)
		ch->alloc_fds[i] = -1;
}

/*
 * Objects are worth less than samples: their events take no descriptor
 * from the upper half of RLIMIT_NOFILE (fd, the lowest free one, tells
 * how many are open) and no locked memory when it is limited, so that
 * every thread that would be sampled without them still is.
 */
static bool
channel_alloc_affordable(int fd, size_t n)
{
	struct rlimit rl;

	if (rlimits_ring_budget() != 0)
		return false;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return true;
	return (rlim_t)fd + n < rl.rlim_cur / 2;
}

int
channel_open_alloc(struct channel *ch, const struct channel_params *p)
{
	const struct source *src = ch->ev.src;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int ret = 0;

	if (src->n_alloc == 0 || ch->system)
		return 0;
	for (size_t i = 0; i < src->n_alloc; i++) {
		struct open_params op = {
			.pid = p->cpu >= 0 ? p->pid : p->tid,
			.cpu = p->cpu,
			.inherit = p->cpu >= 0,
			.group_fd = -1,
			/* Heap probes may sample every Nth call. */
			.period = src->alloc[i].attr.sample_period ?
				  src->alloc[i].attr.sample_period : 1,
			.enable_on_exec = p->enable_on_exec,
			/* Every mapping wakes the collector; heap records
			 * would wake it at every malloc: a quarter ring. */
			.watermark_bytes = i > 0 ? 0 : src->n_alloc == 1 ? 1 :
					   CHANNEL_HEAP_PAGES / 4 * page,
		};
		int fd = source_open_event(&src->alloc[i], &op);

		if (fd < 0) {
			ret = fd;
			goto fail;
		}
		ch->alloc_fds[i] = fd;
		if (i == 0 && !channel_alloc_affordable(fd, src->n_alloc)) {
			ret = -EMFILE;
			goto fail;
		}
		/* Without the filter every syscall would copy a stack (the
		 * heap probes fire at their functions only). */
		if (src->alloc[i].heap_fn == HEAP_NONE &&
		    ioctl(fd, PERF_EVENT_IOC_SET_FILTER,
			  source_alloc_filter()) < 0) {
			ret = -errno;
			goto fail;
		}
		if (ioctl(fd, PERF_EVENT_IOC_ID, &ch->alloc_ids[i]) < 0 ||
		    (i > 0 && ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
				    ch->alloc_fds[0]) < 0)) {
			ret = -errno;
			goto fail;
		}
		if (i == 0) {
			ch->alloc_map_len = (1 + (src->n_alloc > 1 ?
						  CHANNEL_HEAP_PAGES :
						  CHANNEL_ALLOC_PAGES)) * page;
			ch->alloc_map = mmap(NULL, ch->alloc_map_len,
					     PROT_READ | PROT_WRITE,
					     MAP_SHARED, fd, 0);
			if (ch->alloc_map == MAP_FAILED) {
				ch->alloc_map = NULL;
				ret = -errno;
				goto fail;
			}
			ret = ring_init(&ch->alloc_ring, ch->alloc_map,
					ch->alloc_map_len, page);
			if (ret < 0)
				goto fail;
		}
		ch->n_alloc = i + 1;
	}
	for (size_t i = 0; i < ch->n_alloc && !p->enable_on_exec; i++)
		if (ioctl(ch->alloc_fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0) {
			ret = -errno;
			goto fail;
		}
	return 0;
fail:
	log_msg("tid %d: allocation events not opened: %s; its objects stay "
		"unnamed", (int)p->tid, ret == -EMFILE ?
		"descriptors or locked memory kept for sampling" :
		strerror(-ret));
	channel_close_alloc(ch);
	return ret;
}

void
channel_close_alloc(struct channel *ch)
{
	if (ch->alloc_map) {
		ring_fini(&ch->alloc_ring);
		munmap(ch->alloc_map, ch->alloc_map_len);
		ch->alloc_map = NULL;
	}
	for (size_t i = 0; i < SOURCE_ALLOC_EVENTS; i++) {
		if (ch->alloc_fds[i] >= 0)
			close(ch->alloc_fds[i]);
		ch->alloc_fds[i] = -1;
	}
	ch->n_alloc = 0;
}

int
channel_alloc_fd(const struct channel *ch)
{
	return ch->n_alloc ? ch->alloc_fds[0] : -1;
}

struct ring *
channel_alloc_ring(struct channel *ch)
{
	return ch->n_alloc ? &ch->alloc_ring : NULL;
}

const struct event_spec *
channel_alloc_event(const struct channel *ch, uint64_t id)
{
	for (size_t i = 0; i < ch->n_alloc; i++)
		if (ch->alloc_ids[i] == id)
			return &ch->ev.src->alloc[i];
	return NULL;
}

int
channel_alloc_heap_period(struct channel *ch, uint64_t period)
{
	const struct source *src = ch->ev.src;
	uint64_t cur = ch->heap_period;
	int ret = 0;

	if (cur == 0 && src->n_alloc > 1)
		cur = src->alloc[1].attr.sample_period;
	if (period == 0 || cur == period)
		return 0;
	for (size_t i = 0; i < ch->n_alloc; i++) {
		const struct event_spec *ev = &src->alloc[i];

		if (ev->heap_fn == HEAP_NONE || ev->heap_fn == HEAP_FREE ||
		    ev->heap_ret)
			continue;
		if (ioctl(ch->alloc_fds[i], PERF_EVENT_IOC_PERIOD, &period) < 0)
			ret = -errno;
	}
	if (ret == 0)
		ch->heap_period = period;
	return ret;
}
