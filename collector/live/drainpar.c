/*
 * Drains of many rings at once: every ring at a frame, those epoll
 * reported at a wakeup, those the sweeps find.  Collector thread only.
 *
 * Under -a and -G with many rings the collector drains with drain threads
 * (dpool.h: each drains the rings of its CPU group into a shard of its
 * own; the collector handles their other records meanwhile and merges the
 * shards into its aggregation at each frame, collector_drain_all); with
 * few rings, per-thread channels (-p, a command), --record or the latency
 * histogram, it drains alone as it always has.  Rings it drains alone
 * between (a channel closing) go to its aggregation directly: the sums
 * are the same.  Drain threads are used
 * from COLLECTOR_PAR_RINGS rings on, one for each COLLECTOR_PAR_RINGS
 * rings, at most one fewer than the online CPUs; MEMTOP_DRAIN_THREADS=N
 * forces N (1: the collector alone), for tests and benchmarks.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "aggr.h"
#include "chanset.h"
#include "channel.h"
#include "collector_int.h"
#include "dpool.h"
#include "env.h"
#include "log.h"
#include "recorder.h"
#include "ring.h"

/*
 * One collector thread keeps up with about this many rings at the
 * kernel's default cap of 100 K samples/s each (bench/bench-drain.c; the
 * README's Performance section): from twice as many on, each group of
 * this many gets a drain thread.
 */
#define COLLECTOR_PAR_RINGS	32

int
collector_par_setup(struct collector *c, char *err, size_t errlen)
{
	const char *env = getenv("MEMTOP_DRAIN_THREADS");
	unsigned long v;

	c->par_force = -1;
	if (!env || !*env)
		return 0;
	if (!env_ulong("MEMTOP_DRAIN_THREADS", 0, DPOOL_MAX_THREADS, &v)) {
		snprintf(err, errlen, "MEMTOP_DRAIN_THREADS=%s: want a "
			 "number of drain threads, 0 to %d (0 or 1: the "
			 "collector drains alone)", env, DPOOL_MAX_THREADS);
		return -EINVAL;
	}
	c->par_force = (int)v;
	return 0;
}

/* The drain threads this drain should use (0: none). */
static unsigned
collector_par_want(const struct collector *c)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	size_t rings = chanset_count(c->cs), k;

	if (!c->system || c->cfg.recorder || c->lat)
		return 0;
	if (c->par_force >= 0)
		return c->par_force >= 2 ? (unsigned)c->par_force : 0;
	if (rings < 2 * COLLECTOR_PAR_RINGS || online < 3)
		return 0;
	k = rings / COLLECTOR_PAR_RINGS;
	if (k > (size_t)online - 1)
		k = (size_t)online - 1;
	if (k > DPOOL_MAX_THREADS)
		k = DPOOL_MAX_THREADS;
	return (unsigned)k;
}

unsigned
collector_par_threads(const struct collector *c)
{
	return c->pool ? dpool_threads(c->pool) : 0;
}

/* The pool, of k threads when it starts (it keeps its threads when the
 * rings' count changes later: CPU hotplug), made again after a change of
 * page size (its shards were merged before).  false: none. */
static bool
collector_par_pool(struct collector *c, unsigned k)
{
	if (c->pool && dpool_like(c->pool, &c->aggr))
		return true;
	collector_par_stop(c);
	/* Not tried again at every drain (a pids limit, no memory): each
	 * try would start and join threads. */
	if (c->par_failed)
		return false;
	if (dpool_new(&c->pool, k, &c->aggr) < 0) {
		c->par_failed = true;
		log_msg("drain threads: cannot start %u; the collector drains "
			"alone from now on", k);
		return false;
	}
	log_msg("drain threads: %u over %zu rings", k, chanset_count(c->cs));
	return true;
}

static bool
collector_par_room(struct collector *c, size_t n)
{
	struct dpool_item *items;
	struct channel **chans;
	size_t cap = c->par_cap ? c->par_cap : 64;

	if (n <= c->par_cap)
		return true;
	while (cap < n)
		cap *= 2;
	items = realloc(c->par_items, cap * sizeof(*items));
	if (items)
		c->par_items = items;
	chans = realloc(c->par_chans, cap * sizeof(*chans));
	if (chans)
		c->par_chans = chans;
	if (!items || !chans)
		return false;
	c->par_cap = cap;
	return true;
}

/* dpool_other_fn: a ring's other records, as collector_drain's. */
static void
collector_par_other(const struct perf_event_header *hdr, void *tag,
		    void *ctx)
{
	struct collector *c = ctx;
	struct collector_drain d = { .c = c, .ch = tag,
				     .period = chanset_period(c->cs) };

	collector_on_record(hdr, &d);
}

/* What a drain on the pool found wrong in each ring. */
static void
collector_par_done(struct collector *c, struct channel **chans, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		c->bad_records += c->par_items[i].bad;
		collector_drain_bad(c, chans[i], &c->par_items[i].st);
		/* LOST records the threads had no memory to hand over. */
		if (c->par_items[i].lost)
			collector_lost_records(c, chans[i],
					       c->par_items[i].lost);
	}
}

