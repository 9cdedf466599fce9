/*
 * Aggregation: folds samples into the page table and keeps the per-CPU,
 * per-thread, per-node and node x node totals at ingest, so a frame only
 * copies them.  Collector thread only.
 *
 * Samples are taken in batches: a batch first inserts its pages, then asks
 * move_pages for the node of pages never asked (or unknown and not asked
 * this interval), then accounts each sample with the node known now.  A
 * sample carrying PHYS_ADDR gets its node from the memory-block map
 * (physnode) instead, with no syscall.  Pages move (migration, NUMA
 * balancing, refaults), so a known page that is sampled again is re-asked
 * once its answer is AGGR_REVAL_AGE intervals old, as many an interval as
 * aggr_revalidate_budget() allows.  A definite answer replaces the node;
 * no answer (page dropped for a moment, process gone) keeps it.  On a
 * machine with one node (sole_node) nothing is asked: pages get it.
 */
#ifndef MEMTOP_AGGR_H
#define MEMTOP_AGGR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counts.h"
#include "sample.h"

struct aggr_tslot;
struct objtab;
struct pagetab;
struct proctab;
struct threadtab;
struct topo;
struct nodemap;
struct physnode;
struct cpuvote;
struct frame_noderes;
struct sides;

/*
 * struct aggr is declared here so that a producer can embed it and the
 * per-sample path can stay inline: rooms outside aggr/ use the functions
 * below, and touch the layout only through the batch (aggr_slot,
 * aggr_commit; collector/live/ingest.c's drain fills batch[] and n_batch
 * itself and then calls aggr_weights_possible).
 */
#define AGGR_BATCH 256
/* Intervals after which a sampled page's known node is asked again. */
#define AGGR_REVAL_AGE 3
/* Process rows kept unless aggr_procs_config says otherwise. */
#define AGGR_MAX_PROCESSES 16384

struct aggr {
	struct pagetab *pages;
	struct threadtab *threads;
	/* Process rows (aggr_procs.c): counted sample by sample through the
	 * batch's thread slots; named at frames, from /proc only when
	 * procs_live (a recording's pids are not this machine's). */
	struct proctab *procs;
	struct aggr_tslot *tslots;	/* per-thread slots (aggr.c) */
	bool procs_live;
	/* A row is shown dead once its death is known from before this
	 * (aggr_procs_cutoff); UINT64_MAX: at once. */
	uint64_t procs_cutoff_ns;
	/* A live process's row went to make room (it may have pages, but
	 * no row: aggr_names_cover then looks for them anyway). */
	bool procs_pruned_live;
	const struct topo *topo;	/* not owned */
	struct nodemap *nodemap;	/* NULL: no page->node queries */
	/* With a nodemap on a one-node topology read from the machine
	 * (topo_nodes_known: not a stand-in nor a sysfs tree), that node: a
	 * process's page sampled lives there and cannot move, so none is
	 * queried (a move_pages call would only say whether it is still in
	 * memory; at 256 Ki hot pages those calls took about 15 % of the
	 * collector's CPU).  -1: not so. */
	int sole_node;
	/* Live objects naming the pages (issue 18); NULL: none.  Not owned:
	 * the producer fills it (src/aggr/allocs.c). */
	struct objtab *objects;
	/* The time objects' ages are counted to (replay: the frame's
	 * recorded end); 0 = CLOCK_MONOTONIC now. */
	uint64_t objects_now;
	/* Small heap objects (--heap-objects), whose sites are those of
	 * `objects`: they name a page before the mapping holding it. */
	struct objtab *heap_objects;
	int n_cpus;
	int n_nodes;
	/* Copies of the topology's answers, read per sample: the node index
	 * of each CPU (-1 none) and of each node number up to max_node. */
	int16_t *cpu_node_idx;		/* n_cpus */
	int16_t *node_idx;		/* max_node + 1 */
	int max_node;
	/* The same per CPU for aggr_flush, n_cpus + 1 of them, the last
	 * for a CPU out of range: see aggr.c. */
	struct aggr_cpu *cpu_acc;
	/* A batch's samples by (CPU node, page node), each with a row and a
	 * column for "unknown": (n_nodes + 1)^2, zero between batches; the
	 * cells a batch touched, in cell_list. */
	uint64_t *cells;
	uint32_t *cell_list;
	/* Each cell's locality for the process rows (enum proc_locality:
	 * unknown in the "unknown" row and column, local on the diagonal,
	 * remote elsewhere). */
	uint8_t *cell_loc;

