/*
 * Pages named when their mapping is replaced (names_on_cover): a record
 * whose mapping covers an earlier one under another name means that one
 * was unmapped, and the pages this aggregation already counted there are
 * pinned to its names before the new mapping takes its place.  Collector
 * or replay thread, as the records.
 *
 * Only the aggregation's own pages: a drain thread's shard (dpool.c)
 * holds pages of this interval that the collector does not see until
 * the frame's merge, and those are named from the regions at the frame.
 * In per-CPU rings a sample in the old mapping may also be drained after
 * the record that replaced it: that page too is named at the frame.
 */
#include "config.h"

#include "aggr.h"
#include "names.h"
#include "pagetab.h"
#include "proctab.h"
#include "sides.h"

/* Page lookups a covered range may cost, and the table size up to which
 * walking it is the cheaper way (a walk is about 5 ns a page, a lookup
 * of a page not cached 150 ns): about 2.5 ms either way at most.  A range
 * past both is counted (names_pins_skipped), not pinned. */
#define AGGR_PIN_LOOKUPS	16384
#define AGGR_PIN_WALK		(512u * 1024)

struct aggr_pins {
	struct names *names;
	int32_t pid;
	uint64_t first, last;	/* pages, inclusive */
	unsigned shift;
};

static void
aggr_pin(const struct aggr_pins *ap, uint64_t page)
{
	names_pin_page(ap->names, ap->pid, page << ap->shift,
		       1ull << ap->shift);
}

static int
aggr_pin_entry(struct page_entry *e, void *ctx)
{
	const struct aggr_pins *ap = ctx;
	uint64_t page = pagetab_entry_page(e);

	if (pagetab_entry_pid(e) == ap->pid && page >= ap->first &&
	    page <= ap->last)
		aggr_pin(ap, page);
	return 0;
}

void
aggr_names_cover(void *ctx, int32_t pid, uint64_t lo, uint64_t hi)
{
	struct aggr *a = ctx;
	struct aggr_pins ap = {
		.names = sides_names(a->sides), .pid = pid,
		.shift = pagetab_page_shift(a->pages),
	};
	uint64_t range;
	size_t count = pagetab_count(a->pages);

	if (!ap.names || hi <= lo)
		return;
	ap.first = lo >> ap.shift;
	ap.last = (hi - 1) >> ap.shift;
	range = ap.last - ap.first + 1;
	/* Samples not added to the table yet (aggr_flush) were counted
	 * before the record too. */
	for (size_t i = 0; i < a->n_batch; i++)
		if (a->batch[i].pid == pid && a->batch[i].addr >= lo &&
		    a->batch[i].addr < hi)
			aggr_pin(&ap, a->batch[i].addr >> ap.shift);
	/* A process without a row has no page in the table (a row goes
	 * once the process is gone, or idle when rows are crowded), unless
	 * the rows are full: most records of a whole machine are of
	 * processes never sampled. */
	if (!proctab_find(a->procs, pid) && !a->procs_pruned_live &&
	    proctab_count(a->procs) < proctab_max(a->procs))
		return;
	/* Each page of the range, or each page of the table: the fewer,
	 * and never more than a few milliseconds of the collector. */
	if (range <= AGGR_PIN_LOOKUPS && range <= count) {
		for (uint64_t p = ap.first; p <= ap.last; p++)
			if (pagetab_find(a->pages, pid, p))
				aggr_pin(&ap, p);
	} else if (count <= AGGR_PIN_WALK) {
		pagetab_foreach(a->pages, aggr_pin_entry, &ap);
	} else {
		names_pins_skipped(ap.names);
	}
}
