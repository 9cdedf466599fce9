/*
 * The memory regions of one process, from /proc/PID/maps, and what to call
 * the region an address falls in.  Collector thread only: names.c keeps
 * one struct maps per target pid.
 *
 * Region names (the frame's pages[].region):
 *   [heap] [stack]          as the kernel names them
 *   [stack:TID]             an anonymous region holding thread TID's stack
 *                           pointer (see maps_refresh)
 *   [anon]                  other anonymous private memory
 *   [anon:shared]           shared anonymous memory (/dev/zero (deleted))
 *   [anon:hugetlb]          MAP_HUGETLB memory (/anon_hugepage (deleted))
 *   PATH [bss]              anonymous memory right after a file's private
 *                           writable mapping: where ELF loaders put .bss
 *   PATH+0xOFF              a file mapping; OFF = the address's offset in
 *                           the file
 *   PATH (deleted)+0xOFF    the same for a file deleted since it was mapped
 *   [vdso] [anon:NAME] ...  any other bracketed name, as listed
 */
#ifndef MEMTOP_MAPS_H
#define MEMTOP_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum maps_kind {
	MAPS_ANON = 0,
	MAPS_FILE,
	MAPS_HEAP,
	MAPS_STACK,
	MAPS_THREAD_STACK,
	MAPS_BSS,
	MAPS_HUGETLB,
	MAPS_SHARED_ANON,
	MAPS_NAMED,		/* other "[...]" names */
};

#define MAPS_PROT_READ	1u
#define MAPS_PROT_WRITE	2u
#define MAPS_PROT_EXEC	4u

struct maps_region {
	uint64_t start;		/* first byte */
	uint64_t end;		/* one past the last byte */
	uint64_t pgoff;		/* file offset of start */
	uint64_t inode;		/* 0 for anonymous memory */
	uint32_t dev_major;
	uint32_t dev_minor;
	uint8_t prot;		/* MAPS_PROT_* */
	bool shared;
	bool deleted;		/* the file was deleted after mapping */
	enum maps_kind kind;
	int32_t tid;		/* MAPS_THREAD_STACK: the thread */
	/* MAPS_THREAD_STACK: one past the stack's last byte.  The kernel
	 * merges an anonymous mapping made right above a thread stack into
	 * the stack's VMA; when a guard page marks the stack's bottom, the
	 * stack is [start, start + the target's RLIMIT_STACK) and the rest
	 * of the region is plain [anon]. */
	uint64_t stack_end;
	/* MAPS_FILE, MAPS_BSS: the file's path in the target's mount
	 * namespace, without " (deleted)"; MAPS_NAMED: the bracketed name;
	 * NULL otherwise. */
	char *path;
	/* From a kernel record that carried it (attr.build_id), or a
	 * capture's HEADER_BUILD_ID: what the file must hold; size 0 when
	 * unknown.  symbols_open checks it. */
	uint8_t build_id[20];
	uint8_t build_id_size;
	/* The time of the record that mapped it (the perf clock,
	 * CLOCK_MONOTONIC ns); 0 for a region read from /proc or from a
	 * record without one. */
	uint64_t time;
};

struct maps;

/* NULL on ENOMEM.  pid <= 0 makes a maps that only takes text (tests). */
struct maps *maps_new(int32_t pid);
void maps_free(struct maps *m);		/* NULL-safe */

/*
 * Replaces the regions with those listed in text (the format of
 * /proc/PID/maps).  Malformed lines are skipped and counted
 * (maps_bad_lines).  Thread-stack labels carry over to a region with the
 * same start.  Returns 1 when the regions changed, 0 when the text is the
 * same as last time, -ENOMEM.
 */
int maps_load_text(struct maps *m, const char *text, size_t len);

/*
 * Re-reads /proc/PID/maps, then looks for thread stacks: for each thread
 * of the process, /proc/PID/task/TID/syscall gives its stack pointer while
 * it is blocked (in a system call or not running); the anonymous region
 * that holds it becomes [stack:TID].  (The kstkesp field of
 * /proc/PID/task/TID/stat reads 0 on current kernels, and [stack:TID] left
 * /proc/PID/maps in Linux 4.5.)  A thread that is on a CPU at that moment,
 * or that memtop may not ptrace-read, is tried again at the next refresh;
 * until then its stack reads [anon].
 * Returns 1 changed, 0 unchanged, -errno when the maps cannot be read
 * (process gone): the old regions stay, so a dead process keeps its names.
 */
