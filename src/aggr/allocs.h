/*
 * Allocation events into the object table (issue 18), for both frame
 * producers: a SAMPLE record of raw_syscalls:sys_exit (mmap, munmap,
 * mremap, brk) with its user registers, user stack and call chain ->
 * decoded -> the allocating stack unwound -> the object table.  Live, the
 * records come from each channel's allocation ring
 * (collector/live/allocs_live.c); in replay, from a --record file
 * (collector/replay/replay_feed.c), unwound with the capture's mappings.
 * The site of an object is the first frame outside the allocator
 * (unwind.h), then its next OBJTAB_CALLERS frames.  The producer's thread
 * only.
 */
#ifndef MEMTOP_ALLOCS_H
#define MEMTOP_ALLOCS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "objtab.h"

struct unwinder;
struct unwind_frame;
struct names;
struct alloc_rec;
struct frame;

/* What an allocation record holds, from its event's attr. */
struct allocs_event {
	uint64_t sample_type;
	uint64_t regs_user;	/* sample_regs_user (perf's x86 order) */
	int32_t ret_off;	/* raw_syscalls:sys_exit's ret in RAW */
	int32_t id_off;		/* its syscall number */
};

/* The payload offsets of raw_syscalls:sys_exit (common fields, then long
 * id, long ret), the same on every x86-64 kernel that has it. */
#define ALLOCS_SYS_EXIT_ID_OFF 8
#define ALLOCS_SYS_EXIT_RET_OFF 16
/* The user registers an allocation record needs: AX BX CX DX SI DI BP SP
 * IP, R8-R15 (arch/x86/include/uapi/asm/perf_regs.h order). */
#define ALLOCS_REGS_MASK (((UINT64_C(1) << 9) - 1) | (UINT64_C(0xff) << 16))

/* What an allocation event made (x86-64 syscall numbers). */
enum alloc_call { ALLOC_NONE, ALLOC_MMAP, ALLOC_MUNMAP, ALLOC_MREMAP,
		  ALLOC_BRK };
enum alloc_call allocs_call(int64_t nr);

#define ALLOCS_BRKS 64		/* processes whose brk is followed */

struct allocs_stats {
	uint64_t events;	/* allocation records read */
	uint64_t objects;	/* objects made (mmap, mremap, brk growth) */
	uint64_t unwound;	/* named through the DWARF walk */
	uint64_t chained;	/* named through the call chain */
	uint64_t unknown;	/* no site could be named */
	uint64_t bad;		/* records that did not decode */
	uint64_t lost;		/* records the kernel dropped (LOST) */
};

struct allocs {
	struct objtab *objs;
	struct unwinder *unw;
	struct alloc_rec *queue;	/* decoded, walks in flight */
	size_t n_queued;
	/* The break of the processes whose brk calls came last: a process
	 * past ALLOCS_BRKS takes the slot of the one idle longest. */
	struct {
		int32_t pid;
		uint64_t brk;
		uint64_t used;	/* brk_clock at its last call */
	} brks[ALLOCS_BRKS];
	size_t n_brks;
	uint64_t brk_clock;
	struct allocs_stats st;
};

/* 0 or -ENOMEM.  max_objects as objtab_new(). */
int allocs_init(struct allocs *a, size_t max_objects);
/* Replay: modules for unwinding from names' recorded mappings (MMAP2
 * records, build ids), never /proc (unwind_use_names). */
void allocs_use_names(struct allocs *a, struct names *names);
/* The site of frames f[0..n): the first outside the allocator and its
 * callers, interned in t.  true when one was found (the heap probes'
 * sites too, collector/live/heapobjs.c). */
bool allocs_pick(struct objtab *t, const struct unwind_frame *f, int n,
		 int64_t *site);
void allocs_fini(struct allocs *a);	/* NULL-safe, idempotent */

/* Decodes and applies one SAMPLE record of allocation event ev (host
 * byte order), and any queued before it. */
void allocs_record(struct allocs *a, const struct allocs_event *ev,
		   const struct perf_event_header *hdr);
/* Decodes one record and queues it, its walk sent to the unwind helper
 * (a drain's walks in one wake-up of it): applied when the queue is full
 * or at allocs_flush.  hdr need not outlive the call. */
void allocs_queue(struct allocs *a, const struct allocs_event *ev,
		  const struct perf_event_header *hdr);
/* Applies the records queued, in order (the end of a drain). */
void allocs_flush(struct allocs *a);
/* The frame's counts of this table: records lost or bad
 * (objects_lost), frames named without the unwind helper
 * (names_unwind_fallbacks). */
void allocs_frame(const struct allocs *a, struct frame *f);
/* pid called exec(2) at time: the objects of its old image end. */
void allocs_exec(struct allocs *a, int32_t pid, uint64_t time);
/* pid exited: its stacks are no longer unwound (objects stay, to name
 * the pages of its last frame). */
void allocs_exit(struct allocs *a, int32_t pid);

#endif
