/*
 * Sampling sources: a table of event rows that a channel opens for every
 * thread, plus how to turn a decoded record into a struct sample.
 * Built once at start by the main thread, read-only afterwards (the
 * collector thread reads it).
 */
#ifndef MEMTOP_SOURCE_H
#define MEMTOP_SOURCE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "heapopt.h"
#include "sample.h"
#include "source_choice.h"

/* Hybrid Intel: aux + loads + stores on cpu_core, loads + stores on
 * cpu_atom (and a third core type on Arrow Lake-H). */
#define SOURCE_MAX_EVENTS 8

enum event_role {
	ROLE_LOAD,	/* every sample is a load */
	ROLE_STORE,	/* every sample is a store */
	ROLE_AUX,	/* group leader whose samples are dropped */
	ROLE_OP,	/* load/store from data_src.mem_op */
	ROLE_FAULT,	/* software page fault: kind unknown (other) */
	ROLE_FAULT_TP,	/* exceptions:page_fault_user: kind from error_code */
};

/* Bytes of user stack each allocation event copies for unwinding. */
#define SOURCE_ALLOC_STACK 4096
/* ... and each heap probe's entry (an allocator called from the
 * allocator's own module is unwound from it); a posix_memalign return
 * reads its out pointer from the caller's frame. */
#define SOURCE_HEAP_STACK 512
#define SOURCE_HEAP_RET_STACK 256
/* Heap probes at most: the C allocator's 6 functions (entry and
 * return, free entry only) and libstdc++'s new and delete. */
#define SOURCE_HEAP_EVENTS 24
/* The syscall tracepoint, then the heap probes. */
#define SOURCE_ALLOC_EVENTS (1 + SOURCE_HEAP_EVENTS)

struct event_spec {
	char name[64];		/* as perf names it: "page-faults" */
	char pmu[32];		/* "software", "tracepoint", "cpu", "ibs_op" */
	struct perf_event_attr attr;	/* pid/cpu independent part */
	enum event_role role;
	int leader;		/* index of the group leader, -1 = none */
	/* ROLE_FAULT_TP: byte offsets inside the RAW tracepoint record. */
	int tp_addr_off;
	int tp_ip_off;
	int tp_error_off;	/* the allocation event: tp_addr_off is the
				 * RAW `ret`, tp_ip_off the syscall `id` */
	/* The CPUs its PMU counts on, from the PMU's sysfs `cpus` file
	 * (hybrid parts: cpu_core and cpu_atom each cover their own
	 * cores); "" = every CPU.  See source_event_on_cpu. */
	char cpus[128];
	/* A heap probe: its function, entry or return (uretprobe). */
	enum heap_fn heap_fn;
	bool heap_ret;
};

struct source {
	char name[16];		/* "faults" */
	struct event_spec events[SOURCE_MAX_EVENTS];
	size_t n_events;
	uint64_t default_period;
	bool has_kinds;		/* tells loads from stores */
	/* Samples carry PERIOD (hardware sources); otherwise each sample
	 * stands for the configured period. */
	bool period_in_sample;
	char note[1024];	/* what a sample means, why this source */
	/* Periods the PMU accepts: multiples of period_step (0 = any), at
	 * least period_min (IBS: 16 and 0x90).  See source_period(). */
	uint64_t period_step;
	uint64_t period_min;
	/* damon: no events; the live collector reads DAMON regions
	 * (collector/live/damonfeed.c). */
	bool damon;
	/* The allocation events every channel opens beside the source's,
	 * into a ring of their own (issue 18); n_alloc 0 = none, and
	 * alloc_note says why. */
	struct event_spec alloc[SOURCE_ALLOC_EVENTS];
	size_t n_alloc;
	char alloc_note[256];
	/* The probe's event, kept open until exit (source_alloc.c); -1
	 * none.  Valid only after source_alloc_init. */
	int alloc_hold_fd;
	/* --heap-objects: alloc[1..n_alloc) are uprobes on these files
	 * (the C allocator, libstdc++), named by their attr.config1;
	 * heap_note says what is probed, or what is missing and the fix. */
	char heap_paths[2][512];
	char heap_note[256];
};

