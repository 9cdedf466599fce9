/* Collector thread only.  See aggr.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggr.h"
#include "aggr_int.h"
#include "cpuvote.h"
#include "frame.h"
#include "names.h"
#include "nodemap.h"
#include "pagetab.h"
#include "proctab.h"
#include "sides.h"
#include "threadtab.h"
#include "topo.h"

/* A batch is looked up in one pagetab_get_samples call. */
_Static_assert(AGGR_BATCH <= PAGETAB_MANY, "batch larger than a lookup");

/* Samples ahead whose side-table slots are fetched while one is counted. */
#define AGGR_PREFETCH	8

/*
 * What aggr_flush needs of a sample's CPU, in one place: the row of its
 * node in the batch's cells ((node index + 1) * (n_nodes + 1); 0 for a
 * CPU without a node or out of range), that node index + 1 (0: none),
 * and the cpu_samples slot it counts in (slot n_cpus, never read, when
 * it counts in cpu_unknown instead).
 */
struct aggr_cpu {
	uint32_t row;
	uint32_t ci1;
	uint32_t slot;
};

/* The per-sample lookups of CPU -> node index and node -> index. */
static int
aggr_init_index(struct aggr *a)
{
	a->max_node = 0;
	for (int i = 0; i < a->n_nodes; i++)
		if (topo_node_id(a->topo, i) > a->max_node)
			a->max_node = topo_node_id(a->topo, i);
	a->cpu_node_idx = calloc((size_t)a->n_cpus + 1, sizeof(int16_t));
	a->node_idx = calloc((size_t)a->max_node + 1, sizeof(int16_t));
	if (!a->cpu_node_idx || !a->node_idx)
		return -ENOMEM;
	for (int c = 0; c < a->n_cpus; c++)
		a->cpu_node_idx[c] = (int16_t)topo_cpu_node_index(a->topo, c);
	for (int n = 0; n <= a->max_node; n++)
		a->node_idx[n] = (int16_t)topo_node_index(a->topo, n);
	a->cpu_acc = calloc((size_t)a->n_cpus + 1, sizeof(*a->cpu_acc));
	a->cells = calloc(((size_t)a->n_nodes + 1) * ((size_t)a->n_nodes + 1),
			  sizeof(*a->cells));
	a->cell_list = calloc(AGGR_BATCH, sizeof(*a->cell_list));
	a->cell_loc = calloc(((size_t)a->n_nodes + 1) * ((size_t)a->n_nodes + 1),
			     sizeof(*a->cell_loc));
	if (!a->cpu_acc || !a->cells || !a->cell_list || !a->cell_loc)
		return -ENOMEM;
	for (int r = 1; r <= a->n_nodes; r++)
		for (int c = 1; c <= a->n_nodes; c++)
			a->cell_loc[r * (a->n_nodes + 1) + c] =
				r == c ? PROC_LOC_LOCAL : PROC_LOC_REMOTE;
	for (int c = 0; c <= a->n_cpus; c++) {
		int ci = c < a->n_cpus ? a->cpu_node_idx[c] : -1;

		a->cpu_acc[c].ci1 = (uint32_t)(ci + 1);
		a->cpu_acc[c].row = (uint32_t)(ci + 1) *
				    (uint32_t)(a->n_nodes + 1);
		a->cpu_acc[c].slot = ci >= 0 ? (uint32_t)c :
					       (uint32_t)a->n_cpus;
	}
	return 0;
}

