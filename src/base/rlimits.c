#include "config.h"

/* See rlimits.h. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "procfs.h"
#include "rlimits.h"

#define RLIMITS_MIN_RING_PAGES	2

const char *
rlimits_hint(int errnum, const char *msg, char *buf, size_t len)
{
	struct rlimit rl;

	if (!buf || len == 0)
		return "";
	buf[0] = '\0';
	if (errnum < 0)
		errnum = -errnum;
	if (errnum == EMFILE) {
		if (msg && strstr(msg, "RLIMIT_NOFILE"))
			return buf;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY)
			snprintf(buf, len, "; raise RLIMIT_NOFILE (ulimit -n, "
				 "now %llu)", (unsigned long long)rl.rlim_cur);
		else
			snprintf(buf, len, "; raise RLIMIT_NOFILE (ulimit -n)");
	} else if (errnum == ENFILE) {
		if (msg && strstr(msg, "file-max"))
			return buf;
		snprintf(buf, len, "; the system's open-file table is full "
			 "(sysctl fs.file-max)");
	}
	return buf;
}

unsigned long
rlimits_ring_budget(void)
{
	long page = sysconf(_SC_PAGESIZE), cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int paranoid = procfs_read_int("/proc/sys/kernel/perf_event_paranoid",
				       2);
	int mlock_kb = procfs_read_int("/proc/sys/kernel/perf_event_mlock_kb",
				       516);
	unsigned long long kb;
	struct rlimit rl;

	/* Root has CAP_IPC_LOCK; paranoid -1 lifts the limit for all. */
	if (geteuid() == 0 || paranoid < 0 || page <= 0)
		return 0;
	kb = (unsigned long long)(mlock_kb > 0 ? mlock_kb : 0) *
	     (unsigned long long)(cpus > 0 ? cpus : 1);
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
		if (rl.rlim_cur == RLIM_INFINITY)
			return 0;
		kb += rl.rlim_cur / 1024;
	}
	return (unsigned long)(kb * 1024 / (unsigned long long)page);
}

unsigned
rlimits_ring_pages(unsigned want, unsigned threads, unsigned long budget_pages,
		   unsigned extra_pages)
{
	unsigned long each;
	unsigned pages = RLIMITS_MIN_RING_PAGES;

	if (want <= RLIMITS_MIN_RING_PAGES || budget_pages == 0)
		return want;
	if (threads == 0)
		threads = 1;
	each = budget_pages / (2ul * threads);
	/* Largest power of two with 1 + pages + extra <= each, in bounds. */
	while (pages * 2 <= want && 1ul + pages * 2 + extra_pages <= each)
		pages *= 2;
	return pages;
}
