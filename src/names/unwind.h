/*
 * User stacks unwound with elfutils' libdwfl (issue 18): a copy of a
 * thread's user registers and stack, taken by the kernel at a syscall
 * (PERF_SAMPLE_REGS_USER + STACK_USER), walked with the CFI of the
 * process's modules, found through /proc/PID/maps (or, in replay, the
 * capture's mappings: unwind_use_names).  Works for code
 * without frame pointers (Debian's libc, most -O2 programs).
 *
 * The walk and the naming parse the target's ELF and DWARF, so they run
 * in the unwind helper, a process without privileges (unwind_int.h,
 * sandbox_int.h; forked by unwinder_new); the collector keeps each
 * process's module list until unwind_forget() or unwind_stale().  When
 * the helper fails, the frames are the collector's own fallback (a pc's
 * module and file offset, or [unknown]), counted (unwinder_stats).
 * Collector thread only (unwinder_new: before it starts).
 */
#ifndef MEMTOP_UNWIND_H
#define MEMTOP_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* x86-64 DWARF registers 0-16: rax rdx rcx rbx rsi rdi rbp rsp r8-r15
 * rip. */
#define UNWIND_REGS 17
/* Frames named after the first one outside the allocator. */
#define UNWIND_CALLERS 3

struct unwind_frame {
	uint64_t pc;
	char name[112];		/* "make_table+0x1c", "[libfoo.so]+0x1" */
	/* In an allocator's module (libc, ld.so, libstdc++, jemalloc,
	 * tcmalloc): not an allocation site. */
	bool allocator;
};

struct unwinder;
struct names;

struct unwinder *unwinder_new(void);
void unwinder_free(struct unwinder *u);	/* NULL-safe */
/* Replay: pid's modules are the ELF files names found for the capture's
 * MMAP2 records (proved by build id, at their recorded place, opened by
 * their path), never /proc.  names must outlive u. */
void unwind_use_names(struct unwinder *u, struct names *names);

/* pid's modules changed (a file was mapped) or pid exited: its module
 * list is read again at the next use, or dropped. */
void unwind_stale(struct unwinder *u, int pid);
void unwind_forget(struct unwinder *u, int pid);

/*
 * Walks tid's stack: regs as above, stack the copy of `size` bytes that
 * began at regs' rsp.  Up to max frames into out, innermost first, up to
 * the first frame outside the allocator and UNWIND_CALLERS more; only
 * those are named (the others have name ""), or, when every frame is an
 * allocator's, the last.  Returns the number of frames (>= 1 when the
 * first pc could be named), or -errno when pid's modules cannot be read
 * (it exited).
 */
int unwind_frames(struct unwinder *u, int pid, int tid,
		  const uint64_t regs[UNWIND_REGS], const void *stack,
		  uint64_t size, struct unwind_frame *out, size_t max);

/*
 * The same walk in two halves, so that a drain's walks are in the helper
 * together (one wake-up for many): unwind_walk_send queues one (at most
 * 32 in flight: -EBUSY), or returns -ESRCH (pid's modules cannot be
 * read; nothing queued); unwind_walk_recv gives the frames of the oldest
 * queued walk, as unwind_frames would (a fallback name when the helper
 * failed), or -ENOENT when none is queued.
 */
int unwind_walk_send(struct unwinder *u, int pid, int tid,
		     const uint64_t regs[UNWIND_REGS], const void *stack,
		     uint64_t size, size_t max);
int unwind_walk_recv(struct unwinder *u, struct unwind_frame *out,
		     size_t max);

/* Names n pcs of pid (a call chain's entries; at most 64) into out: the
 * count named, or -errno (-ESRCH: pid's modules cannot be read). */
int unwind_names(struct unwinder *u, int pid, const uint64_t *pcs, size_t n,
		 struct unwind_frame *out);

struct unwind_stats {
	uint64_t starts;	/* helper processes started */
	uint64_t failures;	/* helpers killed: crashed, hung, nonsense */
	uint64_t fallbacks;	/* frames named without the helper */
	int32_t pid;		/* the running helper, 0 when none */
};

void unwinder_stats(const struct unwinder *u, struct unwind_stats *st);
/* Overrides MEMTOP_UNWIND_TIMEOUT_MS (1000): the wait per request. */
void unwinder_timeout(struct unwinder *u, unsigned ms);

/*
 * A sample's user registers (REGS_USER: one u64 for each bit of perf's
 * x86-64 mask, AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8-R15
 * in that order) into regs in the DWARF order above (0 for those the
 * mask lacks).  false when the mask lacks SP or IP, or n, the values'
 * count, is not the mask's.
 */
bool unwind_regs_from_perf(uint64_t mask, const void *vals, uint64_t n,
			   uint64_t regs[UNWIND_REGS]);

/* Is a module file name (its base name) an allocator's? */
bool unwind_is_allocator(const char *module);

#endif