int
aggr_init(struct aggr *a, const struct topo *topo, struct nodemap *nm,
	  unsigned page_shift, size_t max_pages)
{
	size_t nn;

	memset(a, 0, sizeof(*a));
	a->topo = topo;
	a->nodemap = nm;
	a->n_cpus = topo_n_cpus(topo);
	a->n_nodes = topo_n_nodes(topo);
	a->sole_node = nm && a->n_nodes == 1 && topo_nodes_known(topo) ?
		       topo_node_id(topo, 0) : -1;
	nn = (size_t)a->n_nodes;
	a->pages = pagetab_new(page_shift, max_pages);
	a->threads = threadtab_new();
	a->procs = proctab_new(a->n_nodes, AGGR_MAX_PROCESSES);
	a->procs_cutoff_ns = UINT64_MAX;
	a->tslots = calloc(AGGR_TSLOTS, sizeof(*a->tslots));
	aggr_tslots_forget(a);
	a->cpu_samples = calloc((size_t)a->n_cpus + 1, sizeof(uint64_t));
	a->node_mem = calloc(nn, sizeof(uint64_t));
	a->matrix = calloc(nn * nn, sizeof(uint64_t));
	a->matrix_unknown = calloc(nn, sizeof(uint64_t));
	a->sides = sides_new(page_shift, max_pages);
	sides_set_pages(a->sides, a->pages);
	if (sides_names(a->sides))
		names_on_cover(sides_names(a->sides), aggr_names_cover, a);
	if (a->n_nodes > 2)
		a->cpuvote = cpuvote_new(max_pages);
	if (!a->pages || !a->threads || !a->procs || !a->tslots ||
	    !a->cpu_samples || !a->node_mem ||
	    !a->matrix || !a->matrix_unknown ||
	    (a->n_nodes > 2 && !a->cpuvote) || aggr_init_index(a) < 0 ||
	    (a->n_nodes > 1 &&
	     pagetab_set_ext(a->pages, PAGETAB_EXT_LOCALITY) < 0)) {
		aggr_fini(a);
		return -ENOMEM;
	}
	return 0;
}

void
aggr_fini(struct aggr *a)
{
	if (!a)
		return;
	pagetab_free(a->pages);
	threadtab_free(a->threads);
	proctab_free(a->procs);
	a->procs = NULL;
	free(a->tslots);
	a->tslots = NULL;
	free(a->cpu_samples);
	free(a->node_mem);
	free(a->matrix);
	free(a->matrix_unknown);
	free(a->cpu_node_idx);
	free(a->node_idx);
	a->cpu_node_idx = a->node_idx = NULL;
	free(a->cpu_acc);
	a->cpu_acc = NULL;
	free(a->cells);
	a->cells = NULL;
	free(a->cell_list);
	a->cell_list = NULL;
	free(a->cell_loc);
	a->cell_loc = NULL;
	cpuvote_free(a->cpuvote);
	a->cpuvote = NULL;
	sides_free(a->sides);
	a->sides = NULL;
	a->pages = NULL;
	a->threads = NULL;
	a->cpu_samples = a->node_mem = a->matrix = a->matrix_unknown = NULL;
}

void
aggr_add(struct aggr *a, const struct sample *s)
{
	a->weights_possible |= s->weight != 0;
	a->batch[a->n_batch++] = *s;
	if (a->n_batch == AGGR_BATCH)
		aggr_flush(a);
}

/* What aggr_account adds up over a batch before it touches the aggr. */
struct aggr_run {
	uint64_t kinds[3];	/* from the slots, as they spill */
	unsigned weight_off;	/* the weight extension's; 0 none */
	size_t n_cells;		/* cells touched (aggr->cell_list) */
};

/* The features aggr_account_all is compiled for, each one a loop with
 * only the branches it needs. */
#define AGGR_F_SIDES	1u	/* side tables */
#define AGGR_F_LOC	2u	/* locality extension (more than one node) */
#define AGGR_F_WEIGHT	4u	/* weight extension */
#define AGGR_F_VOTE	8u	/* cpuvote (more than two nodes) */
#define AGGR_F_LIST	16u	/* many cells: list those touched */
#define AGGR_F_PREFETCH	32u	/* side tables past the cache's size */
#define AGGR_F_ALL	63u

/* Up to this many cells (three nodes) the fold reads them all. */
#define AGGR_FEW_CELLS	16

