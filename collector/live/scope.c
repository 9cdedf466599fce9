/*
 * What -a, -G and -C name, resolved before the collector starts: each
 * cgroup's directory in the hierarchy perf_event_open accepts (found in
 * /proc/mounts, never assumed), opened for PERF_FLAG_PID_CGROUP; the CPUs
 * checked against those the machine has; and the scope's name for the
 * frames ("all CPUs", "cgroup /x", "CPUs 0-3").  Main thread, before
 * anything starts.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "collector.h"
#include "cpulist.h"

/* -C: every CPU must exist (be possible); offline ones are watched once
 * they come online. */
static int
scope_check_cpus(const struct cpulist *cpus, char *err, size_t errlen)
{
	struct cpulist possible;
	char have[128];

	if (!cpus || cpulist_read("/sys/devices/system/cpu/possible",
				  &possible) < 0)
		return 0;
	for (int cpu = cpulist_next(cpus, 0); cpu >= 0;
	     cpu = cpulist_next(cpus, cpu + 1)) {
		if (cpulist_has(&possible, cpu))
			continue;
		cpulist_format(&possible, have, sizeof(have));
		snprintf(err, errlen, "-C: CPU %d does not exist here (CPUs "
			 "%s)", cpu, have);
		return -EINVAL;
	}
	return 0;
}

/* a is b, or inside it: its processes would be counted twice (a
 * cgroup's events see its descendants too, kernel/events/core.c
 * perf_cgroup_match). */
static bool
scope_nested(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (strcmp(b, "/") == 0)
		return true;
	return strncmp(a, b, n) == 0 && (a[n] == '/' || a[n] == '\0');
}

/* One -G name: its directory opened, its path in the hierarchy in rel. */
static int
scope_open_cgroup(const char *mount, bool v2, const char *name, int *fd,
		  char *rel, size_t rellen, char *err, size_t errlen)
{
	char dir[4096];
	int ret = cgroupfs_resolve(mount, name, dir, sizeof(dir), rel, rellen);

	if (ret < 0) {
		snprintf(err, errlen, "-G %s: not a cgroup name (%s)", name,
			 ret == -EINVAL ? "empty, or '..' in it" :
			 strerror(-ret));
		return -EINVAL;
	}
	*fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "-G %s: %s: %s (the %s hierarchy is "
			 "mounted at %s)", name, dir,
			 ret == -ENOENT ? "no such cgroup" : strerror(-ret),
			 v2 ? "cgroup2" : "perf_event", mount);
		return ret;
	}
	return 0;
}

static int
scope_open_cgroups(struct collector_scope *s, const char *const *names,
		   size_t n, char *rels, size_t rellen, char *err,
		   size_t errlen)
{
	char mount[4096];
	bool v2 = true;
	int ret;

	ret = cgroupfs_mount("/proc/mounts", mount, sizeof(mount), &v2);
	if (ret < 0) {
		snprintf(err, errlen, "-G: %s", ret == -ENOENT ?
			 "no cgroup2 mount nor cgroup v1 perf_event mount in "
			 "/proc/mounts" : strerror(-ret));
		return ret == -ENOENT ? -ENOENT : ret;
	}
	s->cgroup_fds = calloc(n, sizeof(*s->cgroup_fds));
	if (!s->cgroup_fds) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		char *rel = rels + i * rellen;

		ret = scope_open_cgroup(mount, v2, names[i],
					&s->cgroup_fds[s->n_cgroups], rel,
					rellen, err, errlen);
		if (ret < 0)
			return ret;
		s->n_cgroups++;
		for (size_t j = 0; j < i; j++) {
			const char *other = rels + j * rellen;

			if (!scope_nested(rel, other) &&
			    !scope_nested(other, rel))
				continue;
			snprintf(err, errlen, "-G: cgroups %s and %s overlap "
				 "(a cgroup includes the cgroups below it)",
				 other, rel);
			return -EINVAL;
		}
	}
	s->v2 = v2;
	return 0;
}

/* "all CPUs", "CPUs 0-3", "cgroup /x", "cgroups /a,/b, CPUs 1". */
static int
scope_name(struct collector_scope *s, const char *rels, size_t rellen,
	   const struct cpulist *cpus)
{
	char buf[1024], list[256];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < s->n_cgroups && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
					i ? "," : s->n_cgroups > 1 ?
					"cgroups " : "cgroup ",
					rels + i * rellen);
	if (cpus && len < sizeof(buf)) {
		cpulist_format(cpus, list, sizeof(list));
		snprintf(buf + len, sizeof(buf) - len, "%sCPU%s %s",
			 len ? ", " : "", cpulist_count(cpus) > 1 ? "s" : "",
			 list);
	} else if (!len) {
		snprintf(buf, sizeof(buf), "all CPUs");
	}
	s->name = strdup(buf);
	return s->name ? 0 : -ENOMEM;
}

int
collector_scope_resolve(struct collector_scope *s, const char *const *cgroups,
			size_t n_cgroups, const struct cpulist *cpus, char *err,
			size_t errlen)
{
	enum { RELLEN = 1024 };
	char *rels = NULL;
	int ret;

	memset(s, 0, sizeof(*s));
	s->cpus = cpus;
	ret = scope_check_cpus(cpus, err, errlen);
	if (ret == 0 && n_cgroups) {
		rels = calloc(n_cgroups, RELLEN);
		ret = rels ? scope_open_cgroups(s, cgroups, n_cgroups, rels,
						RELLEN, err, errlen) : -ENOMEM;
	}
	if (ret == 0)
		ret = scope_name(s, rels, RELLEN, cpus);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	free(rels);
	if (ret < 0)
		collector_scope_fini(s);
	return ret;
}

void
collector_scope_fini(struct collector_scope *s)
{
	for (size_t i = 0; i < s->n_cgroups; i++)
		close(s->cgroup_fds[i]);
	free(s->cgroup_fds);
	free(s->name);
	memset(s, 0, sizeof(*s));
}