	/* This interval. */
	struct counts interval;
	uint64_t *cpu_samples;		/* n_cpus (+ 1 that aggr.c uses) */
	uint64_t *node_mem;		/* n_nodes: samples landing there */
	uint64_t *matrix;		/* n_nodes^2, row = CPU node index */
	uint64_t *matrix_unknown;	/* n_nodes: page node unknown */
	uint64_t mem_unknown;
	uint64_t cpu_unknown;

	/* Since start or reset. */
	struct counts cumulative;

	const struct physnode *physnode;	/* NULL: no PHYS_ADDR map */
	/* More than two nodes: which CPU node touches each page most (the
	 * migration target); NULL otherwise. */
	struct cpuvote *cpuvote;
	uint64_t vote_untracked;	/* votes lost to a full table */
	/* The least samples a page or a code view function had in the last
	 * frame when its page list and its code view were full (0: one not
	 * full, or no frame yet): a process with fewer samples this
	 * interval can show neither, so no /proc/PID/maps is read for it
	 * between frames (aggr_proc_worth_naming). */
	uint64_t names_bar;
	/* Samples a shard's merge found no room for in the page table
	 * (aggr_merge): in every sum, in no page row; logged. */
	uint64_t merge_unplaced;
	/* A shard's page table forgotten at a merge, most of its pages
	 * idle or the table full (aggr_merge). */
	uint64_t shard_resets;

	/* Page -> node work this interval, for frame_noderes. */
	uint64_t reval_pages;		/* known pages asked again */
	uint64_t reval_changed;		/* ... found on another node */
	uint64_t phys_resolved;		/* samples placed from PHYS_ADDR */
	uint64_t nm_pages_mark, nm_resolved_mark, nm_ns_mark;
	uint64_t reval_allow;		/* re-asks allowed this interval */
	uint64_t reval_skipped;		/* due samples refused: over budget */
	uint64_t reval_ns_per_page;	/* measured cost, sizes the budget */
	/* Age (intervals) that makes a known page due: AGGR_REVAL_AGE, or
	 * more while the budget cannot keep up, so that the pages sampled
	 * first in an interval cannot starve the others. */
	unsigned reval_age;
	uint32_t reval_epoch;		/* interval reval_age was set for */

	/* Names, code sites, line heat (sides.h); NULL when off or out of
	 * memory: frames then carry no names. */
	struct sides *sides;

	/* Queued samples.  The aggregation reads neither time nor period:
	 * collector/live/ingest.c's drain leaves them unset. */
	struct sample batch[AGGR_BATCH];
	size_t n_batch;
	/* A sample with a weight may have been queued since the weight
	 * extension was last missing: until it is, aggr_flush looks for
	 * one in each batch.  Whoever fills slots without aggr_commit
	 * says so with aggr_weights_possible. */
	bool weights_possible;
};

/* topo must outlive the aggr.  nodemap may be NULL.  0 or -ENOMEM. */
int aggr_init(struct aggr *a, const struct topo *topo, struct nodemap *nm,
	      unsigned page_shift, size_t max_pages);
void aggr_fini(struct aggr *a);		/* NULL-safe, idempotent */

/* Accounts every queued sample. */
void aggr_flush(struct aggr *a);
/* Queues one attributed sample (addr != 0, pid/tid known). */
void aggr_add(struct aggr *a, const struct sample *s);

/*
 * The same without a copy: fill the slot aggr_slot() returns, then
 * aggr_commit() queues it (or do nothing, and the slot is reused).
 */
static inline struct sample *
aggr_slot(struct aggr *a)
{
	return &a->batch[a->n_batch];
}

static inline void
aggr_commit(struct aggr *a)
{
	a->weights_possible |= a->batch[a->n_batch].weight != 0;
	if (++a->n_batch == AGGR_BATCH)
		aggr_flush(a);
}

/* Slots filled without aggr_commit may carry a weight: aggr_flush looks
 * for one in each batch until the weight extension is missing again. */
static inline void
aggr_weights_possible(struct aggr *a)
{
	a->weights_possible = true;
}