/*
 * Accounts the batch's samples through the entries the lookup found (NULL:
 * untracked).  The node counts go to the batch's cells first, one add a
 * sample whatever is known of the CPU's and the page's node; aggr_fold
 * spreads them over the node totals.  f is a constant in every caller.
 */
static inline __attribute__((always_inline)) void
aggr_account_all(struct aggr *a, struct aggr_run *run,
		 struct page_entry *const *ents, size_t n, unsigned f)
{
	const struct aggr_cpu *cpus = a->cpu_acc;
	const int16_t *node_idx = a->node_idx;
	uint64_t *cells = a->cells, *cpu_samples = a->cpu_samples;
	const uint8_t *cell_loc = a->cell_loc;
	uint32_t *cell_list = a->cell_list;
	uint32_t n_cpus = (uint32_t)a->n_cpus;
	uint16_t max_node = (uint16_t)a->max_node;
	struct pagetab *pages = a->pages;
	size_t n_cells = run->n_cells;
	uint64_t untracked = 0;

	for (size_t i = 0; i < n; i++) {
		const struct sample *s = &a->batch[i];
		struct page_entry *e = ents[i];
		const struct aggr_cpu *cp;
		struct aggr_tslot *ts;
		unsigned kind;
		uint32_t c, col, cell;

		/* The side tables, once past the cache's size. */
		if ((f & AGGR_F_PREFETCH) && i + AGGR_PREFETCH < n &&
		    ents[i + AGGR_PREFETCH])
			sides_prefetch(a->sides, ents[i + AGGR_PREFETCH]->key,
				       a->batch[i + AGGR_PREFETCH].pid,
				       a->batch[i + AGGR_PREFETCH].ip,
				       ents[i + AGGR_PREFETCH]->total + 1u);
		if (__builtin_expect(!e, 0)) {
			untracked++;
			continue;
		}
		kind = s->kind <= SAMPLE_OTHER ? s->kind : SAMPLE_OTHER;
		pagetab_count1(pages, e, kind);
		if ((f & AGGR_F_WEIGHT) && s->weight)
			pagetab_weight_add(pages, e, run->weight_off,
					   s->weight);
		c = (uint32_t)s->cpu < n_cpus ? (uint32_t)s->cpu : n_cpus;
		cp = &cpus[c];
		/* Node numbers past max_node and PAGE_NODE_* (negative, so
		 * large as u16) have no index: column 0. */
		col = (uint16_t)e->node <= max_node ?
		      (uint32_t)(node_idx[e->node] + 1) : 0;
		cell = cp->row + col;
		if (!(f & AGGR_F_LIST))
			cells[cell]++;
		else if (cells[cell]++ == 0)
			cell_list[n_cells++] = cell;
		cpu_samples[cp->slot]++;
		if ((f & AGGR_F_VOTE) && cp->ci1 &&
		    cpuvote_add(a->cpuvote, s->pid, pagetab_entry_page(e),
				(int)cp->ci1 - 1) < 0)
			a->vote_untracked++;
		if ((f & AGGR_F_LOC) && cp->ci1 && col)
			pagetab_locality_inc(pages, e, cp->ci1 == col);
		/* Thread and process, without a branch: the kind, the
		 * locality the node matrix gives the cell, and the page's
		 * node column. */
		ts = aggr_thread_slot(a, run->kinds, s);
		ts->kinds[kind]++;
		ts->lr[cell_loc[cell]]++;
		ts->proc->nodes[col]++;
		if (f & AGGR_F_SIDES)
			sides_account(a->sides, s, e->key, e->total);
	}
	run->n_cells = n_cells;
	a->interval.untracked += untracked;
}

/* Adds the batch's cells to the node totals and zeroes them again: those
 * listed, or all of them (list NULL). */
