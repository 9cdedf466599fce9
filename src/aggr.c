/* Collector thread only.  See aggr.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggr.h"
#include "cpuvote.h"
#include "frame.h"
#include "nodemap.h"
#include "pagetab.h"
#include "physnode.h"
#include "sides.h"
#include "threadtab.h"
#include "topo.h"

/* A batch is looked up in one pagetab_get_samples call. */
_Static_assert(AGGR_BATCH <= PAGETAB_MANY, "batch larger than a lookup");

/* Samples ahead whose side-table slots are fetched while one is counted. */
#define AGGR_PREFETCH	8

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
	nn = (size_t)a->n_nodes;
	a->pages = pagetab_new(page_shift, max_pages);
	a->threads = threadtab_new();
	a->cpu_samples = calloc((size_t)a->n_cpus, sizeof(uint64_t));
	a->node_mem = calloc(nn, sizeof(uint64_t));
	a->matrix = calloc(nn * nn, sizeof(uint64_t));
	a->matrix_unknown = calloc(nn, sizeof(uint64_t));
	a->sides = sides_new(page_shift, max_pages);
	if (a->n_nodes > 2)
		a->cpuvote = cpuvote_new(max_pages);
	if (!a->pages || !a->threads || !a->cpu_samples || !a->node_mem ||
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
	free(a->cpu_samples);
	free(a->node_mem);
	free(a->matrix);
	free(a->matrix_unknown);
	free(a->cpu_node_idx);
	free(a->node_idx);
	a->cpu_node_idx = a->node_idx = NULL;
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
	a->batch[a->n_batch++] = *s;
	if (a->n_batch == AGGR_BATCH)
		aggr_flush(a);
}

/* Entries flagged with the interval they were last asked about. */
static uint16_t
aggr_query_stamp(const struct aggr *a)
{
	return (uint16_t)(pagetab_epoch(a->pages) | 0x8000u);
}

/* Intervals since e was last asked; "very old" when never asked. */
static unsigned
aggr_query_age(const struct aggr *a, const struct page_entry *e)
{
	if (!(e->flags & 0x8000u))
		return 0x8000u;
	return (aggr_query_stamp(a) - e->flags) & 0x7fffu;
}

/* Pages without a node: once an interval.  Known pages: again when the
 * answer is old and the interval's revalidation budget allows. */
static bool
aggr_needs_query(struct aggr *a, const struct page_entry *e)
{
	if (!a->nodemap)
		return false;
	if (e->node < 0)
		return e->flags != aggr_query_stamp(a);
	if (aggr_query_age(a, e) < (a->reval_age ? a->reval_age :
						   AGGR_REVAL_AGE))
		return false;
	if (a->reval_pages >= a->reval_allow) {
		a->reval_skipped++;
		return false;
	}
	a->reval_pages++;
	return true;
}

/* Asks move_pages about the queued pages, one call per pid. */
static void
aggr_resolve(struct aggr *a, const bool *want)
{
	unsigned shift = pagetab_page_shift(a->pages);
	uint64_t addrs[AGGR_BATCH];
	int16_t nodes[AGGR_BATCH];
	bool done[AGGR_BATCH] = { false };

	for (size_t i = 0; i < a->n_batch; i++) {
		int32_t pid = a->batch[i].pid;
		size_t n = 0;

		if (!want[i] || done[i])
			continue;
		for (size_t j = i; j < a->n_batch; j++) {
			if (!want[j] || done[j] || a->batch[j].pid != pid)
				continue;
			addrs[n++] = a->batch[j].addr >> shift << shift;
			done[j] = true;
		}
		nodemap_query(a->nodemap, pid, addrs, n, nodes);
		for (size_t k = 0; k < n; k++) {
			struct page_entry *e = pagetab_find(a->pages, pid,
							    addrs[k] >> shift);

			if (!e)
				continue;
			if (nodes[k] >= 0) {
				if (e->node >= 0 && e->node != nodes[k])
					a->reval_changed++;
				e->node = nodes[k];
			} else if (e->node < 0) {
				/* A known node stays until a definite
				 * answer replaces it. */
				e->node = PAGE_NODE_UNKNOWN;
			}
		}
	}
}

static inline int
aggr_node_index(const struct aggr *a, int node)
{
	return node >= 0 && node <= a->max_node ? a->node_idx[node] : -1;
}

/*
 * Per-thread counts of one batch, added to the thread table once a thread
 * a batch instead of once a sample: a ring holds one thread's samples,
 * or one CPU's time slice of a few threads, and even samples of 16
 * threads in random order (bench-ingest) cost a slot here, not a lookup
 * in the table.  Direct-mapped by the tid's low bits: tids are handed out
 * in sequence, so a process's threads do not collide there, and a tid
 * that does collide hands the slot's count to the table first.
 */
#define AGGR_TSLOTS	64

struct aggr_tslot {
	int32_t tid, pid;	/* pid: the newest, as threadtab keeps */
	uint32_t n;
};

/* What aggr_account adds up over a batch before it touches the aggr. */
struct aggr_run {
	uint64_t kinds[3];
	unsigned loc_off;	/* the page table's extensions, 0 none */
	unsigned weight_off;
	struct aggr_tslot threads[AGGR_TSLOTS];
};

