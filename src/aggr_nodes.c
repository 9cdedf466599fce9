/*
 * Page -> node upkeep of the aggregation (see aggr.h): setting nodes from
 * outside (migration, tests), the PHYS_ADDR map, round-robin revalidation
 * of known nodes and the per-interval figures.  Collector thread only.
 *
 * Revalidation walks the page table with pagetab_foreach in its slot order
 * and resumes after the entries it walked last time, so over successive
 * calls every page is re-asked in turn: a table of P pages at B pages a
 * call is covered every P / B calls.  Growth of the table reorders slots;
 * a page may then wait one extra lap, none is skipped for ever.  The walk
 * up to the cursor costs about a nanosecond an entry and is part of the
 * measured cost per page that sizes each call's share of the budget.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "aggr.h"
#include "frame.h"
#include "nodemap.h"
#include "pagetab.h"

/* At most this many pages a call, whatever the budget (bounds memory). */
#define AGGR_REVAL_MAX		65536
#define AGGR_REVAL_MIN_NS	50	/* floor of the measured cost a page */

static uint64_t
aggr_nodes_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
aggr_set_physnode(struct aggr *a, const struct physnode *p)
{
	a->physnode = p;
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

struct aggr_reval_walk {
	size_t skip;		/* entries to pass before collecting */
	size_t seen;		/* entries visited */
	size_t want;
	size_t n;
	struct page_entry **out;
};

static int
aggr_reval_collect(struct page_entry *e, void *ctx)
{
	struct aggr_reval_walk *w = ctx;

	if (w->seen++ < w->skip)
		return 0;
	/* Never-asked pages are asked at their next flush anyway. */
	if (e->node == PAGE_NODE_UNQUERIED)
		return 0;
	w->out[w->n++] = e;
	return w->n == w->want;
}

static int
aggr_reval_cmp(const void *pa, const void *pb)
{
	const struct page_entry *a = *(struct page_entry *const *)pa;
	const struct page_entry *b = *(struct page_entry *const *)pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->page < b->page ? -1 : a->page > b->page;
}

/* One move_pages batch for ents[0..n), all of one pid. */
static void
aggr_reval_query(struct aggr *a, struct page_entry **ents, size_t n)
{
	unsigned shift = pagetab_page_shift(a->pages);
	uint64_t addrs[NODEMAP_BATCH];
	int16_t nodes[NODEMAP_BATCH];

	for (size_t i = 0; i < n; i++)
		addrs[i] = ents[i]->page << shift;
	/* Whole call failed (process gone, no access): keep what we knew. */
	if (nodemap_query(a->nodemap, ents[0]->pid, addrs, n, nodes) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		int16_t node = nodes[i] >= 0 ? nodes[i] : PAGE_NODE_UNKNOWN;

		if (ents[i]->node >= 0 && node >= 0 && node != ents[i]->node)
			a->reval_changed++;
		ents[i]->node = node;
	}
	a->reval_pages += n;
}

size_t
aggr_revalidate(struct aggr *a, uint64_t budget_ns)
{
	struct aggr_reval_walk w = { 0 };
	size_t count = pagetab_count(a->pages);
	uint64_t t0, spent;

	if (!a->nodemap || count == 0 || budget_ns == 0)
		return 0;
	w.want = (size_t)(budget_ns / a->reval_ns_per_page);
	if (w.want > count)
		w.want = count;
	if (w.want > AGGR_REVAL_MAX)
		w.want = AGGR_REVAL_MAX;
	if (w.want == 0)
		return 0;
	w.out = malloc(w.want * sizeof(*w.out));
	if (!w.out)
		return 0;
	t0 = aggr_nodes_now_ns();
	w.skip = a->reval_cursor < count ? a->reval_cursor : 0;
	/* Stopped early: resume after the last entry taken; else wrap. */
	if (pagetab_foreach(a->pages, aggr_reval_collect, &w))
		a->reval_cursor = w.seen;
	else
		a->reval_cursor = 0;
	qsort(w.out, w.n, sizeof(*w.out), aggr_reval_cmp);
	for (size_t i = 0; i < w.n;) {
		size_t j = i + 1;

		while (j < w.n && j - i < NODEMAP_BATCH &&
		       w.out[j]->pid == w.out[i]->pid)
			j++;
		aggr_reval_query(a, w.out + i, j - i);
		i = j;
	}
	spent = aggr_nodes_now_ns() - t0;
	if (w.n) {
		/* Moving average over calls, so one slow call (a process
		 * exiting, a cold cache) does not halve the next budget. */
		uint64_t per = spent / w.n;

		if (per < AGGR_REVAL_MIN_NS)
			per = AGGR_REVAL_MIN_NS;
		a->reval_ns_per_page = (3 * a->reval_ns_per_page + per) / 4;
	}
	free(w.out);
	return w.n;
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
