/*
 * Heap probes (--heap-objects, issue 18): uprobes and uretprobes on the
 * target's allocator functions through the `uprobe` PMU
 * (/sys/bus/event_source/devices/uprobe: its type, and the config bit
 * that makes a return probe, format/retprobe), the file named by a path
 * pointer in config1 and the function by its file offset in config2
 * (include/uapi/linux/perf_event.h, uprobe_path and probe_offset).  The
 * live collector finds the files and offsets (collector/live/heapprobe.c);
 * this says what to open.  Built by the main thread before anything
 * starts.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"
#include "sysfs.h"

/* perf's x86 register numbers (arch/x86/include/uapi/asm/perf_regs.h). */
#define HEAP_REG(n) (UINT64_C(1) << (n))
#define HEAP_AX 0
#define HEAP_DI 5
#define HEAP_SP 7
/* AX BX CX DX SI DI BP SP IP and R8-R15: what unwinding needs. */
#define HEAP_REGS_ALL (((UINT64_C(1) << 9) - 1) | (UINT64_C(0xff) << 16))
#define HEAP_CAP_PERFMON 38

static int
heap_pmu(int *type, int *ret_bit, char *why, size_t whylen)
{
	char path[256], buf[64];
	const char *colon;

	if (sysfs_path(path, sizeof(path),
		       "bus/event_source/devices/uprobe/type") < 0 ||
	    sysfs_read(path, buf, sizeof(buf)) <= 0) {
		snprintf(why, whylen, "no uprobe PMU (/sys/bus/event_source/"
			 "devices/uprobe; fix: a kernel with "
			 "CONFIG_UPROBE_EVENTS)");
		return -ENOENT;
	}
	*type = atoi(buf);
	*ret_bit = 0;
	if (sysfs_path(path, sizeof(path),
		       "bus/event_source/devices/uprobe/format/retprobe") == 0 &&
	    sysfs_read(path, buf, sizeof(buf)) > 0 &&
	    (colon = strchr(buf, ':')) != NULL)
		*ret_bit = atoi(colon + 1);
	return 0;
}

/* Root, or CAP_PERFMON in the effective set: what the uprobe PMU asks
 * (it refuses everyone else, whatever perf_event_paranoid says). */
static bool
heap_perfmon(void)
{
	char buf[4096], *p;
	FILE *f;
	unsigned long long eff = 0;

	if (geteuid() == 0)
		return true;
	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	while (fgets(buf, sizeof(buf), f))
		if ((p = strstr(buf, "CapEff:")) == buf)
			eff = strtoull(buf + 7, NULL, 16);
	fclose(f);
	return (eff >> HEAP_CAP_PERFMON) & 1;
}

int
source_heap_check(char *why, size_t whylen)
{
	int type, bit, ret;

#ifndef __x86_64__
	snprintf(why, whylen, "heap objects are read on x86-64 only");
	return -ENOTSUP;
#endif
	ret = heap_pmu(&type, &bit, why, whylen);
	if (ret < 0)
		return ret;
	if (!heap_perfmon()) {
		snprintf(why, whylen, "uprobes need root or CAP_PERFMON (fix: "
			 "sudo, or setcap cap_perfmon+ep on memtop)");
		return -EACCES;
	}
	snprintf(why, whylen, "uprobe PMU type %d", type);
	return 0;
}

int
source_heap_add(struct source *src, int lib, uint64_t off, enum heap_fn fn,
		bool ret, uint64_t period)
{
	struct event_spec *ev;
	int type, bit, rc;
	char why[160];

	if (src->n_alloc == 0 || src->n_alloc >= SOURCE_ALLOC_EVENTS ||
	    lib < 0 || lib > 1)
		return -ENOSPC;
	rc = heap_pmu(&type, &bit, why, sizeof(why));
	if (rc < 0)
		return rc;
	ev = &src->alloc[src->n_alloc];
	memset(ev, 0, sizeof(*ev));
	ev->attr.type = (uint32_t)type;
	ev->attr.config = ret ? UINT64_C(1) << bit : 0;
	ev->attr.config1 = (uint64_t)(uintptr_t)src->heap_paths[lib];
	ev->attr.config2 = off;
	ev->attr.sample_period = period ? period : 1;
	ev->attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER;
	/* What each record needs, and no more: it is copied at every call. */
	if (fn == HEAP_FREE) {
		ev->attr.sample_regs_user = HEAP_REG(HEAP_DI) |
					    HEAP_REG(HEAP_SP);
	} else if (ret) {
		ev->attr.sample_regs_user = HEAP_REG(HEAP_AX) |
					    HEAP_REG(HEAP_SP);
		if (fn == HEAP_MEMALIGN) {
			ev->attr.sample_type |= PERF_SAMPLE_STACK_USER;
			ev->attr.sample_stack_user = SOURCE_HEAP_RET_STACK;
		}
	} else {
		ev->attr.sample_regs_user = HEAP_REGS_ALL;
		ev->attr.sample_type |= PERF_SAMPLE_STACK_USER;
		ev->attr.sample_stack_user = SOURCE_HEAP_STACK;
	}
	ev->attr.exclude_hv = 1;
	snprintf(ev->name, sizeof(ev->name), "%s+%#llx%s",
		 strrchr(src->heap_paths[lib], '/') ?
		 strrchr(src->heap_paths[lib], '/') + 1 : src->heap_paths[lib],
		 (unsigned long long)off, ret ? "%return" : "");
	snprintf(ev->pmu, sizeof(ev->pmu), "uprobe");
	ev->role = ROLE_AUX;
	ev->leader = -1;
	ev->tp_addr_off = ev->tp_ip_off = ev->tp_error_off = -1;
	ev->heap_fn = fn;
	ev->heap_ret = ret;
	src->n_alloc++;
	return 0;
}
