/* Collector thread only.  See chanset.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chanset.h"
#include "channel_int.h"

struct chanset {
	int epfd;
	const struct source *src;
	unsigned ring_pages;
	uint64_t period;
	bool enabled;
	struct channel **chans;
	size_t n_chans;
	size_t cap_chans;
	/* Channels for which channel_tasks_in_ring() holds. */
	size_t n_untasked;
	struct chanset_stats stats;
};

int
chanset_new(struct chanset **out, const struct source *src,
	    unsigned ring_pages, uint64_t period)
{
	struct chanset *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return -ENOMEM;
	cs->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (cs->epfd < 0) {
		int ret = -errno;

		free(cs);
		return ret;
	}
	cs->src = src;
	cs->ring_pages = ring_pages;
	cs->period = period;
	cs->enabled = true;
	*out = cs;
	return 0;
}

void
chanset_free(struct chanset *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->n_chans; i++)
		channel_close(cs->chans[i]);
	free(cs->chans);
	close(cs->epfd);
	free(cs);
}

struct channel *
chanset_find(struct chanset *cs, pid_t tid)
{
	for (size_t i = 0; i < cs->n_chans; i++)
		if (cs->chans[i]->cpu < 0 && cs->chans[i]->tid == tid)
			return cs->chans[i];
	return NULL;
}

/* Opens and registers a channel of p, to which it adds the set's ring
 * size, period and start state. */
static int
chanset_add(struct chanset *cs, struct channel_params p,
	    enum chanset_start start, char *err, size_t errlen)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct channel *ch;
	int ret;

	if (cs->n_chans == cs->cap_chans) {
		size_t cap = cs->cap_chans ? cs->cap_chans * 2 : 16;
		struct channel **n = realloc(cs->chans, cap * sizeof(*n));

		if (!n) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		cs->chans = n;
		cs->cap_chans = cap;
	}
	p.ring_pages = cs->ring_pages;
	p.period = cs->period;
	p.enable_on_exec = start == CHANSET_START_ON_EXEC;
	p.enable = start == CHANSET_START_FOLLOW && cs->enabled;
	ret = channel_open(&ch, cs->src, &p, err, errlen);
	if (ret < 0) {
		cs->stats.open_failed++;
		return ret;
	}
	/* A later ring gets what an earlier one had to settle for. */
	if (ch->ring_pages < cs->ring_pages)
		cs->ring_pages = ch->ring_pages;
	ev.data.ptr = ch;
	if (epoll_ctl(cs->epfd, EPOLL_CTL_ADD, channel_poll_fd(ch), &ev) < 0 ||
	    (ch->task_fd >= 0 &&
	     epoll_ctl(cs->epfd, EPOLL_CTL_ADD, ch->task_fd, &ev) < 0) ||
	    (channel_alloc_fd(ch) >= 0 &&
	     epoll_ctl(cs->epfd, EPOLL_CTL_ADD, channel_alloc_fd(ch),
		       &ev) < 0)) {
		ret = -errno;
		snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
		epoll_ctl(cs->epfd, EPOLL_CTL_DEL, channel_poll_fd(ch), NULL);
		if (ch->task_fd >= 0)
			epoll_ctl(cs->epfd, EPOLL_CTL_DEL, ch->task_fd, NULL);
		channel_close(ch);
		return ret;
	}
	cs->chans[cs->n_chans++] = ch;
	cs->n_untasked += channel_tasks_in_ring(ch);
	cs->stats.opened++;
	return 0;
}

int
chanset_add_thread(struct chanset *cs, pid_t pid, pid_t tid,
		   enum chanset_start start, char *err, size_t errlen)
{
	struct channel_params p = { .pid = pid, .tid = tid, .cpu = -1 };

	if (chanset_find(cs, tid))
		return -EEXIST;
	return chanset_add(cs, p, start, err, errlen);
}

int
chanset_add_cpu(struct chanset *cs, pid_t pid, int cpu,
		enum chanset_start start, char *err, size_t errlen)
{
	struct channel_params p = { .pid = pid, .tid = -1, .cpu = cpu };

	return chanset_add(cs, p, start, err, errlen);
}

