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
#include "channel_int.h"

#define CHANNEL_MIN_PAGES 2

/*
 * The dummy event of a per-thread channel: task/comm records only, woken
 * on every record.  It stays enabled while sampling is paused, so threads
 * created meanwhile are still seen.  Its sample_type matches the first
 * event's so the sample_id_all trailers read the same way.  0, or -errno
 * (the caller then lets the first event carry task records).
 */
static int
channel_open_task(struct channel *ch, const struct channel_params *p)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct event_spec ev = { .role = ROLE_AUX, .leader = -1 };
	struct open_params op = {
		.pid = p->tid,
		.cpu = -1,
		.group_fd = -1,
		.period = 1,
		.enable_on_exec = p->enable_on_exec,
		.want_task = true,
		.watermark_bytes = 1,
	};
	int fd, ret;

	snprintf(ev.name, sizeof(ev.name), "dummy");
	ev.attr.type = PERF_TYPE_SOFTWARE;
	ev.attr.config = PERF_COUNT_SW_DUMMY;
	ev.attr.sample_type = ch->ev.src->events[0].attr.sample_type &
			      ~(uint64_t)PERF_SAMPLE_RAW;
	ev.attr.exclude_kernel = 1;
	ev.attr.exclude_hv = 1;
	fd = source_open_event(&ev, &op);
	if (fd < 0)
		return fd;
	ch->task_map_len = CHANNEL_TASK_MAP_PAGES * page;
	ch->task_map = mmap(NULL, ch->task_map_len, PROT_READ | PROT_WRITE,
			    MAP_SHARED, fd, 0);
	if (ch->task_map == MAP_FAILED) {
		ret = -errno;
		goto out_close;
	}
	ret = ring_init(&ch->task_ring, ch->task_map, ch->task_map_len, page);
	if (ret < 0)
		goto out_unmap;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &ch->task_id) < 0 ||
	    (!p->enable_on_exec && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)) {
		ret = -errno;
		goto out_ring;
	}
	ch->task_fd = fd;
	return 0;

out_ring:
	ring_fini(&ch->task_ring);
out_unmap:
	munmap(ch->task_map, ch->task_map_len);
out_close:
	ch->task_map = NULL;
	close(fd);
	return ret;
}

/*
 * Wakes the collector each time half a ring has been written: few
 * wakeups, since each has a fixed cost in the collector (the sleep in
 * epoll_wait and the switch back; README.md, Performance), and still half
 * a ring of room while the collector is away: at 250 K samples/s of 88
 * bytes, about 23 ms of the default 1 MiB ring, more than its longest
 * usual absence (the first frame's symbol loading).
 */
static uint32_t
channel_watermark(unsigned ring_pages)
{
	return (uint32_t)(ring_pages * (size_t)sysconf(_SC_PAGESIZE) / 2);
}

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
				 MAP_SHARED, ch->fds[ch->owner], 0);

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

/* Undoes channel_map (nothing when the ring is not mapped). */
static void
channel_unmap(struct channel *ch)
{
	ring_fini(&ch->ring);
	if (ch->map)
		munmap(ch->map, ch->map_len);
	ch->map = NULL;
}

