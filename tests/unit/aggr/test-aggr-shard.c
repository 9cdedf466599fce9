#include "config.h"

/*
 * A drain thread's shard (aggr_shard_init, aggr_merge; collector/live/
 * dpool.c): it tracks no more pages than the collector may (--max-pages:
 * the rest count untracked, not "unplaced" at the merge; full, it forgets
 * them at the merge, so that after a reset new pages are tracked), and it
 * forgets its pages once most of them saw no sample in an interval, so a
 * merge walks what the shard saw lately, not every page it ever saw; the
 * collector's pages and totals are the same either way (the test's own
 * counts are the oracle).
 */

#include <stdio.h>
#include <stdlib.h>

#include "aggr.h"
#include "pagetab.h"
#include "sides.h"
#include "testlib.h"
#include "topo.h"

#define PID 4242

static void
add(struct aggr *a, uint64_t page)
{
	struct sample s = { .addr = page << 12 | 0x40, .pid = PID,
			    .tid = PID, .cpu = 0, .kind = SAMPLE_LOAD,
			    .ip = 0x401000, .period = 1 };

	aggr_add(a, &s);
}

static uint64_t
total_of(struct aggr *a, uint64_t page)
{
	struct page_entry *e = pagetab_find(a->pages, PID, page);
	struct page_counts c = { 0 };

	if (e)
		pagetab_read(a->pages, e, &c);
	return e ? c.total : 0;
}

/* --max-pages 100: the shard keeps 100 pages as the collector would,
 * the other 400 samples count untracked, none unplaced. */
static void
test_max_pages(const struct topo *t)
{
	struct aggr col, sh;

	if (!check(aggr_init(&col, t, NULL, 12, 100) == 0))
		return;
	if (!check(aggr_shard_init(&sh, &col, NULL) == 0)) {
		aggr_fini(&col);
		return;
	}
	for (uint64_t p = 0; p < 500; p++)
		add(&sh, 0x10000 + p);
	aggr_flush(&sh);
	check_eq_u64(pagetab_count(sh.pages), 100);
	check_eq_u64(sh.interval.untracked, 400);
	check_eq_i64(aggr_merge(&col, &sh), 0);
	check_eq_u64(pagetab_count(col.pages), 100);
	check_eq_u64(col.merge_unplaced, 0);
	check_eq_u64(col.interval.untracked, 400);
	check_eq_u64(col.interval.samples, 100);
	/* Full, it forgot its pages: after the collector's reset (r) new
	 * pages are tracked again. */
	check_eq_u64(pagetab_count(sh.pages), 0);
	aggr_reset(&col);
	for (uint64_t p = 0; p < 50; p++)
		add(&sh, 0x20000 + p);
	check_eq_i64(aggr_merge(&col, &sh), 0);
	check_eq_u64(pagetab_count(col.pages), 50);
	check_eq_u64(col.interval.samples, 50);
	check_eq_u64(col.interval.untracked, 0);
	aggr_fini(&sh);
	aggr_fini(&col);
}

#define WIDE 70000	/* past AGGR_SHARD_KEEP (aggr_merge.c) */
#define HOT 10

/* An interval over WIDE pages, then two over HOT of them: the shard
 * forgets its pages after the first of those, the collector keeps every
 * page with its total. */
static void
test_idle_reset(const struct topo *t)
{
	struct aggr col, sh;
	size_t first_slots;

	if (!check(aggr_init(&col, t, NULL, 12, 0) == 0))
		return;
	if (!check(aggr_shard_init(&sh, &col, NULL) == 0)) {
		aggr_fini(&col);
		return;
	}
	first_slots = sitetab_slots(sh.sides->sites);
	for (int interval = 0; interval < 3; interval++) {
		size_t n = interval == 0 ? WIDE : HOT;

		for (uint64_t p = 0; p < n; p++)
			add(&sh, 0x10000 + p);
		check_eq_i64(aggr_merge(&col, &sh), 0);
		check_eq_u64(col.interval.samples, n);
		/* Kept while its pages are busy; forgotten once they idle. */
		check_eq_u64(pagetab_count(sh.pages),
			     interval == 0 ? WIDE : interval == 1 ? 0 : HOT);
		check_eq_u64(sh.shard_resets, interval == 0 ? 0 : 1);
		/* Its code-site table grew for the wide interval, and is
		 * back to its first size with the pages (not cleared whole
		 * at every merge). */
		if (interval == 0)
			check(sitetab_slots(sh.sides->sites) > first_slots);
		else
			check_eq_u64(sitetab_slots(sh.sides->sites),
				     first_slots);
		check_eq_u64(pagetab_count(col.pages), WIDE);
		check_eq_u64(total_of(&col, 0x10000), (uint64_t)interval + 1);
		check_eq_u64(total_of(&col, 0x10000 + HOT), 1);
		aggr_next_interval(&col);
	}
	check_eq_u64(col.cumulative.samples, WIDE + 2 * HOT);
	aggr_fini(&sh);
	aggr_fini(&col);
}

int
main(void)
{
	static const int cpu_node[2] = { 0, 0 };
	struct topo *t = topo_new_fake(2, cpu_node);

	if (!check(t != NULL))
		return test_result();
	test_max_pages(t);
	test_idle_reset(t);
	topo_free(t);
	return test_result();
}
