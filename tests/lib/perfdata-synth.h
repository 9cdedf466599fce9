/*
 * Synthetic perf.data files with a known content, written through memtop's
 * own writer: tests and bench-replay use them where no real capture can
 * be made here (no PMU: no DATA_SRC, WEIGHT or PHYS_ADDR from the kernel;
 * one NUMA node: no multi-node topology).
 *
 * The file looks like a `perf mem record` capture: two events,
 * "cpu/mem-loads,ldlat=30/P" and "cpu/mem-stores/P" (raw 0x1cd, 0x2cd),
 * sample_type IDENTIFIER|IP|TID|TIME|ADDR|CPU|PERIOD|WEIGHT|DATA_SRC
 * (+PHYS_ADDR), sample_id_all, COMM records for each process, a
 * NUMA_TOPOLOGY of `nodes` nodes over `cpus` CPUs (cpu c on node
 * c % nodes), NRCPUS, EVENT_DESC, and MEM_TOPOLOGY when phys is set.
 */
#ifndef MEMTOP_PERFDATA_SYNTH_H
#define MEMTOP_PERFDATA_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct synth_opts {
	uint64_t samples;
	int nodes;		/* 1..16 */
	int cpus;		/* >= nodes */
	uint64_t pages;		/* distinct pages per process */
	int pids;		/* processes, pids 1000, 1001, ... */
	bool phys;		/* PHYS_ADDR + MEM_TOPOLOGY */
	bool swap;		/* the other byte order */
	double seconds;		/* recorded time spanned */
	uint64_t seed;
	/* When set: one line per page, "pid addr samples loads stores
	 * node", node -1 without phys. */
	FILE *truth;
	/* Loss records: lost LOST records (the k-th, k = 1.., says k * 3
	 * samples were lost) and lost_samples LOST_SAMPLES records (the k-th
	 * says 100 + k), each right after the sample in the middle of its
	 * share of the samples, with that sample's time in its sample_id. */
	unsigned lost;
	unsigned lost_samples;
	/* When set: one line per loss record, "LOST|LOST_SAMPLES time_ns
	 * count", time_ns as in the record (the sample before it). */
	FILE *lost_truth;
};

/* Fills o with the defaults: 100000 samples, 4 nodes, 8 CPUs, 4096
 * pages, 2 processes, phys, 10 s. */
void synth_defaults(struct synth_opts *o);

/* Writes path (replacing it).  0 or -errno with a reason in err. */
int synth_write(const char *path, const struct synth_opts *o, char *err,
		size_t errlen);

#endif
