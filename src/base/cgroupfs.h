/*
 * Where cgroups live, for -G: the hierarchy perf_event_open's
 * PERF_FLAG_PID_CGROUP accepts, a cgroup's directory in it, and the
 * cgroup a process belongs to.  Any thread; no state.
 */
#ifndef MEMTOP_CGROUPFS_H
#define MEMTOP_CGROUPFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The mount point of the hierarchy holding the perf_event controller,
 * from a mounts file (/proc/mounts, or a copy in tests): a cgroup v1
 * mount whose options name perf_event when there is one (the controller
 * is then bound there and a cgroup2 directory would not be accepted), else
 * the cgroup2 mount, where perf_event is always on (kernel/events/core.c,
 * perf_event_cgrp_subsys .implicit_on_dfl).  The same choice as perf's
 * cgroupfs_find_mountpoint (tools/perf/util/cgroup.c).  *v2 says which.
 * Never assumes /sys/fs/cgroup: hybrid systems mount cgroup2 at
 * /sys/fs/cgroup/unified.  0, -ENOENT when neither is mounted, -errno.
 */
int cgroupfs_mount(const char *mounts, char *dir, size_t len, bool *v2);

/*
 * The directory of cgroup `name` under the hierarchy mounted at `mount`:
 * a path starting with the mount point is taken as it is; any other name
 * is relative to the mount point, with or without a leading '/' (as perf
 * -G takes it).  rel gets the cgroup's path inside the hierarchy, "/" for
 * the root ("/kubepods/pod1").  0, -EINVAL for an empty name or a ".."
 * component, -ENAMETOOLONG.
 */
int cgroupfs_resolve(const char *mount, const char *name, char *dir,
		     size_t dirlen, char *rel, size_t rellen);

/*
 * The cgroup of pid from /proc/PID/cgroup: the cgroup2 line ("0::/x")
 * when v2, else the line of the v1 hierarchy holding perf_event; either
 * line when the wanted one is missing.  0, -errno (-ENOENT when the
 * process is gone or lists no such line).
 */
int cgroupfs_of_pid(pid_t pid, bool v2, char *buf, size_t len);

#endif
