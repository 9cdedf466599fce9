/*
 * The allocation event beside every source (issue 18): the exit of every
 * syscall that makes or ends anonymous memory (mmap, munmap, mremap,
 * brk), from the tracepoint raw_syscalls:sys_exit filtered in the kernel
 * to those four.  Each record has the user registers (the syscall's
 * arguments are still in them at exit), the RAW id and ret, the user
 * stack and call chain, so the collector can unwind to the code that
 * allocated (src/aggr/allocs.c).  Exits only, so a call is complete
 * in one record; one tracepoint rather than four syscalls:sys_exit_*,
 * because closing each costs an RCU grace period (tens of ms) and each
 * watched thread a descriptor.  x86-64 syscall numbers.  Built by the
 * main thread before anything starts.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"
#include "source.h"
#include "sysfs.h"

/* x86-64 user registers: AX BX CX DX SI DI BP SP IP, R8-R15 (the order
 * of arch/x86/include/uapi/asm/perf_regs.h). */
#define ALLOC_REGS_MASK (((UINT64_C(1) << 9) - 1) | (UINT64_C(0xff) << 16))

/* mmap, munmap, brk, mremap (arch/x86/entry/syscalls/syscall_64.tbl;
 * src/aggr/allocs.c reads the same numbers). */
const char *
source_alloc_filter(void)
{
	return "id == 9 || id == 11 || id == 12 || id == 25";
}

/* One event spec from tracefs; 0 or -errno with why filled. */
/* Descriptors to spare for one held open (RLIMIT_NOFILE >= 256). */
static bool
alloc_fds_plenty(void)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur >= 256;
}

static int
alloc_event(struct event_spec *ev, const char *name, int *hold, char *why,
	    size_t whylen)
{
	struct open_params probe = { .pid = 0, .cpu = -1, .group_fd = -1,
				     .period = 1 };
	char rel[96], path[256], buf[4096];
	int ret;

	snprintf(rel, sizeof(rel), "events/%s/id", name);
	ret = tracefs_path(path, sizeof(path), rel);
	if (ret < 0 && tracefs_mount() == 0)
		ret = tracefs_path(path, sizeof(path), rel);
	if (ret < 0 || sysfs_read(path, buf, sizeof(buf)) <= 0) {
		snprintf(why, whylen, "tracepoint %s not found or "
			 "not readable (fix: run as root, or give CAP_PERFMON "
			 "and make tracefs readable; needs "
			 "CONFIG_FTRACE_SYSCALLS)", name);
		return ret < 0 ? ret : -ENOENT;
	}
	memset(ev, 0, sizeof(*ev));
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = strtoull(buf, NULL, 10);
	snprintf(rel, sizeof(rel), "events/%s/format", name);
	if (tracefs_path(path, sizeof(path), rel) < 0 ||
	    sysfs_read(path, buf, sizeof(buf)) <= 0 ||
	    (ev->tp_addr_off = source_tp_offset(buf, "ret")) < 0 ||
	    (ev->tp_ip_off = source_tp_offset(buf, "id")) < 0) {
		snprintf(why, whylen, "%s: unexpected format", name);
		return -EINVAL;
	}
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	*strchr(ev->name, '/') = ':';
	snprintf(ev->pmu, sizeof(ev->pmu), "tracepoint");
	/* IP and ADDR are not read, but a --record file carries these
	 * samples as the kernel wrote them, and perf script refuses a field
	 * (-F ip, -F addr) that one event of the file lacks. */
	ev->attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			       PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_ADDR | PERF_SAMPLE_RAW |
			       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_CALLCHAIN |
			       PERF_SAMPLE_STACK_USER;
	ev->attr.sample_regs_user = ALLOC_REGS_MASK;
	ev->attr.sample_stack_user = SOURCE_ALLOC_STACK;
	ev->attr.exclude_callchain_kernel = 1;
	ev->attr.exclude_kernel = 0;	/* a tracepoint's regs: kernel */
	ev->attr.exclude_hv = 1;
	ev->role = ROLE_AUX;
	ev->leader = -1;
	ev->tp_error_off = -1;
	/* Proves the privileges, and stays open: closing the tracepoint's
	 * last event waits for an RCU grace period (tens of ms), which the
	 * channels' events then spare a short run's start. */
	ret = source_open_event(ev, &probe);
	if (ret >= 0 && alloc_fds_plenty()) {
		*hold = ret;
		ret = 0;
	} else if (ret >= 0) {
		close(ret);	/* a descriptor is worth more than the wait */
		ret = 0;
	}
	if (ret < 0)
		snprintf(why, whylen, "tracepoint %s: %s (fix: run as root, or "
			 "give CAP_PERFMON, or kernel.perf_event_paranoid -1)",
			 name, strerror(-ret));
	return ret;
}

int
source_alloc_init(struct source *src)
{
	char why[sizeof(src->alloc_note) - 32];
	int ret = 0;

	src->n_alloc = 0;
	src->alloc_hold_fd = -1;
#ifndef __x86_64__
	snprintf(src->alloc_note, sizeof(src->alloc_note),
		 "objects: off (allocation sites are read on x86-64 only)");
	return -ENOTSUP;
#endif
	if (getenv("MEMTOP_NO_OBJECTS")) {
		snprintf(src->alloc_note, sizeof(src->alloc_note),
			 "objects: off (MEMTOP_NO_OBJECTS)");
		return -ENOTSUP;
	}
	ret = alloc_event(&src->alloc[0], "raw_syscalls/sys_exit",
			  &src->alloc_hold_fd, why, sizeof(why));
	if (ret < 0) {
		snprintf(src->alloc_note, sizeof(src->alloc_note),
			 "objects: off: %s", why);
		log_msg("%s", src->alloc_note);
		return ret;
	}
	src->n_alloc = 1;
	snprintf(src->alloc_note, sizeof(src->alloc_note),
		 "objects: mmap, munmap, mremap, brk of the targets, named by "
		 "the first caller outside the allocator");
	return 0;
}