static void
aggr_fold(struct aggr *a, const uint32_t *list, size_t n_list)
{
	size_t nn = (size_t)a->n_nodes, nn1 = nn + 1;

	for (size_t k = 0; k < n_list; k++) {
		uint32_t cell = list ? list[k] : (uint32_t)k;
		size_t row = cell / nn1, col = cell % nn1;
		uint64_t v = a->cells[cell];

		a->cells[cell] = 0;
		if (col)
			a->node_mem[col - 1] += v;
		else
			a->mem_unknown += v;
		if (!row)
			a->cpu_unknown += v;
		else if (col)
			a->matrix[(row - 1) * nn + col - 1] += v;
		else
			a->matrix_unknown[row - 1] += v;
	}
}

/* aggr_account_all for the features on, f, with f a constant. */
static void
aggr_account_batch(struct aggr *a, struct aggr_run *run,
		   struct page_entry *const *ents, size_t n, unsigned f)
{
#define AGGR_CASE(c)						\
	case (c):						\
		aggr_account_all(a, run, ents, n, (c));		\
		break

	switch (f) {
	AGGR_CASE(0);
	AGGR_CASE(AGGR_F_LOC);
	AGGR_CASE(AGGR_F_WEIGHT);
	AGGR_CASE(AGGR_F_LOC | AGGR_F_WEIGHT);
	AGGR_CASE(AGGR_F_SIDES);
	AGGR_CASE(AGGR_F_SIDES | AGGR_F_LOC);
	AGGR_CASE(AGGR_F_SIDES | AGGR_F_WEIGHT);
	AGGR_CASE(AGGR_F_SIDES | AGGR_F_LOC | AGGR_F_WEIGHT);
	AGGR_CASE(AGGR_F_SIDES | AGGR_F_PREFETCH);
	AGGR_CASE(AGGR_F_SIDES | AGGR_F_PREFETCH | AGGR_F_LOC);
	AGGR_CASE(AGGR_F_SIDES | AGGR_F_PREFETCH | AGGR_F_WEIGHT);
	AGGR_CASE(AGGR_F_SIDES | AGGR_F_PREFETCH | AGGR_F_LOC |
		  AGGR_F_WEIGHT);
	default:
		/* More than two nodes (cpuvote; from four on, a list of
		 * cells): a branch for each feature. */
		aggr_account_all(a, run, ents, n, f & AGGR_F_ALL);
		break;
	}
#undef AGGR_CASE
}

/* Whether any queued sample carries a weight: no early exit, so the
 * loop is a chain of ORs. */
static bool
aggr_batch_weighs(const struct aggr *a)
{
	uint64_t any = 0;

	for (size_t i = 0; i < a->n_batch; i++)
		any |= a->batch[i].weight;
	return any != 0;
}

/*
 * A batch: every page looked up (inserted when new) in one pass with the
 * slots of later samples prefetched, then move_pages for the pages that
 * need it, then each sample accounted through the entry found in the
 * first pass (nothing is inserted in between, so the pointers hold).
 */
