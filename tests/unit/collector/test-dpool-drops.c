#include "config.h"

/*
 * The parallel drain (collector/live/dpool.h) without memory: records
 * other than samples that a drain thread cannot copy for the collector
 * (tests/lib/failalloc.h refuses every malloc) are counted by kind, as
 * the collector would have counted them, none silently: records larger
 * than a block (test_drops) and records past the full blocks during a
 * draining merge (test_overflow_drops).
 */

#include <stdio.h>
#include <string.h>

#include "aggr.h"
#include "dpool.h"
#include "dpool-test.h"
#include "failalloc.h"
#include "ingest-build.h"
#include "ingest.h"
#include "record.h"
#include "ring-build.h"
#include "testlib.h"
#include "topo.h"

/* What test_drops' other() saw: the records, and the LOST records'
 * samples. */
struct seen_drops {
	uint64_t n, lost;
};

static void
drops_other(const struct perf_event_header *hdr, void *tag, void *ctx)
{
	struct seen_drops *s = ctx;
	uint64_t n;

	(void)tag;
	s->n++;
	if (hdr->type == PERF_RECORD_LOST && record_parse_lost(hdr, &n) == 0)
		s->lost += n;
}

/* A record of type with body[0..2) at its start, size bytes in all. */
static void
drops_write(struct tring *t, uint32_t type, uint16_t size, uint64_t b0,
	    uint64_t b1)
{
	static unsigned char rec[8192];
	struct perf_event_header h = { .type = type, .size = size };

	memset(rec, 0, size);
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + sizeof(h), &b0, 8);
	memcpy(rec + sizeof(h) + 8, &b1, 8);
	tring_append(t, rec, size);
}

#define DROP_BIG	4400	/* past a block's record (dpool.c) */

/*
 * Records other than samples that the drain thread has no memory to copy
 * (each larger than a block holds, every malloc refused): none reaches
 * other(), each is counted as the collector would have counted it.  A
 * LOST record's 7 samples come back in its item's lost (the collector
 * reconciles them with the event's own count), LOST_SAMPLES' 5 go to
 * lost, a THROTTLE to throttled, an MMAP2 and a COMM (records the kernel's
 * lost count holds too) one lost each, an UNTHROTTLE nothing; all six
 * count in dpool_dropped.  A small LOST record behind them needs no
 * memory and reaches other() with its samples, counted there only.
 */
static void
test_drops(const struct topo *topo)
{
	struct tring t;
	struct ring r;
	struct channel_events ch;
	struct source src;
	struct dpool_item item;
	struct aggr par;
	struct dpool *pool = NULL;
	struct seen_drops seen = { 0 };
	unsigned long refused = failalloc_refused;

	rec_setup(&src, &ch, 0);
	if (!check(tring_new(&t, 16, true) == 0))
		return;
	tring_start(&t, 0);
	if (!check(ring_init(&r, t.base, t.mmap_len, t.page) == 0) ||
	    !check(aggr_init(&par, topo, NULL, 12, 0) == 0)) {
		tring_free(&t);
		return;
	}
	if (!check(dpool_new(&pool, 2, &par) == 0))
		goto out;
	drops_write(&t, PERF_RECORD_LOST, DROP_BIG, 3, 7);
	drops_write(&t, PERF_RECORD_LOST_SAMPLES, DROP_BIG, 5, 0);
	drops_write(&t, PERF_RECORD_THROTTLE, DROP_BIG, 1, 3);
	drops_write(&t, PERF_RECORD_UNTHROTTLE, DROP_BIG, 2, 3);
	drops_write(&t, PERF_RECORD_MMAP2, DROP_BIG, PID, PID);
	drops_write(&t, PERF_RECORD_COMM, DROP_BIG, PID, PID);
	drops_write(&t, PERF_RECORD_LOST, 24, 3, 2);
	tring_publish(&t);
	item = (struct dpool_item){ .ring = &r, .ev = &ch, .group = 1 };
	failalloc_on = true;
	dpool_drain(pool, &item, 1, 5, drops_other, &seen);
	failalloc_on = false;
	check(failalloc_refused >= refused + 6);
	check_eq_u64(ring_pending(&r), 0);
	check_eq_u64(seen.n, 1);
	check_eq_u64(seen.lost, 2);
	check_eq_u64(item.lost, 7);
	check_eq_u64(item.bad, 0);
	check_eq_u64(dpool_dropped(pool), 6);
	check_eq_i64(dpool_merge(pool, &par), 0);
	aggr_flush(&par);
	check_eq_u64(par.interval.lost, 5 + 2);
	check_eq_u64(par.interval.throttled, 1);
	check_eq_u64(par.interval.samples, 0);
	/* With memory, the same records all reach other(). */
	seen = (struct seen_drops){ 0 };
	drops_write(&t, PERF_RECORD_LOST, DROP_BIG, 3, 7);
	drops_write(&t, PERF_RECORD_MMAP2, DROP_BIG, PID, PID);
	tring_publish(&t);
	dpool_drain(pool, &item, 1, 5, drops_other, &seen);
	check_eq_u64(seen.n, 2);
	check_eq_u64(seen.lost, 7);
	check_eq_u64(item.lost, 0);
	check_eq_u64(dpool_dropped(pool), 6);
out:
	dpool_free(pool);
	aggr_fini(&par);
	ring_fini(&r);
	tring_free(&t);
}