/* Opens event i of the source into ch->fds[i] and reads its id. */
static int
channel_open_event(struct channel *ch, size_t i, const struct open_params *op,
		   char *err, size_t errlen)
{
	const struct event_spec *ev = &ch->ev.src->events[i];
	char what[96];
	int fd = source_open_event(ev, op);

	if (fd < 0) {
		snprintf(what, sizeof(what), "perf_event_open(%s)", ev->name);
		if (ch->system)
			source_explain_cpu_error(-fd, what, op->cpu, err,
						 errlen);
		else
			source_explain_error(-fd, what, op->pid, err, errlen);
		return fd;
	}
	ch->fds[i] = fd;
	ch->ev.n = i + 1;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &ch->ev.ids[i]) < 0) {
		int ret = -errno;

		snprintf(err, errlen, "PERF_EVENT_IOC_ID: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

/*
 * The ring owner, event 0, and its ring.  The kernel takes the watermark
 * from the owner's attr when the ring is mapped and clamps it to the
 * ring: a ring halved for RLIMIT_MEMLOCK would keep a watermark sized for
 * the wanted ring, wake the collector only when full and lose samples.
 * So when the ring that fits is smaller, the owner is opened again with
 * that ring's watermark (the pages just freed fit again).
 */
static int
channel_open_owner(struct channel *ch, struct open_params *op,
		   unsigned pages, char *err, size_t errlen)
{
	int ret;

	for (;;) {
		op->watermark_bytes = channel_watermark(pages);
		ret = channel_open_event(ch, ch->owner, op, err, errlen);
		if (ret < 0)
			return ret;
		ret = channel_map(ch, pages, err, errlen);
		if (ret < 0 || ch->ring_pages == pages)
			return ret;
		pages = ch->ring_pages;
		channel_unmap(ch);
		close(ch->fds[ch->owner]);
		ch->fds[ch->owner] = -1;
		ch->ev.n = 0;
	}
}

/* The ring's owner: the first event that counts on the channel's CPU
 * (every event counts on a thread).  -ENODEV when none does. */
static int
channel_pick_owner(struct channel *ch, const struct source *src, char *err,
		   size_t errlen)
{
	for (size_t i = 0; i < src->n_events; i++)
		if (ch->cpu < 0 || source_event_on_cpu(&src->events[i],
						       ch->cpu)) {
			ch->owner = i;
			return 0;
		}
	snprintf(err, errlen, "no event of %s counts on CPU %d", src->name,
		 ch->cpu);
	return -ENODEV;
}

int
channel_open(struct channel **out, const struct source *src,
	     const struct channel_params *p, char *err, size_t errlen)
{
	struct channel *ch;
	int ret;

	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ch->pid = p->system ? -1 : p->pid;
	ch->tid = p->cpu >= 0 ? -1 : p->tid;
	ch->cpu = p->cpu;
	ch->system = p->system && p->cpu >= 0;
	ch->scope = ch->system ? p->scope : -1;
	ch->ev.src = src;
	for (size_t i = 0; i < SOURCE_MAX_EVENTS; i++)
		ch->fds[i] = -1;
	channel_alloc_init(ch);
	ch->task_fd = -1;
	/* Inherited per-CPU channels keep task records in their ring: they
	 * only name child processes there. */
	if (p->cpu < 0)
		channel_open_task(ch, p);

	ret = channel_pick_owner(ch, src, err, errlen);
	if (ret < 0)
		goto out_close;
	for (size_t i = ch->owner; i < src->n_events; i++) {
		const struct event_spec *ev = &src->events[i];
		struct open_params op = {
			.pid = ch->system ? (p->cgroup_fd >= 0 ? p->cgroup_fd :
					     -1) :
			       p->cpu >= 0 ? p->pid : p->tid,
			.pid_cgroup = ch->system && p->cgroup_fd >= 0,
			.cpu = p->cpu,
			.inherit = p->cpu >= 0 && !ch->system,
			.group_fd = ev->leader >= 0 ? ch->fds[ev->leader] : -1,
			.period = p->period,
			.enable_on_exec = p->enable_on_exec,
			.want_task = (i == ch->owner && ch->task_fd < 0),
			.want_mmap = i == ch->owner,
		};

		if (p->cpu >= 0 && !source_event_on_cpu(ev, p->cpu))
			continue;	/* its PMU does not count here */
		if (i == ch->owner) {
			ret = channel_open_owner(ch, &op, p->ring_pages, err,
						 errlen);
			if (ret < 0)
				goto out_close;
			continue;
		}
		ret = channel_open_event(ch, i, &op, err, errlen);
		if (ret < 0)
			goto out_close;
		if (ioctl(ch->fds[i], PERF_EVENT_IOC_SET_OUTPUT,
			  ch->fds[ch->owner]) < 0) {
			ret = -errno;
			snprintf(err, errlen,
				 "PERF_EVENT_IOC_SET_OUTPUT(%s): %s", ev->name,
				 strerror(errno));
			goto out_close;
		}
	}
	(void)channel_open_alloc(ch, p);
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
	channel_unmap(ch);
	channel_close_alloc(ch);
	ring_fini(&ch->task_ring);
	if (ch->task_map)
		munmap(ch->task_map, ch->task_map_len);
	if (ch->task_fd >= 0)
		close(ch->task_fd);
	for (size_t i = 0; i < SOURCE_MAX_EVENTS; i++)
		if (ch->fds[i] >= 0)
			close(ch->fds[i]);
	free(ch);
}

int
channel_poll_fd(const struct channel *ch)
{
	return ch->fds[ch->owner];
}

int
channel_set_period(struct channel *ch, uint64_t period)
{
	if (period == 0)
		return channel_enable(ch, false);
	for (size_t i = 0; i < ch->ev.n; i++)
		if (ch->fds[i] >= 0 &&
		    ioctl(ch->fds[i], PERF_EVENT_IOC_PERIOD, &period) < 0)
			return -errno;
	return 0;
}

int
channel_enable(struct channel *ch, bool on)
{
	unsigned long req = on ? PERF_EVENT_IOC_ENABLE :
				 PERF_EVENT_IOC_DISABLE;

	for (size_t i = 0; i < ch->ev.n; i++)
		if (ch->fds[i] >= 0 && ioctl(ch->fds[i], req, 0) < 0)
			return -errno;
	ch->enabled = on;
	return 0;
}

int
channel_read_lost(struct channel *ch)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < ch->ev.n; i++) {
		/* read_format LOST alone: { u64 value; u64 lost; }.  Without
		 * it (the kernel refused the bit) only the value comes. */
		uint64_t v[2];

		if (ch->fds[i] < 0)
			continue;
		if (read(ch->fds[i], v, sizeof(v)) != (ssize_t)sizeof(v))
			return -ENOTSUP;
		sum += v[1];
	}
	ch->lost_read = sum;
	return 0;
}