void
aggr_flush(struct aggr *a)
{
	size_t n = a->n_batch;
	struct page_entry *ents[AGGR_BATCH];
	bool inserted[AGGR_BATCH], want[AGGR_BATCH];
	struct aggr_run run;
	size_t n_cells;
	unsigned f;

	if (n == 0) {
		sides_flush_end(a->sides, aggr_proc_worth_naming, a);
		return;
	}
	/* The first sample with a latency brings the weight extension; if
	 * that fails for want of memory, latencies are not shown. */
	if (!(pagetab_ext(a->pages) & PAGETAB_EXT_WEIGHT) &&
	    a->weights_possible && aggr_batch_weighs(a))
		pagetab_set_ext(a->pages, PAGETAB_EXT_WEIGHT);
	pagetab_get_samples(a->pages, a->batch, n, ents, inserted);
	/* The code-site and level tables' room follows the pages tracked. */
	sides_room(a->sides, pagetab_count(a->pages));
	/* Without side tables, nodemap, physnode or objects nothing happens
	 * between lookup and accounting. */
	if ((a->sides || a->nodemap || a->physnode || a->objects) &&
	    aggr_decide(a, ents, inserted, want))
		aggr_resolve(a, want);
	memset(&run, 0, sizeof(run));
	run.weight_off = pagetab_weight_off(a->pages);
	n_cells = ((size_t)a->n_nodes + 1) * ((size_t)a->n_nodes + 1);
	f = (a->sides ? AGGR_F_SIDES : 0) |
	    (sides_prefetch_wanted(a->sides) ? AGGR_F_PREFETCH : 0) |
	    (pagetab_ext(a->pages) & PAGETAB_EXT_LOCALITY ? AGGR_F_LOC : 0) |
	    (run.weight_off ? AGGR_F_WEIGHT : 0) |
	    (a->cpuvote ? AGGR_F_VOTE : 0) |
	    (n_cells > AGGR_FEW_CELLS ? AGGR_F_LIST : 0);
	aggr_account_batch(a, &run, ents, n, f);
	if (f & AGGR_F_LIST)
		aggr_fold(a, a->cell_list, run.n_cells);
	else
		aggr_fold(a, NULL, n_cells);
	for (size_t i = 0; i < AGGR_TSLOTS; i++)
		aggr_tslot_spill(a, run.kinds, &a->tslots[i]);
	a->interval.loads += run.kinds[SAMPLE_LOAD];
	a->interval.stores += run.kinds[SAMPLE_STORE];
	a->interval.other += run.kinds[SAMPLE_OTHER];
	a->interval.samples += run.kinds[SAMPLE_LOAD] +
			       run.kinds[SAMPLE_STORE] +
			       run.kinds[SAMPLE_OTHER];
	a->n_batch = 0;
	sides_flush_end(a->sides, aggr_proc_worth_naming, a);
}

struct pagetab *
aggr_pages(struct aggr *a)
{
	return a->pages;
}

struct sides *
aggr_sides(struct aggr *a)
{
	return a->sides;
}

void
aggr_count_lost(struct aggr *a, uint64_t n)
{
	a->interval.lost += n;
}

void
aggr_count_throttled(struct aggr *a, uint64_t n)
{
	a->interval.throttled += n;
}

void
aggr_count_unattributed(struct aggr *a, uint64_t n)
{
	a->interval.unattributed += n;
}

static void
aggr_clear_interval(struct aggr *a)
{
	size_t nn = (size_t)a->n_nodes;

	memset(&a->interval, 0, sizeof(a->interval));
	memset(a->cpu_samples, 0, (size_t)a->n_cpus * sizeof(uint64_t));
	memset(a->node_mem, 0, nn * sizeof(uint64_t));
	memset(a->matrix, 0, nn * nn * sizeof(uint64_t));
	memset(a->matrix_unknown, 0, nn * sizeof(uint64_t));
	a->mem_unknown = 0;
	a->cpu_unknown = 0;
	a->reval_pages = a->reval_changed = a->phys_resolved = 0;
	if (a->nodemap) {
		const struct nodemap_stats *st = nodemap_stats(a->nodemap);

		a->nm_pages_mark = st->pages;
		a->nm_resolved_mark = st->resolved;
		a->nm_ns_mark = st->ns;
	}
}

void
aggr_next_interval(struct aggr *a)
{
	counts_add(&a->cumulative, &a->interval);
	aggr_clear_interval(a);
	pagetab_next_interval(a->pages);
	threadtab_next_interval(a->threads);
	proctab_next_interval(a->procs);
	cpuvote_next_interval(a->cpuvote);
	sides_next_interval(a->sides);
}

void
aggr_reset(struct aggr *a)
{
	/* Samples still queued belong to the time before the reset. */
	a->n_batch = 0;
	aggr_clear_interval(a);
	memset(&a->cumulative, 0, sizeof(a->cumulative));
	pagetab_reset(a->pages);
	threadtab_reset(a->threads);
	proctab_reset(a->procs);
	cpuvote_reset(a->cpuvote);
	sides_reset(a->sides);
}
