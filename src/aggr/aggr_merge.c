/*
 * Shards of an aggregation and their merge (the parallel drain, issue 15;
 * collector/live/dpool.h).  aggr_shard_init: the collector thread before
 * the shard's drain thread starts; the shard itself: that drain thread;
 * aggr_merge: the collector thread while the shard's drain thread is idle.
 *
 * A shard counts its samples as the aggregation it is made like: pages
 * (with their nodes, asked through its own nodemap or the shared
 * memory-block map), per-CPU, node and matrix cells, threads, process
 * rows, side tables (code sites, line heat, code addresses, data-source
 * levels), so that each sample costs what it costs the collector.  What
 * it holds lasts one interval: aggr_merge adds it to the aggregation, as
 * if that had taken the shard's samples itself, and empties the shard.
 * What a shard does not keep: names (the collector reads the records
 * they come from) and the migration vote of machines with more than two
 * nodes.  Where the side tables keep only some pages (line heat's slots,
 * code sites' sets), the merge keeps what the aggregation has room for,
 * as a sample would find it.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "aggr_int.h"
#include "cpuvote.h"
#include "log.h"
#include "nodemap.h"
#include "pagetab.h"
#include "proctab.h"
#include "sides.h"
#include "threadtab.h"

int
aggr_shard_init(struct aggr *shard, const struct aggr *like,
		struct nodemap *nm)
{
	/* The collector's --max-pages: a shard tracks no more pages than
	 * the collector may (those past it count untracked, merged). */
	int ret = aggr_init(shard, like->topo, nm,
			    pagetab_page_shift(like->pages),
			    pagetab_max_pages(like->pages));

	if (ret < 0)
		return ret;
	/* Names come from the records the collector reads: its own. */
	sides_names_off(shard->sides);
	sides_share_room(shard->sides, like->sides);
	cpuvote_free(shard->cpuvote);
	shard->cpuvote = NULL;
	aggr_set_physnode(shard, like->physnode);
	shard->sole_node = like->sole_node;
	ret = aggr_procs_config(shard, proctab_max(like->procs), false);
	if (ret == 0 && (pagetab_ext(like->pages) & PAGETAB_EXT_WEIGHT))
		ret = pagetab_set_ext(shard->pages, PAGETAB_EXT_WEIGHT);
	if (ret < 0)
		aggr_fini(shard);
	return ret < 0 ? -ENOMEM : 0;
}

struct aggr_merge {
	struct aggr *dst;
	const struct aggr *src;
	unsigned shift;
	size_t active;		/* the shard's pages with samples */
};

/* A page of this interval into dst: its counts, its node when dst has
 * none (a page two shards saw keeps the first answer). */
static int
aggr_merge_page(struct page_entry *e, void *ctx)
{
	struct aggr_merge *m = ctx;
	struct page_counts c;
	struct page_entry *d;
	bool inserted = false;

	if (pagetab_interval_samples(m->src->pages, e) == 0)
		return 0;
	m->active++;
	pagetab_read(m->src->pages, e, &c);
	/* The shard's page lives on (its node known): its total is of
	 * every interval, this one's is what dst has not seen. */
	c.total = c.loads + c.stores + c.other;
	d = pagetab_get(m->dst->pages, pagetab_entry_pid(e),
			pagetab_entry_page(e) << m->shift, &inserted);
	/* dst's table full (ENOMEM at its limit): the samples stay in
	 * every sum, the page in none of dst's rows; counted. */
	if (!d) {
		m->dst->merge_unplaced += c.loads + c.stores + c.other;
		return 0;
	}
	if (inserted && m->dst->sides)
		sides_new_page(m->dst->sides, pagetab_entry_pid(e),
			       pagetab_entry_page(e) << m->shift);
	if (e->node >= 0 && (d->node < 0 || inserted))
		d->node = e->node;
	pagetab_add_counts(m->dst->pages, d, &c);
	return 0;
}

/* A process row's interval counts into another. */
static void
aggr_merge_row(struct proc_entry *d, const struct proc_entry *e, int n_nodes)
{
	for (int k = 0; k < 3; k++) {
		d->kinds[k] += e->kinds[k];
		d->lr[k] += e->lr[k];
	}
	for (int j = 0; j <= n_nodes; j++)
		d->nodes[j] += e->nodes[j];
}

/* A process row of the shard into dst's. */
static void
aggr_merge_proc(struct proc_entry *e, void *ctx)
{
	struct aggr_merge *m = ctx;

	if (proctab_samples(e))
		aggr_merge_row(aggr_proc_of(m->dst, e->pid), e,
			       m->dst->n_nodes);
}

