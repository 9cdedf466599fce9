/* See granularity.h. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aggr.h"
#include "granularity.h"
#include "pagetab.h"
#include "sides.h"

static const struct {
	unsigned shift;
	const char *name;
	const char *spellings[4];
} granularity_table[] = {
	{ GRANULARITY_4K, "4 KiB", { "4k", "4kib", "4096", NULL } },
	{ GRANULARITY_2M, "2 MiB", { "2m", "2mib", "2097152", NULL } },
	{ GRANULARITY_1G, "1 GiB", { "1g", "1gib", "1073741824", NULL } },
};

#define GRANULARITY_N (sizeof(granularity_table) / sizeof(granularity_table[0]))

int
granularity_parse(const char *s, unsigned *shift)
{
	for (size_t i = 0; i < GRANULARITY_N; i++)
		for (size_t k = 0; granularity_table[i].spellings[k]; k++)
			if (strcasecmp(s, granularity_table[i].spellings[k]) ==
			    0) {
				*shift = granularity_table[i].shift;
				return 0;
			}
	return -EINVAL;
}

const char *
granularity_name(unsigned shift)
{
	for (size_t i = 0; i < GRANULARITY_N; i++)
		if (granularity_table[i].shift == shift)
			return granularity_table[i].name;
	return "?";
}

unsigned
granularity_next(unsigned shift)
{
	for (size_t i = 0; i < GRANULARITY_N; i++)
		if (granularity_table[i].shift == shift)
			return granularity_table[(i + 1) % GRANULARITY_N].shift;
	return GRANULARITY_4K;
}

int
granularity_valid(unsigned shift)
{
	return strcmp(granularity_name(shift), "?") != 0;
}

struct granularity_fold {
	struct pagetab *dst;
	const struct pagetab *src;
	unsigned old_shift;
};

static int
granularity_fold_one(struct page_entry *e, void *ctx)
{
	struct granularity_fold *g = ctx;
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
granularity_apply(struct aggr *a, unsigned shift, size_t max_pages)
{
	unsigned old = pagetab_page_shift(a->pages);
	struct granularity_fold g = { .old_shift = old };
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
		pagetab_foreach(a->pages, granularity_fold_one, &g);
	}
	pagetab_free(a->pages);
	a->pages = t;
	sides_set_page_shift(a->sides, shift, max_pages);
	return 0;
}
