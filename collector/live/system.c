/*
 * Collector: whole-machine views (-a, -G, -C).  One system channel per
 * watched CPU and scope (every process, or each -G cgroup): pid -1 or the
 * cgroup's fd, no inherit, so there is no thread to follow and no birth
 * gap, and period changes, pause and reset reach every channel through
 * the channel set like any other.
 *
 * CPU hotplug: the kernel takes a CPU's events off it when it goes
 * offline (they report POLLHUP or simply stop) and a CPU that comes back
 * starts without them.  Each rescan (COLLECTOR_RESCAN_MS) reads the online
 * CPUs: a watched CPU gone offline has its channels drained and closed, a
 * CPU back online gets new ones; a channel that reported POLLHUP was closed
 * already (collector_close_exited) and is opened again while its CPU is
 * online.  Each change is counted in the frame (scope.hotplug) and logged.
 * Collector thread only (and collector_attach_system before it starts).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"
#include "recorder.h"
#include "cpulist.h"
#include "frame.h"
#include "log.h"
#include "topo.h"

/* The online CPUs; MEMTOP_CPUS_ONLINE=FILE reads another file (tests
 * bring a CPU "offline" there without touching the machine). */
static int
collector_read_online(struct cpulist *out)
{
	const char *path = getenv("MEMTOP_CPUS_ONLINE");

	if (!path || !*path)
		path = "/sys/devices/system/cpu/online";
	return cpulist_read(path, out);
}

/* Whether cpu is one the user asked for (-C, else every CPU). */
static bool
collector_wants_cpu(const struct collector *c, int cpu)
{
	const struct cpulist *cpus = c->cfg.scope->cpus;

	return !cpus || cpulist_has(cpus, cpu);
}

static size_t
collector_n_scopes(const struct collector *c)
{
	return c->cfg.scope->n_cgroups ? c->cfg.scope->n_cgroups : 1;
}

/* Opens the channels of cpu, one per scope.  0, or the first failure's
 * -errno with its message in err; -EEXIST never counts. */
static int
collector_open_cpu(struct collector *c, int cpu, char *err, size_t errlen)
{
	for (size_t s = 0; s < collector_n_scopes(c); s++) {
		int fd = c->cfg.scope->n_cgroups ?
			 c->cfg.scope->cgroup_fds[s] : -1;
		int ret = chanset_add_system(c->cs, cpu, fd, (int)s,
					     CHANSET_START_FOLLOW, err, errlen);

		if (ret < 0 && ret != -EEXIST)
			return ret;
	}
	return 0;
}

/* Drains and closes the channels of cpu; how many there were. */
static unsigned
collector_close_cpu(struct collector *c, int cpu)
{
	unsigned n = 0;

	for (size_t s = 0; s < collector_n_scopes(c); s++) {
		struct channel *ch = chanset_find_cpu(c->cs, cpu, (int)s);

		if (!ch)
			continue;
		collector_drain(c, ch);
		collector_sync_lost(c, ch);
		chanset_remove(c->cs, ch);
		n++;
	}
	return n;
}

int
collector_attach_system(struct collector *c, char *err, size_t errlen)
{
	struct cpulist online;
	int ret, opened = 0;

	/* DAMON's paddr kdamond (damonfeed.c) watches all physical memory,
	 * with no channel and no CPU: -G and -C are refused before. */
	if (c->cfg.src->damon) {
		c->system = true;
		c->damon_paddr = true;
		err[0] = '\0';
		return 0;
	}
	if (!c->cfg.scope) {
		snprintf(err, errlen, "no scope to watch");
		return -EINVAL;
	}
	ret = collector_read_online(&online);
	if (ret < 0) {
		snprintf(err, errlen, "cannot read the online CPUs: %s",
			 strerror(-ret));
		return ret;
	}
	c->online = online;
	for (int cpu = cpulist_next(&online, 0); cpu >= 0;
	     cpu = cpulist_next(&online, cpu + 1)) {
		if (!collector_wants_cpu(c, cpu))
			continue;
		ret = collector_open_cpu(c, cpu, err, errlen);
		/* A CPU going offline meanwhile comes back at a rescan;
		 * anything else (permissions) is for the user to fix. */
		if (ret == -ENODEV)
			continue;
		if (ret < 0)
			return ret;
		opened++;
	}
	if (!opened) {
		char want[256];

		cpulist_format(c->cfg.scope->cpus, want, sizeof(want));
		snprintf(err, errlen, "-C %s: none of these CPUs is online",
			 want);
		return -ENODEV;
	}
	c->system = true;
	/* --record: name what already runs, as perf record -a does. */
	if (c->cfg.recorder) {
		int cpu = cpulist_next(&online, 0);

		while (cpu >= 0 && !chanset_find_cpu(c->cs, cpu, 0))
			cpu = cpulist_next(&online, cpu + 1);
		if (cpu >= 0)
			recorder_synthesize_all(c->cfg.recorder, c->cfg.src,
						chanset_find_cpu(c->cs, cpu, 0));
	}
	err[0] = '\0';
	return 0;
}

