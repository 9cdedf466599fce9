/*
 * The parallel drain (issue 15): drain threads that read and decode rings
 * for the collector thread, which stays the only one to touch the
 * aggregation.  Collector thread only (it creates the pool, hands it each
 * drain and takes what the drain threads decoded); a drain thread touches
 * only the rings of the drain in progress and its own decoder.
 *
 * A drain gives each thread the rings of its group (item.group modulo the
 * threads).  Each thread decodes its rings one after another, as
 * ingest_drain does, into blocks of AGGR_BATCH samples, with every other
 * record copied into a block of its own, in ring order; the collector
 * thread, meanwhile, takes the blocks as they come and folds the samples
 * into the aggregation (aggr_flush) and the other records into other().
 * So decoding runs on the drain threads while aggregation runs on the
 * collector's, each ring's records keep their order, and the aggregation
 * sees the same samples as from one collector draining the same rings:
 * the frame is the same (tests/unit/live/test-dpool.c), only the order of
 * samples across rings differs, which no count depends on.
 */
#ifndef MEMTOP_DPOOL_H
#define MEMTOP_DPOOL_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "ring.h"

struct aggr;
struct channel_events;
struct dpool;

/* Drain threads at most. */
#define DPOOL_MAX_THREADS	64

struct dpool_item {
	struct ring *ring;
	const struct channel_events *ev;
	void *tag;		/* handed to other() with its records */
	unsigned group;		/* drained by thread group % threads */
	/* Out, once dpool_drain returns: the ring's walk (ring_end) and
	 * its malformed samples (already counted lost in the aggr). */
	struct ring_stats st;
	uint64_t bad;
};

/* A record other than a sample, of the item whose tag it is. */
typedef void (*dpool_other_fn)(const struct perf_event_header *hdr,
			       void *tag, void *ctx);

/* Starts n_threads (1 .. DPOOL_MAX_THREADS) drain threads; they inherit
 * the caller's signal mask.  0 or -errno. */
int dpool_new(struct dpool **out, unsigned n_threads);
void dpool_free(struct dpool *p);	/* NULL-safe; joins the threads */
unsigned dpool_threads(const struct dpool *p);

/*
 * Drains items[0..n) as ingest_drain would, on the drain threads, and
 * folds what they decode into a on the calling thread: samples queued
 * (a->batch, flushed when full), unattributed and malformed samples
 * counted, other records through other(hdr, item's tag, ctx) in each
 * ring's order.  Returns once every ring is drained and every block
 * taken; samples may remain queued in a, as after ingest_drain.
 */
void dpool_drain(struct dpool *p, struct dpool_item *items, size_t n,
		 uint64_t period, struct aggr *a, dpool_other_fn other,
		 void *ctx);

/* CPU time the drain threads have used since they started, ns. */
uint64_t dpool_cpu_ns(struct dpool *p);

#endif
