/* Collector thread only.  See channel.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "channel.h"

#define CHANNEL_MIN_PAGES 2

static int
channel_map(struct channel *ch, unsigned want_pages, char *err,
	    size_t errlen)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned pages;
	int ret;

	for (pages = want_pages; pages >= CHANNEL_MIN_PAGES; pages /= 2) {
		size_t len = (1 + (size_t)pages) * page;
		void *map = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_SHARED, ch->fds[0], 0);

		if (map != MAP_FAILED) {
			ret = ring_init(&ch->ring, map, len, page);
			if (ret < 0) {
				munmap(map, len);
				snprintf(err, errlen, "ring setup: %s",
					 strerror(-ret));
				return ret;
			}
			ch->map = map;
			ch->map_len = len;
			ch->ring_pages = pages;
			return 0;
		}
		if (errno != EPERM && errno != ENOMEM)
			break;
	}
	ret = -errno;
	if (ret == -EPERM) {
		struct rlimit rl;

		getrlimit(RLIMIT_MEMLOCK, &rl);
		snprintf(err, errlen,
			 "mmap of the perf ring for tid %d: %s; locked "
			 "memory is exhausted: raise RLIMIT_MEMLOCK (ulimit "
			 "-l, now %llu KiB) or kernel.perf_event_mlock_kb",
			 (int)ch->tid,
			 strerror(EPERM),
			 (unsigned long long)(rl.rlim_cur / 1024));
	} else {
		snprintf(err, errlen, "mmap of the perf ring for tid %d: %s",
			 (int)ch->tid, strerror(-ret));
	}
	return ret;
}

int
channel_open(struct channel **out, const struct source *src,
	     const struct channel_params *p, char *err, size_t errlen)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct channel *ch;
	int ret;

	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ch->pid = p->pid;
	ch->tid = p->cpu >= 0 ? -1 : p->tid;
	ch->cpu = p->cpu;
	ch->src = src;
	for (size_t i = 0; i < SOURCE_MAX_EVENTS; i++)
		ch->fds[i] = -1;

	for (size_t i = 0; i < src->n_events; i++) {
		const struct event_spec *ev = &src->events[i];
		struct open_params op = {
			.pid = p->cpu >= 0 ? p->pid : p->tid,
			.cpu = p->cpu,
			.inherit = p->cpu >= 0,
			.group_fd = ev->leader >= 0 ? ch->fds[ev->leader] : -1,
			.period = p->period,
			.enable_on_exec = p->enable_on_exec,
			.want_task = (i == 0),
			.watermark_bytes =
				(uint32_t)(p->ring_pages * page / 4),
		};
		char what[96];
		int fd = source_open_event(ev, &op);

		if (fd < 0) {
			ret = fd;
			snprintf(what, sizeof(what), "perf_event_open(%s)",
				 ev->name);
			source_explain_error(-fd, what,
					     p->cpu >= 0 ? p->pid : p->tid,
					     err, errlen);
			goto out_close;
		}
		ch->fds[i] = fd;
		ch->n_fds = i + 1;
		if (ioctl(fd, PERF_EVENT_IOC_ID, &ch->ids[i]) < 0) {
			ret = -errno;
			snprintf(err, errlen, "PERF_EVENT_IOC_ID: %s",
				 strerror(errno));
			goto out_close;
		}
		if (i == 0) {
			ret = channel_map(ch, p->ring_pages, err, errlen);
			if (ret < 0)
				goto out_close;
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
				 ch->fds[0]) < 0) {
			ret = -errno;
			snprintf(err, errlen,
				 "PERF_EVENT_IOC_SET_OUTPUT(%s): %s", ev->name,
				 strerror(errno));
			goto out_close;
		}
	}
	if (p->enable) {
		ret = channel_enable(ch, true);
		if (ret < 0) {
			snprintf(err, errlen, "PERF_EVENT_IOC_ENABLE: %s",
				 strerror(-ret));
			goto out_close;
		}
	}
	*out = ch;
	return 0;

out_close:
	channel_close(ch);
	return ret;
}

void
channel_close(struct channel *ch)
{
	if (!ch)
		return;
	ring_fini(&ch->ring);
	if (ch->map)
		munmap(ch->map, ch->map_len);
	for (size_t i = 0; i < SOURCE_MAX_EVENTS; i++)
		if (ch->fds[i] >= 0)
			close(ch->fds[i]);
	free(ch);
}

int
channel_poll_fd(const struct channel *ch)
{
	return ch->fds[0];
}

int
channel_set_period(struct channel *ch, uint64_t period)
{
	for (size_t i = 0; i < ch->n_fds; i++)
		if (ioctl(ch->fds[i], PERF_EVENT_IOC_PERIOD, &period) < 0)
			return -errno;
	return 0;
}

int
channel_enable(struct channel *ch, bool on)
{
	unsigned long req = on ? PERF_EVENT_IOC_ENABLE :
				 PERF_EVENT_IOC_DISABLE;

	for (size_t i = 0; i < ch->n_fds; i++)
		if (ioctl(ch->fds[i], req, 0) < 0)
			return -errno;
	ch->enabled = on;
	return 0;
}

const struct event_spec *
channel_event_by_id(const struct channel *ch, uint64_t id)
{
	for (size_t i = 0; i < ch->n_fds; i++)
		if (ch->ids[i] == id)
			return &ch->src->events[i];
	return NULL;
}