#define OVF_FILL	60000	/* pages of shard 0: a merge of some ms */
#define OVF_LOST	400	/* LOST records in ring 1 during it */

/*
 * The overflow list without memory: while the collector merges shard 0
 * (many pages, some milliseconds) thread 1 drains ring 1's OVF_LOST
 * LOST records of 3 samples each; 16 fit the blocks, the rest find no
 * memory for the list.  Every record either reaches other() or is
 * dropped with its samples in the item's lost: the samples add up to the
 * ring's, the records to the ring's.  (The merge itself may find no
 * memory either: its pages are not checked here.)  A run where thread 1
 * was not scheduled during the merge drops nothing: tried again, up to
 * five times.
 */
static void
test_overflow_drops(const struct topo *topo)
{
	struct tring t[2];
	struct ring r[2];
	struct channel_events ch;
	struct source src;
	struct dpool_item items[2];
	struct aggr par;
	struct dpool *pool = NULL;
	uint64_t page = 0, written = 0, lost = 0;
	struct seen_drops seen = { 0 };
	int k = 0;

	rec_setup(&src, &ch, 0);
	for (; k < 2; k++) {
		if (!check(tring_new(&t[k], 4, true) == 0))
			goto rings;
		tring_start(&t[k], 0);
		if (!check(ring_init(&r[k], t[k].base, t[k].mmap_len,
				     t[k].page) == 0)) {
			tring_free(&t[k]);
			goto rings;
		}
		items[k] = (struct dpool_item){ .ring = &r[k], .ev = &ch,
						.group = (unsigned)k };
	}
	if (!check(aggr_init(&par, topo, NULL, 12, 0) == 0))
		goto rings;
	if (!check(dpool_new(&pool, 2, &par) == 0))
		goto out;
	for (int attempt = 0; attempt < 5 && !dpool_dropped(pool);
	     attempt++) {
		dpool_test_fill(pool, items, 2, &t[0], &page, OVF_FILL,
				drops_other, &seen);
		for (int i = 0; i < OVF_LOST; i++)
			drops_write(&t[1], PERF_RECORD_LOST, 24, 1, 3);
		tring_publish(&t[1]);
		written += OVF_LOST;
		failalloc_on = true;
		(void)dpool_merge_draining(pool, 0, &par, items, 2, 5,
					   drops_other, &seen);
		failalloc_on = false;
		lost += items[1].lost;
		check_eq_u64(ring_pending(&r[1]), 0);
		check_eq_u64(seen.n + dpool_dropped(pool), written);
		check_eq_u64(seen.lost + lost, 3 * written);
		(void)dpool_merge(pool, &par);
	}
	fprintf(stderr, "# overflow without memory: %llu of %llu LOST "
		"records dropped, counted\n",
		(unsigned long long)dpool_dropped(pool),
		(unsigned long long)written);
	check(dpool_dropped(pool) > 0);
out:
	dpool_free(pool);
	aggr_fini(&par);
rings:
	while (k-- > 0) {
		ring_fini(&r[k]);
		tring_free(&t[k]);
	}
}

int
main(void)
{
	int cpu_node[2] = { 0, 0 };
	struct topo *topo = topo_new_fake(2, cpu_node);

	if (!check(topo != NULL))
		return test_result();
	test_drops(topo);
	test_overflow_drops(topo);
	topo_free(topo);
	return test_result();
}
