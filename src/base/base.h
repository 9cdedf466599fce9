/*
 * Small helpers every room uses: the length of an array and the clocks.
 * Pure; any thread.
 */
#ifndef MEMTOP_BASE_H
#define MEMTOP_BASE_H

#include <stdint.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Nanoseconds on clock (CLOCK_MONOTONIC for waits and ages,
 * CLOCK_THREAD_CPUTIME_ID for a thread's own CPU time). */
static inline uint64_t
base_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in nanoseconds, milliseconds and seconds. */
static inline uint64_t
base_now_ns(void)
{
	return base_clock_ns(CLOCK_MONOTONIC);
}

static inline int64_t
base_now_ms(void)
{
	return (int64_t)(base_now_ns() / 1000000u);
}

static inline double
base_now_s(void)
{
	return (double)base_now_ns() / 1e9;
}

#endif
