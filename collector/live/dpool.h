/*
 * The parallel drain (issue 15): drain threads, each with its own
 * aggregation (a shard, src/aggr/aggr_merge.c), that drain the rings of
 * their CPU group; the collector merges the shards into its aggregation
 * at frame time.  Collector thread only (it creates the pool, hands it
 * each drain, handles the records other than samples, merges); a drain
 * thread touches only the rings of the drain in progress, its decoder and
 * its shard.
 *
 * A drain gives each thread the rings of its group (item.group modulo the
 * threads).  Each thread drains its rings one after another with
 * ingest_drain into its shard, and copies every other record (task,
 * MMAP2, LOST ...) into a block for the collector, which hands them to
 * other() meanwhile, in each ring's order.  dpool_merge adds the shards'
 * interval to the collector's aggregation and empties them: the frame is
 * that of one collector draining the same rings (tests/unit/collector/
 * test-dpool.c), less what shards do not keep (aggr_shard_init: the
 * migration vote of more than two nodes).
 */
#ifndef MEMTOP_DPOOL_H
#define MEMTOP_DPOOL_H

#include <linux/perf_event.h>
#include <stdbool.h>
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
	 * its malformed samples (already counted lost in the aggr), and the
	 * samples of its LOST records that never reached other() (no memory
	 * for their copy; not counted yet: the caller adds them to the
	 * ring's lost records, as other() would have). */
	struct ring_stats st;
	uint64_t bad;
	uint64_t lost;
};

/* A record other than a sample, of the item whose tag it is. */
typedef void (*dpool_other_fn)(const struct perf_event_header *hdr,
			       void *tag, void *ctx);

/* Starts n_threads (1 .. DPOOL_MAX_THREADS) drain threads, each with a
 * shard made like `like` (and a nodemap of its own when like has one);
 * they inherit the caller's signal mask.  0 or -errno. */
int dpool_new(struct dpool **out, unsigned n_threads,
	      const struct aggr *like);
/* NULL-safe; joins the threads.  Between drains only (no thread then
 * waits to hand a record over). */
void dpool_free(struct dpool *p);
unsigned dpool_threads(const struct dpool *p);

/*
 * Drains items[0..n) as ingest_drain would, on the drain threads into
 * their shards (samples, unattributed and malformed ones counted), with
 * the other records through other(hdr, item's tag, ctx) on the calling
 * thread, in each ring's order.  Returns once every ring is drained and
 * every record handed over (or, without memory for its copy, counted:
 * dpool_dropped, and a LOST record's samples in its item's lost).
 */
void dpool_drain(struct dpool *p, struct dpool_item *items, size_t n,
		 uint64_t period, dpool_other_fn other, void *ctx);
/* Between drains: every shard's interval into dst (aggr_merge), the
 * shards emptied.  0 or the first error (-EINVAL, -ENOMEM). */
int dpool_merge(struct dpool *p, struct aggr *dst);
/*
 * Shard i into dst (between drains), while the other threads drain
 * items[0..n) again and again (every DPOOL_NAP_US) until the merge is
 * done, shard i's group going to the next thread: a merge longer than a
 * ring takes to fill then costs no samples.  Records other than samples
 * wait for the collector on a list when its blocks are full, so that
 * no drain stops for them meanwhile.  What they drain lands in
 * their shards, merged now (a later i) or at the next merge.  Returns as
 * dpool_drain does (items' st and bad: the passes' sums), with
 * aggr_merge's result; -EINVAL with fewer than two threads.
 */
int dpool_merge_draining(struct dpool *p, unsigned i, struct aggr *dst,
			 struct dpool_item *items, size_t n, uint64_t period,
			 dpool_other_fn other, void *ctx);
/* Whether the shards are made like a (the same page size). */
bool dpool_like(const struct dpool *p, const struct aggr *a);

/* CPU time the drain threads have used since they started, ns. */
uint64_t dpool_cpu_ns(struct dpool *p);
/* Records other than samples that found every block full during a
 * draining merge and waited on a thread's overflow list, since start. */
uint64_t dpool_overflowed(struct dpool *p);
/* Records other than samples that never reached other(), for want of
 * memory to copy them (counted by kind: dpool.c, dpool_drop), since
 * start. */
uint64_t dpool_dropped(struct dpool *p);
/* The shards' page tables forgotten at merges, most pages idle or the
 * table full (aggr_merge).  Between drains only. */
uint64_t dpool_shard_resets(const struct dpool *p);
/* Samples in the shards not yet accounted (each pass ends with
 * aggr_flush: 0 between drains).  Between drains only. */
size_t dpool_queued(const struct dpool *p);

#endif