/*
 * Picks and builds the source for `choice`, trying for real that its
 * events open on this machine (auto: pebs, ibs, then faults).  On failure
 * returns -errno and a one-line reason in why.
 */
int source_select(enum source_choice choice, struct source *src, char *why,
		  size_t whylen);

/* The options that shape a source's events: the command line's -e, -c
 * and --ldlat, without the rest of the command line. */
struct source_opts {
	enum source_choice choice;
	uint64_t period;	/* -c; 0 = the source's default */
	unsigned ldlat;		/* pebs load latency, cycles; 0 = 30 */
	/* -a/-G and --record: damon watches -a with a paddr context but
	 * not -G (physical memory is not a cgroup's) nor -C, and has no
	 * perf events to record; auto passes it over for those. */
	bool system;
	bool cgroups;		/* -G or -C: only some of the machine */
	bool record;
	/* The allocation events too (source_alloc_init); not for
	 * whole-machine views, where every process's mappings would be
	 * unwound. */
	bool objects;
};

/*
 * As source_select, with the options that shape the events: --ldlat for
 * pebs, and -c, which source_period() adjusts (the note says so).
 */
int source_select_opts(const struct source_opts *opt, struct source *src,
		       char *why, size_t whylen);

/*
 * The period memtop really uses for a wanted one (0 = the default): IBS
 * rounds down to a multiple of 16 and up to 0x90; others take it as is
 * (PEBS minimums are rejected by the kernel, not rounded).
 */
uint64_t source_period(const struct source *src, uint64_t want);

int source_faults_init(struct source *src, char *why, size_t whylen);
/* DAMON (collector/sources/damon.h) for the whole machine (system:
 * paddr) or processes (vaddr): -EBUSY when another user's kdamond is set
 * up (why names it; nothing written), -EOPNOTSUPP (no DAMON, or not
 * those operations), -EACCES. */
int source_damon_init(struct source *src, bool system, char *why,
		      size_t whylen);
/*
 * Adds the allocation events (collector/sources/source_alloc.c) to a
 * selected source: 0, or -errno with n_alloc 0; alloc_note says what
 * they are or what is missing and the fix.
 */
int source_alloc_init(struct source *src);
/* The tracepoint filter the allocation event is opened with. */
const char *source_alloc_filter(void);
/*
 * Heap probes (source_heap.c).  source_heap_check: 0 when the uprobe PMU
 * is there and memtop may open it, else -errno with what is missing and
 * the fix in why.  source_heap_add: a probe on file heap_paths[lib] at
 * file offset off into src->alloc[] (after source_alloc_init), sampling
 * every `period`th call; 0, -ENOSPC, or -errno of the PMU.
 */
int source_heap_check(char *why, size_t whylen);
int source_heap_add(struct source *src, int lib, uint64_t off,
		    enum heap_fn fn, bool ret, uint64_t period);
/* The offset of `field` in a tracefs format file's text, or -1. */
int source_tp_offset(const char *format, const char *field);
/*
 * Hardware sources, built from sysfs (collector/sources/pmu.h).  With the real
 * sysfs they are opened once to prove they work; under MEMTOP_SYSFS_ROOT
 * they are only built.  On failure -errno and `why` = the status line of
 * --list-events without the source name: "not supported by this
 * CPU/kernel (...)", "not supported yet (...)" or "permission denied
 * (... fix ...)".  ldlat 0 = default (30).
 */
int source_pebs_init(struct source *src, unsigned ldlat, char *why,
		     size_t whylen);
int source_ibs_init(struct source *src, char *why, size_t whylen);
/* Arm SPE: always fails; says whether an arm_spe_* PMU is present. */
int source_spe_status(char *why, size_t whylen);

/*
 * Fills out from a decoded SAMPLE record of event `ev`.  Returns 1 when the
 * sample is usable, 0 when it must be dropped as unattributed (no data
 * address, pid -1), -1 when it must be ignored silently (ROLE_AUX).
 */
int source_decode(const struct source *src, const struct event_spec *ev,
		  const struct record_sample *rs, uint64_t period,
		  struct sample *out);