/* Whether every scope of cpu has its channel. */
static bool
collector_cpu_complete(struct collector *c, int cpu)
{
	for (size_t s = 0; s < collector_n_scopes(c); s++)
		if (!chanset_find_cpu(c->cs, cpu, (int)s))
			return false;
	return true;
}

/* One watched CPU at a rescan: a change of its online state is counted
 * and logged; offline, its channels are drained and closed; online, it
 * gets those it lacks (back from offline, or closed after a POLLHUP). */
static void
collector_rescan_cpu(struct collector *c, int cpu, bool on)
{
	bool was = cpulist_has(&c->online, cpu);
	char msg[256];
	unsigned closed = 0;
	int ret;

	if (!on)
		closed = collector_close_cpu(c, cpu);
	if (was != on) {
		c->hotplug++;
		if (on)
			log_msg("CPU %d went online", cpu);
		else
			log_msg("CPU %d went offline: %u channel(s) drained "
				"and closed", cpu, closed);
	}
	if (!on || collector_cpu_complete(c, cpu))
		return;
	ret = collector_open_cpu(c, cpu, msg, sizeof(msg));
	/* Retried at every rescan; told once until it works again. */
	if (ret < 0 && !cpulist_has(&c->open_failed, cpu)) {
		cpulist_set(&c->open_failed, cpu);
		log_msg("CPU %d: %s; retried every second", cpu, msg);
	} else if (ret == 0) {
		log_msg("CPU %d: watched again", cpu);
		c->open_failed.bits[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
	}
}

void
collector_rescan_cpus(struct collector *c)
{
	struct cpulist online;
	int n = topo_n_cpus(c->cfg.topo);

	if (c->damon_paddr || collector_read_online(&online) < 0)
		return;
	for (int cpu = 0; cpu < n && cpu < CPULIST_MAX; cpu++)
		if (collector_wants_cpu(c, cpu))
			collector_rescan_cpu(c, cpu, cpulist_has(&online, cpu));
	c->online = online;
}

/* The frame's scope: what is watched, where, and CPU hotplug so far. */
void
collector_system_frame(struct collector *c, struct frame *f)
{
	struct cpulist watched = { { 0 } }, offline = { { 0 } };
	char buf[1024];
	int max = topo_n_cpus(c->cfg.topo);

	if (!c->system)
		return;
	for (size_t i = 0; i < chanset_count(c->cs); i++)
		cpulist_set(&watched, channel_cpu(chanset_at(c->cs, i)));
	for (int cpu = 0; cpu < max; cpu++)
		if (collector_wants_cpu(c, cpu) &&
		    !cpulist_has(&c->online, cpu))
			cpulist_set(&offline, cpu);
	f->scope = strdup(c->cfg.scope->name ? c->cfg.scope->name :
			  "all CPUs");
	cpulist_format(&watched, buf, sizeof(buf));
	f->scope_cpus = strdup(buf);
	cpulist_format(&offline, buf, sizeof(buf));
	f->scope_offline = strdup(buf);
	f->scope_hotplug = c->hotplug;
	snprintf(f->follow_mode, sizeof(f->follow_mode), "system");
}