int maps_refresh(struct maps *m);

/*
 * Regions from the kernel's MMAP2 records (maps_records.c).  maps_insert
 * puts r in place of whatever it overlaps, as the kernel's new mapping
 * replaced it (perf does the same: no record tells of an munmap, so a
 * region stays until another covers it).  name is the record's: "//anon",
 * "[heap]", "[stack]", a path, "PATH (deleted)".  A region from a later
 * record (both times known) stays: per-CPU rings are drained in no time
 * order, so the older record may come second, and r then goes only where
 * no later region lies.  0 or -ENOMEM.
 */
int maps_insert(struct maps *m, const struct maps_region *r,
		const char *name, size_t name_len);
/*
 * Before maps_insert of the same record: calls fn with each part [lo, hi)
 * of a region of m that the record's mapping would cover under another
 * name (names compared at lo: a heap grown, or anonymous memory over
 * anonymous memory, is not such a part).  0 or -ENOMEM.
 */
int maps_covering(const struct maps *m, const struct maps_region *r,
		  const char *name, size_t name_len,
		  void (*fn)(void *ctx, uint64_t lo, uint64_t hi), void *ctx);
/*
 * Re-reads /proc/PID/maps and adds only what falls in the gaps between
 * the regions already known (records know better: a mapping /proc no
 * longer lists may still hold samples).  As maps_refresh otherwise.
 */
int maps_refresh_gaps(struct maps *m);
/* Copies every region of from into m (a fork's child).  0 or -ENOMEM. */
int maps_copy(struct maps *m, const struct maps *from);
/*
 * A fork's child at time (0: unknown): m keeps only its regions from
 * records after time (the child's own, drained before its FORK), and
 * from's regions mapped by then fill the rest.  0 or -ENOMEM (m as it
 * was).
 */
int maps_inherit(struct maps *m, const struct maps *from, uint64_t time);
/* Drops the regions not from records at or after time (all of them when
 * time is 0): an exec's old image.  How many went. */
size_t maps_drop_before(struct maps *m, uint64_t time);

/* Labels the anonymous region holding sp as thread tid's stack. */
void maps_note_thread_sp(struct maps *m, int32_t tid, uint64_t sp);

/*
 * The stack pointer in the text of /proc/PID/task/TID/syscall: the
 * second-to-last field of "NR ARG1..ARG6 SP PC" or "-1 SP PC".
 * 0 or -EAGAIN ("running"), -EINVAL.
 */
int maps_parse_syscall_sp(const char *text, uint64_t *sp);

/*
 * Whether anonymous region r of m, from a record with a time, is the brk
 * heap (above the executable, within brk's randomisation): its record
 * may have been taken before the executable's (another CPU's ring
 * drained first), so it is asked again when a page is named.  Regions
 * from /proc or from untimed records keep their kind.
 */
bool maps_is_late_brk(const struct maps *m, const struct maps_region *r);
/* maps_region_name, r named [heap] when maps_is_late_brk. */
int maps_region_name_in(const struct maps *m, const struct maps_region *r,
			uint64_t addr, char *buf, size_t len);

/* The region holding addr, or NULL. */
const struct maps_region *maps_lookup(const struct maps *m, uint64_t addr);
/* The first region overlapping [lo, hi), or NULL. */
const struct maps_region *maps_first_in(const struct maps *m, uint64_t lo,
					uint64_t hi);

size_t maps_count(const struct maps *m);
const struct maps_region *maps_at(const struct maps *m, size_t i);
/* Bumps each time the regions change. */
uint64_t maps_generation(const struct maps *m);
size_t maps_bad_lines(const struct maps *m);
int32_t maps_pid(const struct maps *m);

/*
 * The region's name for addr (see the list at the top) into buf;
 * returns the length it needed (like snprintf).
 */
int maps_region_name(const struct maps_region *r, uint64_t addr, char *buf,
		     size_t len);

#endif
