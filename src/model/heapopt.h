/*
 * --heap-objects (issue 18): small heap objects named by their
 * allocation site through uprobes on the target's allocator
 * (collector/live/heapprobe.c).  Parsed by the cli room, read by the
 * live collector; the probes' functions (enum heap_fn) are shared by
 * what opens them (collector/sources/source_heap.c) and what reads their
 * records, live and in replay (src/aggr/heapobjs.c).  Any thread (plain
 * values).
 */
#ifndef MEMTOP_HEAPOPT_H
#define MEMTOP_HEAPOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct heap_opts {
	bool on;
	/* Every Nth allocation (the kernel's sample period on the
	 * allocating functions' probes); 0 = every one unless that would
	 * cost the target more than HEAP_MAX_COST, then sampled. */
	uint32_t every;
	/* Only allocations of min_size bytes or more; 0 = any. */
	uint64_t min_size;
};

/* The allocator function a heap probe (--heap-objects,
 * source_heap.c) sits on. */
enum heap_fn {
	HEAP_NONE,	/* not a heap probe */
	HEAP_MALLOC,	/* malloc, operator new, new[]: size in rdi */
	HEAP_CALLOC,	/* rdi * rsi */
	HEAP_REALLOC,	/* rdi moved to a block of rsi bytes */
	HEAP_MEMALIGN,	/* posix_memalign: *rdi set, rdx bytes */
	HEAP_ALIGNED,	/* aligned_alloc, memalign: rsi bytes */
	HEAP_FREE,	/* free, operator delete: rdi */
};

/* The largest --heap-objects=SIZE: 1 TiB. */
#define HEAP_MAX_SIZE (UINT64_C(1) << 40)

/*
 * The SIZE of --heap-objects=SIZE, len characters at s: digits and a
 * unit b, k, m or g (either case), 1 byte to HEAP_MAX_SIZE, into *bytes.
 * -ENOENT when the last character is no unit (not a size: a count, for
 * the command line), -EINVAL for a bad size.  The command line
 * (src/cli/cli_heap.c) and a replay reading a recording's command line
 * (collector/replay/replay_objects.c) take it alike.
 */
int heapopt_size(const char *s, size_t len, uint64_t *bytes);

/* The target's slowdown above which memtop samples allocations. */
#define HEAP_MAX_COST 0.05

#endif