/* The page table and the naming side tables (NULL when off), for a
 * producer that adds its own per-page facts or turns names off. */
struct pagetab *aggr_pages(struct aggr *a);
struct sides *aggr_sides(struct aggr *a);

/* Maps samples' PHYS_ADDR to nodes from now on (p outlives the aggr). */
void aggr_set_physnode(struct aggr *a, const struct physnode *p);
/* Keeps no migration vote from now on (a producer that never migrates:
 * the replay); the votes are read by migrate.c alone, never by a frame.
 * Before the first sample. */
void aggr_votes_off(struct aggr *a);
/*
 * Sets the memory node of (pid, page of addr), inserting the page when it
 * is new: a page just migrated, or a test placing pages on fake nodes.
 * node < 0 = unknown.  0, or -ENOSPC when the table is full.
 */
int aggr_set_node(struct aggr *a, int32_t pid, uint64_t addr, int node);
/*
 * Allows this interval as many re-asks of known pages as fit in budget_ns
 * at the measured cost of move_pages a page (call after
 * aggr_next_interval).  Returns the number of pages allowed.
 */
uint64_t aggr_revalidate_budget(struct aggr *a, uint64_t budget_ns);
/* This interval's node-resolution figures. */
void aggr_noderes(const struct aggr *a, struct frame_noderes *out);

void aggr_count_lost(struct aggr *a, uint64_t n);
void aggr_count_throttled(struct aggr *a, uint64_t n);
void aggr_count_unattributed(struct aggr *a, uint64_t n);

/*
 * Process rows: at most max (0 = AGGR_MAX_PROCESSES; samples of processes
 * past it count as the frame's processes_untracked) and whether /proc may
 * be read to name them (live).  Before the first sample.  0 or -ENOMEM.
 */
int aggr_procs_config(struct aggr *a, size_t max, bool live);
/* What task records say of a process (pid == tid): its name from a COMM
 * record of time `time` (the newest wins: per-CPU rings are drained one
 * after another), its birth (the child takes its parent's name until its
 * own COMM), its EXIT (shown dead in the next frame, then dropped). */
void aggr_proc_comm(struct aggr *a, int32_t pid, const char *comm,
		    uint64_t time);
void aggr_proc_fork(struct aggr *a, int32_t pid, int32_t ppid);
/* A row that is no process (-e damon -a's pid 0, "[physical]"): named
 * comm, alive, never looked up in /proc. */
void aggr_proc_virtual(struct aggr *a, int32_t pid, const char *comm);
/* time: the EXIT record's (CLOCK_MONOTONIC ns), 0 when it has none. */
void aggr_proc_exit(struct aggr *a, int32_t pid, uint64_t time);
/*
 * The time the drain for the next frame starts.  Per-CPU rings are drained
 * one after another while the process may still run: a process whose
 * EXIT record is read at a frame may have samples written after its
 * CPU's ring was drained, which the next frame reads.  So a row is shown
 * dead (and dropped) only at the first frame whose drain began after its
 * death: every sample it wrote is then in.  Not called (replay): at once.
 */
void aggr_procs_cutoff(struct aggr *a, uint64_t ns);

/*
 * Shards (src/aggr/aggr_merge.c): an aggregation made like `like` (its
 * topology, page size, process limit, memory-block map; nm, owned by the
 * caller, may be NULL) without names or migration votes, for a drain
 * thread of its own.  0 or -ENOMEM.
 */
int aggr_shard_init(struct aggr *shard, const struct aggr *like,
		    struct nodemap *nm);
/*
 * Adds the shard's interval to dst as if dst had taken its samples
 * (counts, pages and their nodes, threads, process rows, CPU and node
 * sums, side tables), then empties the shard.  0, -EINVAL (not made like dst: page
 * size, nodes, CPUs) or -ENOMEM (dst then misses some of it).
 */
int aggr_merge(struct aggr *dst, struct aggr *src);

/* Starts a new interval (after the frame for the old one was built). */
void aggr_next_interval(struct aggr *a);
/* Forgets pages, threads and cumulative counters (key r). */
void aggr_reset(struct aggr *a);
/* names_cover_fn (names.h) for the aggregation's names: pins the pages
 * it counted in [lo, hi) of pid (aggr_pins.c). */
void aggr_names_cover(void *ctx, int32_t pid, uint64_t lo, uint64_t hi);

#endif
