/*
 * Sample -> frame latency, for benchmarks (MEMTOP_DEBUG_LATENCY=FILE).
 * Collector thread only.
 *
 * Sample TIME is CLOCK_MONOTONIC (every event sets use_clockid), so the
 * age of a sample when its frame is published is publish_ns - time.
 * Publishing is not known while samples arrive, so samples are counted
 * in LATHIST_BUCKETS buckets of 2^20 ns (~1 ms) of their own time from
 * the interval's start; at publication each bucket becomes a latency.
 * Every figure errs long: a bucket's latency is taken from its start,
 * samples older than the interval's start share the oldest one's age,
 * and samples past the last bucket share the last bucket's age.
 *
 * One line per frame is appended to the file:
 *   seq S publish_ns P samples N notime M lat_ms L:C L:C ...
 * (C samples with a latency of at most L ms; `notime` samples had no
 * TIME and are not in the histogram).
 */
#ifndef MEMTOP_LATHIST_H
#define MEMTOP_LATHIST_H

#include <stdint.h>

#define LATHIST_BUCKETS		8192	/* 8.6 s of sample time */
#define LATHIST_SHIFT		20

struct lathist;

/* Opens path for appending; NULL with errno on failure. */
struct lathist *lathist_new(const char *path);
void lathist_free(struct lathist *h);		/* NULL-safe */

/* One sample of CLOCK_MONOTONIC time time_ns (0 = no TIME). */
void lathist_add(struct lathist *h, uint64_t time_ns);
/* The frame holding every sample added so far went out at publish_ns:
 * writes its line and starts the next interval there. */
void lathist_publish(struct lathist *h, uint64_t seq, uint64_t publish_ns);

#endif