/* x86 page-fault error code bits (arch/x86/include/asm/trap_pf.h). */
#define SOURCE_PF_WRITE (1u << 1)
#define SOURCE_PF_INSTR (1u << 4)

/*
 * The role's rules, shared by source_decode() and the collector's
 * fixed-layout decoder (collector/live/ingest.c): sets s->kind from the role,
 * data_src (ROLE_OP) or the fault's error code `err` (ROLE_FAULT_TP), once
 * s->addr, pid, tid and data_src are filled.  Returns as source_decode().
 * Inline: it runs for every sample.
 */
static inline int
source_classify(const struct event_spec *ev, struct sample *s, uint64_t err)
{
	uint64_t op;

	switch (ev->role) {
	case ROLE_AUX:
		return -1;
	case ROLE_LOAD:
		s->kind = SAMPLE_LOAD;
		break;
	case ROLE_STORE:
		s->kind = SAMPLE_STORE;
		break;
	case ROLE_OP:
		op = s->data_src & 0x1f;
		s->kind = (op & PERF_MEM_OP_LOAD) ? SAMPLE_LOAD :
			  (op & PERF_MEM_OP_STORE) ? SAMPLE_STORE :
			  SAMPLE_OTHER;
		/* IBS without swfilt samples kernel ops too: a kernel data
		 * address (top bit set on x86-64) is not the target's. */
		if (!ev->attr.exclude_kernel && (s->addr >> 63))
			return 0;
		break;
	case ROLE_FAULT:
		s->kind = SAMPLE_OTHER;
		break;
	case ROLE_FAULT_TP:
		if (err & SOURCE_PF_INSTR)
			s->kind = SAMPLE_OTHER;
		else
			s->kind = (err & SOURCE_PF_WRITE) ? SAMPLE_STORE :
							    SAMPLE_LOAD;
		break;
	}
	if (s->addr == 0 || s->pid == -1 || s->tid == -1)
		return 0;
	return 1;
}

/* The sample_type/record layout of an event. */
void source_layout(const struct event_spec *ev, struct record_layout *l);

struct open_params {
	int pid;		/* with pid_cgroup: the cgroup directory's fd */
	int cpu;
	bool pid_cgroup;	/* PERF_FLAG_PID_CGROUP: pid is a cgroup fd */
	int group_fd;		/* -1 = none */
	uint64_t period;
	bool enable_on_exec;
	bool want_task;		/* FORK/EXIT/COMM records (task=1, comm=1) */
	/* MMAP2 of every mapping, with build ids, and COMM (exec marked):
	 * the records that name memory, in the ring of the samples they
	 * name, so in order with them and waking nobody. */
	bool want_mmap;
	bool inherit;		/* follow children (needs cpu >= 0 to mmap) */
	uint32_t watermark_bytes;	/* 0 = kernel default wakeups */
};

/* Whether ev can be opened on cpu (a per-CPU channel): its PMU covers
 * it.  A list that does not parse covers every CPU. */
bool source_event_on_cpu(const struct event_spec *ev, int cpu);

/* Opens ev, always disabled; returns fd or -errno. */
int source_open_event(const struct event_spec *ev,
		      const struct open_params *p);
/* Opens ev on the calling process only to prove it works; 0 or -errno. */
int source_probe_event(const struct event_spec *ev);

/*
 * One line explaining a perf_event_open failure: what failed, the errno
 * text, and the known fix (perf_event_paranoid, CAP_PERFMON,
 * RLIMIT_MEMLOCK, RLIMIT_NOFILE, ptrace scope).
 */
void source_explain_error(int err, const char *what, int pid, char *buf,
			  size_t len);
/*
 * The same for an event of every process on one CPU (-a, -G, -C): what
 * failed, the errno text, and for EACCES/EPERM exactly what is needed
 * (CAP_PERFMON, root, or kernel.perf_event_paranoid <= 0, with the
 * commands that give it).
 */
void source_explain_cpu_error(int err, const char *what, int cpu, char *buf,
			      size_t len);

#endif