/* Sums of the interval's arrays and counters. */
static void
aggr_merge_sums(struct aggr *dst, const struct aggr *src)
{
	size_t nn = (size_t)dst->n_nodes;

	counts_add(&dst->interval, &src->interval);
	for (int c = 0; c < dst->n_cpus; c++)
		dst->cpu_samples[c] += src->cpu_samples[c];
	for (size_t i = 0; i < nn; i++) {
		dst->node_mem[i] += src->node_mem[i];
		dst->matrix_unknown[i] += src->matrix_unknown[i];
	}
	for (size_t i = 0; i < nn * nn; i++)
		dst->matrix[i] += src->matrix[i];
	dst->mem_unknown += src->mem_unknown;
	dst->cpu_unknown += src->cpu_unknown;
	dst->reval_pages += src->reval_pages;
	dst->reval_changed += src->reval_changed;
	dst->phys_resolved += src->phys_resolved;
	if (dst->nodemap && src->nodemap) {
		const struct nodemap_stats *st = nodemap_stats(src->nodemap);

		/* The shard's move_pages queries count in dst's figures
		 * (aggr_noderes: stats less marks): dst's marks go back by
		 * them, modulo 2^64. */
		dst->nm_pages_mark -= st->pages - src->nm_pages_mark;
		dst->nm_resolved_mark -= st->resolved - src->nm_resolved_mark;
		dst->nm_ns_mark -= st->ns - src->nm_ns_mark;
	}
}

/*
 * The shard's next interval: its rows, threads and side tables forgotten
 * (merged whole), its pages kept with their nodes, which are asked again
 * as dst's are (the age and budget dst had this interval).  Pages with
 * latencies are forgotten too: their weight sums are since the page came,
 * and the next merge would add them again.  So are all its pages once
 * most of them saw no sample this interval (more than AGGR_SHARD_IDLE
 * times the active ones, past AGGR_SHARD_KEEP): kept, they would make
 * every merge walk every page the shard ever saw (and fill a table
 * --max-pages limits with pages of the past); the active pages' nodes
 * are asked again, once for the growth that paid for this.  A shard at
 * its --max-pages forgets its pages at every merge.
 */
#define AGGR_SHARD_KEEP	65536
#define AGGR_SHARD_IDLE	4

static int
aggr_shard_clear(struct aggr *src, const struct aggr *dst, size_t active)
{
	size_t n, kept = pagetab_count(src->pages);
	size_t max = pagetab_max_pages(src->pages);
	int32_t *pids = proctab_pids(src->procs, &n);
	/* Most pages idle; or full (--max-pages): its pages of the past
	 * would make new pages untracked after the collector's table was
	 * reset (r), though the collector has room again. */
	bool forget = (kept > AGGR_SHARD_KEEP &&
		       kept / AGGR_SHARD_IDLE > active) ||
		      (max && kept >= max);

	aggr_next_interval(src);
	if (forget || (pagetab_ext(src->pages) & PAGETAB_EXT_WEIGHT))
		pagetab_reset(src->pages);
	src->shard_resets += forget;
	threadtab_reset(src->threads);
	/* Side tables kept at their size (refilled at once each interval),
	 * but back to their first one with the pages: a table grown for a
	 * wide interval would be cleared whole at every merge. */
	if (forget)
		sides_reset(src->sides);
	else
		sides_clear(src->sides);
	/* Its code-site and level tables hold the collector's hot pages. */
	sides_share_room(src->sides, dst->sides);
	aggr_tslots_forget(src);
	for (size_t i = 0; i < n; i++)
		proctab_remove(src->procs, pids[i]);
	free(pids);
	src->reval_allow = dst->reval_allow;
	src->reval_age = dst->reval_age;
	return n && !pids ? -ENOMEM : 0;
}

int
aggr_merge(struct aggr *dst, struct aggr *src)
{
	struct aggr_merge m = { .dst = dst, .src = src,
				.shift = pagetab_page_shift(src->pages) };
	uint64_t unplaced = dst->merge_unplaced;
	struct thread_entry *te;
	size_t n_te;

	if (pagetab_page_shift(src->pages) != pagetab_page_shift(dst->pages) ||
	    src->n_nodes != dst->n_nodes || src->n_cpus != dst->n_cpus)
		return -EINVAL;
	aggr_flush(src);
	if ((pagetab_ext(src->pages) & PAGETAB_EXT_WEIGHT) &&
	    !(pagetab_ext(dst->pages) & PAGETAB_EXT_WEIGHT))
		pagetab_set_ext(dst->pages, PAGETAB_EXT_WEIGHT);
	aggr_merge_sums(dst, src);
	pagetab_foreach(src->pages, aggr_merge_page, &m);
	te = threadtab_snapshot(src->threads, &n_te);
	for (size_t i = 0; te && i < n_te; i++)
		threadtab_add(dst->threads, te[i].pid, te[i].tid,
			      te[i].samples);
	free(te);
	proctab_foreach(src->procs, aggr_merge_proc, &m);
	sides_room(dst->sides, pagetab_count(dst->pages));
	sides_merge(dst->sides, src->sides);
	aggr_merge_row(proctab_sink(dst->procs), proctab_sink(src->procs),
		       dst->n_nodes);
	if (dst->merge_unplaced != unplaced)
		log_msg("merge: %llu samples of pages without room in the "
			"page table (in the sums, in no page row)",
			(unsigned long long)(dst->merge_unplaced - unplaced));
	return aggr_shard_clear(src, dst, m.active) < 0 ||
	       (n_te && !te) ? -ENOMEM : 0;
}
