/*
 * One decoded memory sample, as the collector hands it to the core.
 * Plain data; no thread owns it beyond the call it is passed to.
 */
#ifndef MEMTOP_SAMPLE_H
#define MEMTOP_SAMPLE_H

#include <stdint.h>

enum sample_kind {
	SAMPLE_LOAD = 0,
	SAMPLE_STORE = 1,
	SAMPLE_OTHER = 2,
};

struct sample {
	uint64_t addr;		/* data (virtual) address; 0 = none */
	uint64_t ip;		/* instruction pointer; 0 = unknown */
	uint64_t time;		/* perf clock, ns */
	uint64_t period;	/* events this sample stands for (>= 1) */
	uint64_t weight;	/* latency in cycles; 0 = none */
	uint64_t data_src;	/* PERF_SAMPLE_DATA_SRC; 0 = none */
	uint64_t phys_addr;	/* PERF_SAMPLE_PHYS_ADDR; 0 = none */
	int32_t pid;		/* -1 = unknown (exiting task) */
	int32_t tid;
	int32_t cpu;		/* -1 = unknown */
	/* enum sample_kind.  Not a char type: a store to one may alias
	 * anything, and the decode loop would reload its state after each. */
	uint32_t kind;
};

#endif
