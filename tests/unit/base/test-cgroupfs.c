/* cgroupfs (src/base/cgroupfs.c): the hierarchy -G uses from a mounts
 * file (unified, hybrid, v1 with perf_event, none), cgroup names into
 * directories, and /proc/self/cgroup. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "testlib.h"

static char mounts_path[] = "/tmp/memtop-test-cgroupfs.XXXXXX";

static int
mount_of(const char *text, char *dir, size_t len, bool *v2)
{
	FILE *f = fopen(mounts_path, "w");

	if (!f)
		return -errno;
	fputs(text, f);
	fclose(f);
	return cgroupfs_mount(mounts_path, dir, len, v2);
}

static void
test_mount(void)
{
	char dir[256];
	bool v2 = false;

	/* Unified: cgroup2 at /sys/fs/cgroup. */
	check_eq_i64(mount_of("sysfs /sys sysfs rw 0 0\n"
			      "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n",
			      dir, sizeof(dir), &v2), 0);
	check_eq_str(dir, "/sys/fs/cgroup");
	check(v2);
	/* Hybrid without perf_event on v1: cgroup2 at .../unified. */
	check_eq_i64(mount_of("tmpfs /sys/fs/cgroup tmpfs rw 0 0\n"
			      "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n"
			      "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n"
			      "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n",
			      dir, sizeof(dir), &v2), 0);
	check_eq_str(dir, "/sys/fs/cgroup/unified");
	check(v2);
	/* perf_event bound to v1: that hierarchy, even after cgroup2. */
	check_eq_i64(mount_of("cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n"
			      "cgroup /sys/fs/cgroup/perf\\040event cgroup "
			      "rw,nosuid,perf_event 0 0\n",
			      dir, sizeof(dir), &v2), 0);
	check_eq_str(dir, "/sys/fs/cgroup/perf event");
	check(!v2);
	/* "perf_events" or "xperf_event" are other names. */
	check_eq_i64(mount_of("cgroup /a cgroup rw,perf_events 0 0\n"
			      "cgroup /b cgroup rw,xperf_event 0 0\n",
			      dir, sizeof(dir), &v2), -ENOENT);
	check_eq_i64(mount_of("", dir, sizeof(dir), &v2), -ENOENT);
	check_eq_i64(mount_of("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n", dir,
			      4, &v2), -ENAMETOOLONG);
	check(cgroupfs_mount("/nonexistent/mounts", dir, sizeof(dir), &v2) < 0);
}

static void
test_resolve(void)
{
	const char *m = "/sys/fs/cgroup/unified";
	char dir[256], rel[256];

	check_eq_i64(cgroupfs_resolve(m, "a/b", dir, sizeof(dir), rel,
				      sizeof(rel)), 0);
	check_eq_str(dir, "/sys/fs/cgroup/unified/a/b");
	check_eq_str(rel, "/a/b");
	check_eq_i64(cgroupfs_resolve(m, "/a/b/", dir, sizeof(dir), rel,
				      sizeof(rel)), 0);
	check_eq_str(dir, "/sys/fs/cgroup/unified/a/b/");
	check_eq_str(rel, "/a/b");
	check_eq_i64(cgroupfs_resolve(m, "/sys/fs/cgroup/unified/k8s/pod",
				      dir, sizeof(dir), rel, sizeof(rel)), 0);
	check_eq_str(dir, "/sys/fs/cgroup/unified/k8s/pod");
	check_eq_str(rel, "/k8s/pod");
	check_eq_i64(cgroupfs_resolve(m, "/", dir, sizeof(dir), rel,
				      sizeof(rel)), 0);
	check_eq_str(dir, "/sys/fs/cgroup/unified");
	check_eq_str(rel, "/");
	/* A path that only starts like the mount is a name under it. */
	check_eq_i64(cgroupfs_resolve(m, "/sys/fs/cgroup/unifiedx", dir,
				      sizeof(dir), rel, sizeof(rel)), 0);
	check_eq_str(rel, "/sys/fs/cgroup/unifiedx");
	check_eq_i64(cgroupfs_resolve(m, "", dir, sizeof(dir), rel,
				      sizeof(rel)), -EINVAL);
	check_eq_i64(cgroupfs_resolve(m, "a/../../etc", dir, sizeof(dir), rel,
				      sizeof(rel)), -EINVAL);
	check_eq_i64(cgroupfs_resolve(m, "..", dir, sizeof(dir), rel,
				      sizeof(rel)), -EINVAL);
	check_eq_i64(cgroupfs_resolve(m, "a..b", dir, sizeof(dir), rel,
				      sizeof(rel)), 0);
	check_eq_i64(cgroupfs_resolve(m, "abc", dir, 8, rel, sizeof(rel)),
		     -ENAMETOOLONG);
}

static void
test_of_pid(void)
{
	char buf[512];

	/* Every Linux with cgroups lists the process in some hierarchy. */
	if (access("/proc/self/cgroup", R_OK) != 0)
		test_skip("no /proc/self/cgroup");
	check_eq_i64(cgroupfs_of_pid(getpid(), true, buf, sizeof(buf)), 0);
	check(buf[0] == '/');
	check(cgroupfs_of_pid(-5, true, buf, sizeof(buf)) < 0);
}

int
main(void)
{
	int fd = mkstemp(mounts_path);

	if (fd < 0)
		test_skip("mkstemp");
	close(fd);
	test_mount();
	test_resolve();
	test_of_pid();
	unlink(mounts_path);
	return test_result();
}