void
collector_drain_many(struct collector *c, struct channel **chans, size_t n)
{
	unsigned k = n >= 2 ? collector_par_want(c) : 0;
	int n_cpus = c->aggr.n_cpus > 0 ? c->aggr.n_cpus : 1;

	c->par_n = 0;
	if (k < 2 || !collector_par_pool(c, k) || !collector_par_room(c, n)) {
		for (size_t i = 0; i < n; i++)
			collector_drain(c, chans[i]);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct channel *ch = chans[i];
		struct collector_drain d = { .c = c, .ch = ch, .task = true,
					     .period = chanset_period(c->cs) };
		int cpu = channel_cpu(ch);

		/* As collector_drain: allocations and task records first. */
		collector_allocs_drain(c, ch);
		if (channel_task_ring(ch))
			ring_drain(channel_task_ring(ch), collector_on_record,
				   &d, NULL);
		c->par_items[i] = (struct dpool_item){
			.ring = channel_ring(ch), .ev = channel_events(ch),
			.tag = ch,
			/* CPU groups: contiguous CPUs, as nodes number
			 * them. */
			.group = cpu >= 0 ? (unsigned)((size_t)cpu * k /
						       (size_t)n_cpus) :
					    (unsigned)i,
		};
	}
	dpool_drain(c->pool, c->par_items, n, chanset_period(c->cs),
		    collector_par_other, c);
	collector_par_done(c, chans, n);
	c->par_n = n;
}

void
collector_drain_if(struct collector *c, bool (*want)(const struct channel *ch))
{
	size_t n = chanset_count(c->cs), m = 0;

	c->par_n = 0;
	if (!collector_par_room(c, n)) {
		for (size_t i = 0; i < n; i++)
			if (!want || want(chanset_at(c->cs, i)))
				collector_drain(c, chanset_at(c->cs, i));
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (!want || want(chanset_at(c->cs, i)))
			c->par_chans[m++] = chanset_at(c->cs, i);
	collector_drain_many(c, c->par_chans, m);
}

void
collector_par_merge(struct collector *c)
{
	int ret = c->pool ? dpool_merge(c->pool, &c->aggr) : 0;

	if (ret < 0)
		log_msg("drain threads: merge: %s", strerror(-ret));
}

/*
 * The frame's merge just after a drain of every ring on the pool: shard
 * after shard, the other threads draining the rings meanwhile
 * (dpool_merge_draining), so that a merge of many pages, tens of
 * milliseconds, does not leave the rings undrained (README.md,
 * Performance: bench-drain's merge figures).
 */
static void
collector_par_merge_draining(struct collector *c)
{
	size_t n = c->par_n;
	int ret = 0;

	for (unsigned i = 0; i < dpool_threads(c->pool); i++) {
		int r = dpool_merge_draining(c->pool, i, &c->aggr,
					     c->par_items, n,
					     chanset_period(c->cs),
					     collector_par_other, c);

		collector_par_done(c, c->par_chans, n);
		if (r < 0 && ret == 0)
			ret = r;
	}
	c->par_merges++;
	if (ret < 0)
		log_msg("drain threads: merge: %s", strerror(-ret));
}

void
collector_drain_all(struct collector *c)
{
	size_t n = chanset_count(c->cs);

	collector_drain_if(c, NULL);
	if (c->cfg.recorder)	/* every ring read to its end */
		recorder_round(c->cfg.recorder);
	/* par_n == n: every ring was just drained on the pool, through
	 * par_chans.  The shards drained since are merged at the next
	 * frame. */
	if (n && c->par_n == n)
		collector_par_merge_draining(c);
	else
		collector_par_merge(c);
	for (size_t i = 0; i < n; i++)
		collector_sync_lost(c, chanset_at(c->cs, i));
	for (size_t i = chanset_count(c->cs); i-- > 0;) {
		struct channel *ch = chanset_at(c->cs, i);

		if (channel_exited(ch))
			chanset_remove(c->cs, ch);
	}
	aggr_flush(&c->aggr);
}

uint64_t
collector_par_cpu_ns(struct collector *c)
{
	return c->par_cpu_gone + (c->pool ? dpool_cpu_ns(c->pool) : 0);
}

/* The pool's threads stopped, their CPU time kept (collector_int.h). */
void
collector_par_stop(struct collector *c)
{
	if (!c->pool)
		return;
	log_msg("drain threads: %llu frames merged with the rings drained "
		"meanwhile; %llu records waited past the full blocks; %llu "
		"records other than samples dropped for want of memory "
		"(counted lost or throttled by kind); %llu shard page tables "
		"forgotten (most pages idle, or full)",
		(unsigned long long)c->par_merges,
		(unsigned long long)dpool_overflowed(c->pool),
		(unsigned long long)dpool_dropped(c->pool),
		(unsigned long long)dpool_shard_resets(c->pool));
	c->par_cpu_gone += dpool_cpu_ns(c->pool);
	dpool_free(c->pool);
	c->pool = NULL;
}

void
collector_par_fini(struct collector *c)
{
	collector_par_stop(c);
	free(c->par_items);
	free(c->par_chans);
}
