#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base.h"
#include "sysfs.h"

int
sysfs_path(char *buf, size_t len, const char *rel)
{
	const char *root = getenv("MEMTOP_SYSFS_ROOT");
	int n;

	n = snprintf(buf, len, "%s/sys/%s", root ? root : "", rel);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int
sysfs_read(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if (len == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (int)n;
}

/* include/uapi/linux/magic.h */
#define SYSFS_TRACEFS_MAGIC 0x74726163

int
tracefs_mount(void)
{
	static const char dir[] = "/sys/kernel/tracing";
	struct statfs st;

	if (geteuid() != 0)
		return -EPERM;
	if (statfs(dir, &st) < 0)
		return -errno;
	if (st.f_type == SYSFS_TRACEFS_MAGIC)
		return -EEXIST;
	return mount("nodev", dir, "tracefs", 0, NULL) < 0 ? -errno : 0;
}

int
tracefs_path(char *buf, size_t len, const char *rel)
{
	static const char *const mounts[] = {
		"/sys/kernel/tracing",
		"/sys/kernel/debug/tracing",
	};

	for (size_t i = 0; i < ARRAY_SIZE(mounts); i++) {
		int n = snprintf(buf, len, "%s/%s", mounts[i], rel);

		if (n < 0 || (size_t)n >= len)
			return -ENAMETOOLONG;
		if (access(buf, R_OK) == 0)
			return 0;
	}
	return -ENOENT;
}
