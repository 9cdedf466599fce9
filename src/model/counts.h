/*
 * The sample and loss counters every frame carries, for one interval
 * (frame.totals) or since start/reset (frame.cumulative).
 *
 * Invariant: samples == loads + stores + other.  "samples" counts only
 * attributed samples (an address and a known pid that entered the page
 * table).  lost, throttled, unattributed and untracked are kept apart so
 * nothing disappears silently:
 *   lost         records the kernel dropped (PERF_RECORD_LOST, LOST_SAMPLES)
 *                plus records the ring reader had to skip (bad header.size)
 *                and records the drain threads had no memory to hand to the
 *                collector (collector/live/dpool.c, dpool_drop)
 *   throttled    PERF_RECORD_THROTTLE events (the kernel stopped sampling
 *                until the next tick)
 *   unattributed samples without a data address or with pid/tid -1
 *   untracked    samples whose page did not fit in the page table
 */
#ifndef MEMTOP_COUNTS_H
#define MEMTOP_COUNTS_H

#include <stdint.h>

struct counts {
	uint64_t samples;
	uint64_t loads;
	uint64_t stores;
	uint64_t other;
	uint64_t lost;
	uint64_t throttled;
	uint64_t unattributed;
	uint64_t untracked;
};

static inline void
counts_add(struct counts *dst, const struct counts *src)
{
	dst->samples += src->samples;
	dst->loads += src->loads;
	dst->stores += src->stores;
	dst->other += src->other;
	dst->lost += src->lost;
	dst->throttled += src->throttled;
	dst->unattributed += src->unattributed;
	dst->untracked += src->untracked;
}

#endif