const struct event_spec *
channel_events_find(const struct channel_events *ev, uint64_t id)
{
	/* An event not opened on this CPU has id 0, which the kernel never
	 * gives. */
	for (size_t i = 0; i < ev->n; i++)
		if (ev->ids[i] == id && id != 0)
			return &ev->src->events[i];
	return NULL;
}

const struct channel_events *
channel_events(const struct channel *ch)
{
	return &ch->ev;
}

void
channel_add_lost_records(struct channel *ch, uint64_t n)
{
	ch->lost_records += n;
}

uint64_t
channel_take_lost(struct channel *ch)
{
	uint64_t lost = ch->lost_records > ch->lost_read ? ch->lost_records :
							  ch->lost_read;
	uint64_t fresh = lost > ch->lost_counted ? lost - ch->lost_counted : 0;

	if (fresh)
		ch->lost_counted = lost;
	return fresh;
}

pid_t
channel_tid(const struct channel *ch)
{
	return ch->tid;
}

pid_t
channel_pid(const struct channel *ch)
{
	return ch->pid;
}

int
channel_cpu(const struct channel *ch)
{
	return ch->cpu;
}

bool
channel_system(const struct channel *ch)
{
	return ch->system;
}

int
channel_scope(const struct channel *ch)
{
	return ch->scope;
}

struct ring *
channel_ring(struct channel *ch)
{
	return &ch->ring;
}

struct ring *
channel_task_ring(struct channel *ch)
{
	return ch->task_map ? &ch->task_ring : NULL;
}

bool
channel_task_id(const struct channel *ch, uint64_t *id)
{
	if (ch->task_fd < 0)
		return false;
	*id = ch->task_id;
	return true;
}

bool
channel_tasks_in_ring(const struct channel *ch)
{
	return ch->cpu < 0 && ch->task_fd < 0;
}

void
channel_mark_exited(struct channel *ch)
{
	ch->hup = true;
}

bool
channel_exited(const struct channel *ch)
{
	return ch->hup;
}
