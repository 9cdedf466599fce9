/*
 * --heap-objects set-up (issue 18): the target's allocator found through
 * its maps (the C allocator: a preloaded jemalloc, tcmalloc or mimalloc,
 * else glibc's libc; and libstdc++ for operator new and delete), each
 * function's file offset through the symbols helper (src/names/symbols.h),
 * the probes added to the source (collector/sources/source_heap.c), and
 * their cost measured on memtop itself (heapcal.c).  Main thread, before
 * the collector starts.
 */
#ifndef MEMTOP_HEAPPROBE_H
#define MEMTOP_HEAPPROBE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapopt.h"

struct source;

/* What one allocation costs the target, measured at start. */
struct heap_cost {
	uint64_t full_ns;	/* malloc + free, both probed and recorded */
	uint64_t trap_ns;	/* the same, probes firing, nothing recorded */
	uint64_t plain_ns;	/* malloc + free without probes */
};

/*
 * Adds the heap probes of process pid's allocator (pid 0: memtop's own,
 * which a launched command shares until it execs) to src, after
 * source_alloc_init.  Never fatal: when they cannot be had, src->heap_note
 * says why and the fix, and no probe is added.  Returns how many were.
 */
int heapprobe_prepare(struct source *src, const struct heap_opts *o,
		      pid_t pid, struct heap_cost *cost);

/* heapcal.c: the cost of the probes on malloc and free at offsets
 * malloc_off and free_off of the file at path, on memtop's own calls.
 * 0 or -errno. */
int heapcal_measure(const char *path, uint64_t malloc_off, uint64_t free_off,
		    struct heap_cost *cost);

#endif
