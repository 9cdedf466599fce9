/*
 * Soft-dirty probe and re-arm.  See softdirty.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "softdirty.h"

/* fs/proc/task_mmu.c: PM_SOFT_DIRTY. */
#define SOFTDIRTY_PAGEMAP_BIT 55

int
softdirty_probe(char *why, size_t whylen)
{
	long psz = sysconf(_SC_PAGESIZE);
	const char *env = getenv("MEMTOP_SOFTDIRTY");
	volatile char *p;
	uint64_t entry = 0;
	ssize_t n;
	int fd, ret = 0;

	if (env && strcmp(env, "0") == 0) {
		snprintf(why, whylen, "kernel without soft-dirty "
			 "(MEMTOP_SOFTDIRTY=0)");
		return -EOPNOTSUPP;
	}
	p = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		snprintf(why, whylen, "mmap: %s", strerror(-ret));
		return ret;
	}
	p[0] = 1;
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, whylen, "/proc/self/pagemap: %s", strerror(-ret));
		goto out;
	}
	n = pread(fd, &entry, sizeof(entry),
		  (off_t)((uintptr_t)p / (uintptr_t)psz * sizeof(entry)));
	if (n != (ssize_t)sizeof(entry)) {
		ret = n < 0 ? -errno : -EIO;
		snprintf(why, whylen, "/proc/self/pagemap: %s",
			 strerror(-ret));
	} else if (!((entry >> SOFTDIRTY_PAGEMAP_BIT) & 1)) {
		ret = -EOPNOTSUPP;
		snprintf(why, whylen, "kernel without soft-dirty (fix: a "
			 "kernel built with CONFIG_MEM_SOFT_DIRTY=y, as "
			 "Debian's, Ubuntu's and Fedora's are)");
	}
	close(fd);
out:
	munmap((void *)p, (size_t)psz);
	return ret;
}

int
softdirty_clear(pid_t pid)
{
	char path[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "4", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

void
softdirty_explain(int err, pid_t pid, char *buf, size_t len)
{
	const char *fix = "";

	if (err == EACCES || err == EPERM)
		fix = " (fix: run memtop as the target's user, or with "
		      "CAP_SYS_PTRACE)";
	else if (err == ENOENT || err == ESRCH)
		fix = " (the process is gone)";
	snprintf(buf, len, "pid %d: /proc/%d/clear_refs: %s%s", (int)pid,
		 (int)pid, strerror(err), fix);
}
