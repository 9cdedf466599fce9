/*
 * Aggregation: folds samples into the page table and keeps the per-CPU,
 * per-thread, per-node and node x node totals at ingest, so a frame only
 * copies them.  Collector thread only.
 *
 * Samples are taken in batches: a batch first inserts its pages, then asks
 * move_pages for the node of pages never asked (or unknown and not asked
 * this interval), then accounts each sample with the node known now.
 */
#ifndef MEMTOP_AGGR_H
#define MEMTOP_AGGR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counts.h"
#include "sample.h"

struct pagetab;
struct threadtab;
struct topo;
struct nodemap;
struct sides;

#define AGGR_BATCH 256

struct aggr {
	struct pagetab *pages;
	struct threadtab *threads;
	const struct topo *topo;	/* not owned */
	struct nodemap *nodemap;	/* NULL: no page->node queries */
	int n_cpus;
	int n_nodes;

	/* This interval. */
	struct counts interval;
	uint64_t *cpu_samples;		/* n_cpus */
	uint64_t *node_mem;		/* n_nodes: samples landing there */
	uint64_t *matrix;		/* n_nodes^2, row = CPU node index */
	uint64_t *matrix_unknown;	/* n_nodes: page node unknown */
	uint64_t mem_unknown;
	uint64_t cpu_unknown;

	/* Since start or reset. */
	struct counts cumulative;

	/* Names, code sites, line heat (sides.h); NULL when off or out of
	 * memory: frames then carry no names. */
	struct sides *sides;

	struct sample batch[AGGR_BATCH];
	size_t n_batch;
};

/* topo must outlive the aggr.  nodemap may be NULL.  0 or -ENOMEM. */
int aggr_init(struct aggr *a, const struct topo *topo, struct nodemap *nm,
	      unsigned page_shift, size_t max_pages);
void aggr_fini(struct aggr *a);		/* NULL-safe, idempotent */

/* Queues one attributed sample (addr != 0, pid/tid known). */
void aggr_add(struct aggr *a, const struct sample *s);
/* Accounts every queued sample. */
void aggr_flush(struct aggr *a);

void aggr_count_lost(struct aggr *a, uint64_t n);
void aggr_count_throttled(struct aggr *a, uint64_t n);
void aggr_count_unattributed(struct aggr *a, uint64_t n);

/* Starts a new interval (after the frame for the old one was built). */
void aggr_next_interval(struct aggr *a);
/* Forgets pages, threads and cumulative counters (key r). */
void aggr_reset(struct aggr *a);

#endif
