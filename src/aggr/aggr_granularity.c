/* aggr_granularity_apply: see aggr_granularity.h.  Collector thread. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>

#include "aggr.h"
#include "aggr_granularity.h"
#include "granularity.h"
#include "pagetab.h"
#include "sides.h"

struct aggr_granularity_fold {
	struct pagetab *dst;
	const struct pagetab *src;
	unsigned old_shift;
};

static int
aggr_granularity_fold_one(struct page_entry *e, void *ctx)
{
	struct aggr_granularity_fold *g = ctx;
	bool inserted = false;
	struct page_counts c;
	struct page_entry *d = pagetab_get(g->dst, pagetab_entry_pid(e),
					   pagetab_entry_page(e) << g->old_shift,
					   &inserted);

	/* The coarser table never needs more entries than the old one, so
	 * only ENOMEM fails here; that page's history is then gone. */
	if (!d)
		return 0;
	/* Interval counts read as 0 when old, so only this interval's add
	 * up into the new table's (current) interval. */
	pagetab_read(g->src, e, &c);
	pagetab_add_counts(g->dst, d, &c);
	if (inserted)
		d->node = e->node;
	else if (d->node != e->node)
		d->node = PAGE_NODE_UNQUERIED;
	/* Node queries are due again for the new, bigger page. */
	d->flags = 0;
	return 0;
}

int
aggr_granularity_apply(struct aggr *a, unsigned shift, size_t max_pages)
{
	unsigned old = pagetab_page_shift(a->pages);
	struct aggr_granularity_fold g = { .old_shift = old };
	struct pagetab *t;

	if (!granularity_valid(shift))
		return -EINVAL;
	if (shift == old)
		return 0;
	aggr_flush(a);
	t = pagetab_new(shift, max_pages);
	if (!t || pagetab_set_ext(t, pagetab_ext(a->pages)) < 0) {
		pagetab_free(t);
		return -ENOMEM;
	}
	if (shift > old) {
		g.dst = t;
		g.src = a->pages;
		pagetab_foreach(a->pages, aggr_granularity_fold_one, &g);
	}
	pagetab_free(a->pages);
	a->pages = t;
	/* The side tables' room for the folded pages, before their fold. */
	sides_room(a->sides, pagetab_count(t));
	sides_set_page_shift(a->sides, shift, max_pages);
	sides_set_pages(a->sides, t);
	return 0;
}
