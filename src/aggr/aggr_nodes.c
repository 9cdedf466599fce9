/*
 * Page -> node upkeep of the aggregation (see aggr.h): setting nodes from
 * outside (migration, tests), the PHYS_ADDR map, the revalidation budget
 * and the per-interval figures, and a batch's work between its lookup and
 * its accounting (aggr_decide, aggr_resolve: aggr_flush calls them).
 * Collector thread only.
 *
 * Revalidation rides on ingest: a sampled page whose known node was last
 * asked AGGR_REVAL_AGE or more intervals ago joins the batch's move_pages
 * query (aggr_decide), up to reval_allow pages an interval; when more are due
 * than allowed, the age that makes a page due grows until the budget
 * keeps up, oldest answers first.  So the pages that make the interval's
 * figures are the ones kept current, no table walk is needed (a walk over
 * the table costs about what a frame's scan does), and pages that nobody
 * samples cost nothing; the frame re-reads the node of every page it
 * lists (framebuild.c), sampled or not.  None of this runs on a machine
 * with one node (sole_node, aggr.h): its pages get that node.
 */
#include "config.h"

#include <errno.h>

#include "aggr.h"
#include "aggr_int.h"
#include "cpuvote.h"
#include "frame.h"
#include "nodemap.h"
#include "objtab.h"
#include "pagetab.h"
#include "physnode.h"
#include "sides.h"

/* Until this many pages were asked, assume what a batched move_pages
 * query costs a page (a few hundred ns; bench/bench-nodes.c measures it,
 * docs/kernel.md, "NUMA" says why batches are cheaper). */
#define AGGR_REVAL_MIN_PAGES	1024
#define AGGR_REVAL_DEFAULT_NS	400
#define AGGR_REVAL_MIN_NS	50	/* floor of the measured cost a page */
/* Query stamps keep 15 bits of the interval number. */
#define AGGR_REVAL_MAX_AGE	0x4000u

void
aggr_set_physnode(struct aggr *a, const struct physnode *p)
{
	a->physnode = p;
}

void
aggr_votes_off(struct aggr *a)
{
	cpuvote_free(a->cpuvote);
	a->cpuvote = NULL;
}

int
aggr_set_node(struct aggr *a, int32_t pid, uint64_t addr, int node)
{
	bool inserted;
	struct page_entry *e = pagetab_get(a->pages, pid, addr, &inserted);

	if (!e)
		return -ENOSPC;
	e->node = node >= 0 && node <= INT16_MAX ? (int16_t)node :
						   PAGE_NODE_UNKNOWN;
	return 0;
}

uint64_t
aggr_revalidate_budget(struct aggr *a, uint64_t budget_ns)
{
	uint64_t per = AGGR_REVAL_DEFAULT_NS;
	uint32_t epoch = pagetab_epoch(a->pages);

	/* Once an interval: pages were refused last interval for want of
	 * budget, so make them due later (old ones first); else relax. */
	if (a->reval_age == 0)
		a->reval_age = AGGR_REVAL_AGE;
	if (epoch != a->reval_epoch) {
		if (a->reval_skipped && a->reval_age < AGGR_REVAL_MAX_AGE)
			a->reval_age++;
		else if (!a->reval_skipped && a->reval_age > AGGR_REVAL_AGE)
			a->reval_age--;
		a->reval_skipped = 0;
		a->reval_epoch = epoch;
	}
	if (!a->nodemap) {
		a->reval_allow = 0;
		return 0;
	}
	/* The average so far; calls of 1-256 pages from the ingest path,
	 * bigger ones from the frame's refresh. */
	{
		const struct nodemap_stats *st = nodemap_stats(a->nodemap);

		if (st->pages >= AGGR_REVAL_MIN_PAGES)
			per = st->ns / st->pages;
	}
	if (per < AGGR_REVAL_MIN_NS)
		per = AGGR_REVAL_MIN_NS;
	a->reval_ns_per_page = per;
	a->reval_allow = budget_ns / per;
	return a->reval_allow;
}

void
aggr_noderes(const struct aggr *a, struct frame_noderes *out)
{
	out->revalidated = a->reval_pages;
	out->changed = a->reval_changed;
	out->phys = a->phys_resolved;
	out->queried = out->resolved = out->query_us = 0;
	if (a->nodemap) {
		const struct nodemap_stats *st = nodemap_stats(a->nodemap);

		out->queried = st->pages - a->nm_pages_mark;
		out->resolved = st->resolved - a->nm_resolved_mark;
		out->query_us = (st->ns - a->nm_ns_mark) / 1000;
	}
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
void
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

/*
 * aggr_decide without objects, a PHYS_ADDR map or node queries (a replay
 * whose samples have no PHYS_ADDR; a live run on one node): the side
 * tables told of new pages, and on one node every process's page put
 * there.  Nothing is queried.  A replay of page faults spent 27
 * instructions a sample in the general loop, on tests that cannot pass.
 */
static bool
aggr_decide_plain(struct aggr *a, struct page_entry *const *ents,
		  const bool *inserted)
{
	int16_t sole = (int16_t)a->sole_node;

	for (size_t i = 0; i < a->n_batch; i++) {
		struct page_entry *e = ents[i];

		if (!e)
			continue;
		if (inserted[i] && a->sides)
			sides_new_page(a->sides, a->batch[i].pid,
				       a->batch[i].addr);
		if (sole >= 0 && a->batch[i].pid > 0)
			e->node = sole;
	}
	return false;
}

/*
 * Page -> node work of a batch, between lookup and accounting: side tables
 * told of new pages, nodes from PHYS_ADDR, pages queued for move_pages.
 * Returns whether any page is queued (want[]).
 */
bool
aggr_decide(struct aggr *a, struct page_entry *const *ents,
	    const bool *inserted, bool *want)
{
	bool any_query = false;
	/* The last object found with a first toucher: its pages need no
	 * look-up for the rest of the batch (the table cannot change
	 * within it); len 0 = none. */
	int32_t done_pid = 0;
	uint64_t done_base = 0, done_len = 0;

	if (!a->objects && !a->physnode && (!a->nodemap || a->sole_node >= 0))
		return aggr_decide_plain(a, ents, inserted);
	for (size_t i = 0; i < a->n_batch; i++) {
		const struct sample *s = &a->batch[i];
		struct page_entry *e = ents[i];
		const struct obj *o;

		want[i] = false;
		if (!e)
			continue;
		if (inserted[i] && a->sides)
			sides_new_page(a->sides, s->pid, s->addr);
		/* The page's first sample this interval (none counted yet):
		 * its object's first toucher, if it has none.  Once per page
		 * and interval, not per sample. */
		if (a->objects && (e->kinds[0] | e->kinds[1] | e->kinds[2]) == 0 &&
		    !(s->pid == done_pid && s->addr - done_base < done_len) &&
		    (o = objtab_touch(a->objects, s->pid, s->addr, s->tid)) &&
		    o->touch_tid) {
			done_pid = s->pid;
			done_base = o->base;
			done_len = o->size;
		}
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
		/* pid 0 (the idle task; -e damon -a's physical row) has no
		 * address space: move_pages(0, ...) would ask memtop's own,
		 * and no process holds its pages.  Its pages get no node. */
		if (s->pid <= 0)
			continue;
		/* One node: a process's page sampled is on it and cannot
		 * move. */
		if (a->sole_node >= 0) {
			e->node = (int16_t)a->sole_node;
			continue;
		}
		if (aggr_needs_query(a, e)) {
			e->flags = aggr_query_stamp(a);
			want[i] = true;
			any_query = true;
		}
	}
	return any_query;
}
