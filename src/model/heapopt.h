/*
 * --heap-objects (issue 18): small heap objects named by their
 * allocation site through uprobes on the target's allocator
 * (collector/live/heapprobe.c).  Parsed by the cli room, read by the
 * live collector.  Any thread (a plain value).
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

/* The target's slowdown above which memtop samples allocations. */
#define HEAP_MAX_COST 0.05

#endif
