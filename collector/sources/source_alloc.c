/*
 * The allocation events beside every source (issue 18): the exits of the
 * syscalls that make and end anonymous mappings, syscalls:sys_exit_mmap,
 * sys_exit_munmap, sys_exit_mremap and sys_exit_brk, each with the user
 * registers (the syscall's arguments are still in them at exit, the
 * return value is the RAW `ret`), and for those that make memory the
 * user stack and call chain, so the collector can unwind to the code
 * that allocated it (collector/live/allocs.c).  Exits only, so an event
 * is complete in one record and needs no pairing with its entry.
 * Built by the main thread before anything starts.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "source.h"
#include "sysfs.h"

/* x86-64 user registers: AX BX CX DX SI DI BP SP IP, R8-R15 (the order
 * of arch/x86/include/uapi/asm/perf_regs.h). */
#define ALLOC_REGS_MASK (((UINT64_C(1) << 9) - 1) | (UINT64_C(0xff) << 16))

static const struct {
	const char *name;
	enum alloc_call call;
	bool stack;
} alloc_events[] = {
	{ "sys_exit_mmap", ALLOC_MMAP, true },
	{ "sys_exit_munmap", ALLOC_MUNMAP, false },
	{ "sys_exit_mremap", ALLOC_MREMAP, true },
	{ "sys_exit_brk", ALLOC_BRK, true },
};

/* One event spec from tracefs; 0 or -errno with why filled. */
static int
alloc_event(struct event_spec *ev, const char *name, bool stack, char *why,
	    size_t whylen)
{
	char rel[96], path[256], buf[4096];
	int ret;

	snprintf(rel, sizeof(rel), "events/syscalls/%s/id", name);
	ret = tracefs_path(path, sizeof(path), rel);
	if (ret < 0 && tracefs_mount() == 0)
		ret = tracefs_path(path, sizeof(path), rel);
	if (ret < 0 || sysfs_read(path, buf, sizeof(buf)) <= 0) {
		snprintf(why, whylen, "tracepoint syscalls:%s not found or "
			 "not readable (fix: run as root, or give CAP_PERFMON "
			 "and make tracefs readable; needs "
			 "CONFIG_FTRACE_SYSCALLS)", name);
		return ret < 0 ? ret : -ENOENT;
	}
	memset(ev, 0, sizeof(*ev));
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = strtoull(buf, NULL, 10);
	snprintf(rel, sizeof(rel), "events/syscalls/%s/format", name);
	if (tracefs_path(path, sizeof(path), rel) < 0 ||
	    sysfs_read(path, buf, sizeof(buf)) <= 0 ||
	    (ev->tp_addr_off = source_tp_offset(buf, "ret")) < 0) {
		snprintf(why, whylen, "syscalls:%s: unexpected format", name);
		return -EINVAL;
	}
	snprintf(ev->name, sizeof(ev->name), "syscalls:%s", name);
	snprintf(ev->pmu, sizeof(ev->pmu), "tracepoint");
	ev->attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_RAW |
			       PERF_SAMPLE_REGS_USER;
	ev->attr.sample_regs_user = ALLOC_REGS_MASK;
	if (stack) {
		ev->attr.sample_type |= PERF_SAMPLE_CALLCHAIN |
					PERF_SAMPLE_STACK_USER;
		ev->attr.sample_stack_user = SOURCE_ALLOC_STACK;
		ev->attr.exclude_callchain_kernel = 1;
	}
	ev->attr.exclude_kernel = 0;	/* a tracepoint's regs: kernel */
	ev->attr.exclude_hv = 1;
	ev->role = ROLE_AUX;
	ev->leader = -1;
	ev->tp_ip_off = ev->tp_error_off = -1;
	ret = source_probe_event(ev);
	if (ret < 0)
		snprintf(why, whylen, "tracepoint syscalls:%s: %s (needs "
			 "CAP_PERFMON or root, or kernel.perf_event_paranoid "
			 "-1)", name, strerror(-ret));
	return ret;
}

int
source_alloc_init(struct source *src)
{
	char why[sizeof(src->alloc_note) - 32];
	int ret = 0;

	src->n_alloc = 0;
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
	for (size_t i = 0; i < sizeof(alloc_events) / sizeof(alloc_events[0]);
	     i++) {
		struct event_spec *ev = &src->alloc[i];

		ret = alloc_event(ev, alloc_events[i].name,
				  alloc_events[i].stack, why, sizeof(why));
		if (ret < 0) {
			snprintf(src->alloc_note, sizeof(src->alloc_note),
				 "objects: off: %s", why);
			log_msg("%s", src->alloc_note);
			return ret;
		}
		ev->alloc = alloc_events[i].call;
	}
	src->n_alloc = sizeof(alloc_events) / sizeof(alloc_events[0]);
	snprintf(src->alloc_note, sizeof(src->alloc_note),
		 "objects: mmap, munmap, mremap, brk of the targets, named by "
		 "the first caller outside the allocator");
	return 0;
}