static void
aggr_tslot_spill(struct aggr *a, struct aggr_tslot *ts)
{
	if (ts->n)
		threadtab_add(a->threads, ts->pid, ts->tid, ts->n);
	ts->n = 0;
}

static inline void
aggr_thread_count(struct aggr *a, struct aggr_run *run, int32_t pid,
		  int32_t tid)
{
	struct aggr_tslot *ts = &run->threads[(uint32_t)tid &
					      (AGGR_TSLOTS - 1)];

	if (__builtin_expect(ts->tid != tid, 0)) {
		aggr_tslot_spill(a, ts);
		ts->tid = tid;
	}
	ts->pid = pid;
	ts->n++;
}

static inline __attribute__((always_inline)) void
aggr_account(struct aggr *a, struct aggr_run *run, const struct sample *s,
	     struct page_entry *e)
{
	int ci = -1, nj;
	size_t nn = (size_t)a->n_nodes;
	unsigned kind = s->kind <= SAMPLE_OTHER ? s->kind : SAMPLE_OTHER;

	run->kinds[kind]++;
	pagetab_count1(a->pages, e, kind);
	if (s->weight && run->weight_off)
		pagetab_weight_add(a->pages, e, run->weight_off, s->weight);
	if ((uint32_t)s->cpu < (uint32_t)a->n_cpus)
		ci = a->cpu_node_idx[s->cpu];
	nj = aggr_node_index(a, e->node);
	if (a->cpuvote && ci >= 0 &&
	    cpuvote_add(a->cpuvote, s->pid, pagetab_entry_page(e), ci) < 0)
		a->vote_untracked++;

	if (nj >= 0)
		a->node_mem[nj]++;
	else
		a->mem_unknown++;
	if (ci < 0) {
		a->cpu_unknown++;
	} else {
		a->cpu_samples[s->cpu]++;
		if (nj >= 0) {
			a->matrix[(size_t)ci * nn + (size_t)nj]++;
			if (run->loc_off)
				pagetab_locality_inc(a->pages, e, ci == nj);
		} else {
			a->matrix_unknown[ci]++;
		}
	}
	aggr_thread_count(a, run, s->pid, s->tid);
	if (a->sides)
		sides_account(a->sides, s, pagetab_entry_page(e));
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
	bool any_query = false;
	struct aggr_run run;

	if (n == 0) {
		sides_flush_end(a->sides);
		return;
	}
	/* The first sample with a latency brings the weight extension; if
	 * that fails for want of memory, latencies are not shown. */
	if (!(pagetab_ext(a->pages) & PAGETAB_EXT_WEIGHT)) {
		for (size_t i = 0; i < n; i++)
			if (a->batch[i].weight) {
				pagetab_set_ext(a->pages, PAGETAB_EXT_WEIGHT);
				break;
			}
	}
	pagetab_get_samples(a->pages, a->batch, n, ents, inserted);
	for (size_t i = 0; i < n; i++) {
		const struct sample *s = &a->batch[i];
		struct page_entry *e = ents[i];

		want[i] = false;
		if (!e) {
			a->interval.untracked++;
			continue;
		}
		if (inserted[i] && a->sides)
			sides_new_page(a->sides, s->pid, s->addr);
		/* The node at sample time, from the memory-block map: no
		 * syscall, and current even for a page that moved since. */
		if (s->phys_addr && a->physnode) {
			int node = physnode_lookup(a->physnode, s->phys_addr);

			if (node >= 0) {
				e->node = (int16_t)node;
				e->flags = aggr_query_stamp(a);
				a->phys_resolved++;
				continue;
			}
		}
		if (aggr_needs_query(a, e)) {
			e->flags = aggr_query_stamp(a);
			want[i] = true;
			any_query = true;
		}
	}
	if (any_query)
		aggr_resolve(a, want);
	memset(&run, 0, sizeof(run));
	run.loc_off = pagetab_loc_off(a->pages);
	run.weight_off = pagetab_weight_off(a->pages);
	for (size_t i = 0; i < n; i++) {
		/* The side tables are as large as the page table. */
		if (a->sides && i + AGGR_PREFETCH < n &&
		    ents[i + AGGR_PREFETCH])
			sides_prefetch(a->sides,
				       a->batch[i + AGGR_PREFETCH].pid,
				       pagetab_entry_page(
					       ents[i + AGGR_PREFETCH]));
		if (ents[i])
			aggr_account(a, &run, &a->batch[i], ents[i]);
	}
	for (size_t i = 0; i < AGGR_TSLOTS; i++)
		aggr_tslot_spill(a, &run.threads[i]);
	a->interval.loads += run.kinds[SAMPLE_LOAD];
	a->interval.stores += run.kinds[SAMPLE_STORE];
	a->interval.other += run.kinds[SAMPLE_OTHER];
	a->interval.samples += run.kinds[SAMPLE_LOAD] +
			       run.kinds[SAMPLE_STORE] +
			       run.kinds[SAMPLE_OTHER];
	a->n_batch = 0;
	sides_flush_end(a->sides);
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
	cpuvote_reset(a->cpuvote);
	sides_reset(a->sides);
}
