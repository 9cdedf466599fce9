/*
 * Per-thread sample counts: tid -> {pid, interval samples, total}.
 * Collector thread only.  Interval counts reset lazily by epoch, like
 * pagetab.
 */
#ifndef MEMTOP_THREADTAB_H
#define MEMTOP_THREADTAB_H

#include <stddef.h>
#include <stdint.h>

struct thread_entry {
	int32_t pid;
	int32_t tid;
	uint32_t epoch;
	uint64_t samples;	/* this interval (valid when epoch is current) */
	uint64_t total;		/* since reset */
};

struct threadtab;

struct threadtab *threadtab_new(void);
void threadtab_free(struct threadtab *t);	/* NULL-safe */

/* Adds n samples to tid (inserting it). 0 or -ENOMEM. */
int threadtab_add(struct threadtab *t, int32_t pid, int32_t tid, uint64_t n);
void threadtab_next_interval(struct threadtab *t);
void threadtab_reset(struct threadtab *t);
size_t threadtab_count(const struct threadtab *t);

/* Copies the threads with samples this interval into a new array sorted by
 * samples descending, then tid; *n gets the count.  NULL with *n = 0 when
 * none; NULL with *n = SIZE_MAX on ENOMEM.  Caller frees. */
struct thread_entry *threadtab_snapshot(const struct threadtab *t, size_t *n);

#endif
