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

/* The target's slowdown above which memtop samples allocations. */
#define HEAP_MAX_COST 0.05

#endif