int
chanset_add_system(struct chanset *cs, int cpu, int cgroup_fd, int scope,
		   enum chanset_start start, char *err, size_t errlen)
{
	struct channel_params p = {
		.pid = -1, .tid = -1, .cpu = cpu, .system = true,
		.cgroup_fd = cgroup_fd, .scope = scope,
	};

	if (chanset_find_cpu(cs, cpu, scope))
		return -EEXIST;
	return chanset_add(cs, p, start, err, errlen);
}

struct channel *
chanset_find_cpu(struct chanset *cs, int cpu, int scope)
{
	for (size_t i = 0; i < cs->n_chans; i++)
		if (cs->chans[i]->system && cs->chans[i]->cpu == cpu &&
		    cs->chans[i]->scope == scope)
			return cs->chans[i];
	return NULL;
}

void
chanset_remove(struct chanset *cs, struct channel *ch)
{
	for (size_t i = 0; i < cs->n_chans; i++) {
		if (cs->chans[i] != ch)
			continue;
		epoll_ctl(cs->epfd, EPOLL_CTL_DEL, channel_poll_fd(ch), NULL);
		if (ch->task_fd >= 0)
			epoll_ctl(cs->epfd, EPOLL_CTL_DEL, ch->task_fd, NULL);
		if (channel_alloc_fd(ch) >= 0)
			epoll_ctl(cs->epfd, EPOLL_CTL_DEL, channel_alloc_fd(ch),
				  NULL);
		cs->n_untasked -= channel_tasks_in_ring(ch);
		channel_close(ch);
		cs->chans[i] = cs->chans[--cs->n_chans];
		cs->stats.closed++;
		return;
	}
}

int
chanset_watch_fd(struct chanset *cs, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(cs->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int
chanset_wait(struct chanset *cs, struct epoll_event *evs, int max,
	     int timeout_ms)
{
	int n = epoll_wait(cs->epfd, evs, max, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return n;
}

int
chanset_set_period(struct chanset *cs, uint64_t period)
{
	int first_err = 0;

	/* Period 0 stops sampling; the period in force stays for later. */
	if (period == 0)
		return chanset_enable(cs, false, CHANSET_ALL);
	for (size_t i = 0; i < cs->n_chans; i++) {
		int ret = channel_set_period(cs->chans[i], period);

		/* A thread that is exiting refuses with ESRCH; it goes away
		 * with its POLLHUP. */
		if (ret < 0 && ret != -ESRCH && !first_err)
			first_err = ret;
	}
	if (!first_err)
		cs->period = period;
	return first_err;
}

void
chanset_set_default_period(struct chanset *cs, uint64_t period)
{
	cs->period = period;
}

int
chanset_enable(struct chanset *cs, bool on, enum chanset_which which)
{
	int first_err = 0;

	for (size_t i = 0; i < cs->n_chans; i++) {
		const struct channel *ch = cs->chans[i];
		int ret;

		if ((which == CHANSET_THREADS && ch->cpu >= 0) ||
		    (which == CHANSET_CPUS && ch->cpu < 0))
			continue;
		ret = channel_enable(cs->chans[i], on);
		if (ret < 0 && ret != -ESRCH && !first_err)
			first_err = ret;
	}
	if (which == CHANSET_ALL)
		cs->enabled = on;
	return first_err;
}

uint64_t
chanset_period(const struct chanset *cs)
{
	return cs->period;
}

size_t
chanset_count(const struct chanset *cs)
{
	return cs->n_chans;
}

size_t
chanset_n_untasked(const struct chanset *cs)
{
	return cs->n_untasked;
}

size_t
chanset_count_pid(const struct chanset *cs, pid_t pid)
{
	size_t n = 0;

	for (size_t i = 0; i < cs->n_chans; i++)
		n += cs->chans[i]->pid == pid;
	return n;
}

struct channel *
chanset_at(struct chanset *cs, size_t i)
{
	return i < cs->n_chans ? cs->chans[i] : NULL;
}

const struct chanset_stats *
chanset_stats(const struct chanset *cs)
{
	return &cs->stats;
}

unsigned
chanset_ring_pages(const struct chanset *cs)
{
	return cs->ring_pages;
}

void
chanset_set_ring_pages(struct chanset *cs, unsigned pages)
{
	cs->ring_pages = pages;
}
