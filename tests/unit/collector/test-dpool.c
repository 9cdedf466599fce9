#include "config.h"

/*
 * The parallel drain (collector/live/dpool.h) against one collector
 * draining alone: the same records in six rings (hand-built, each layout
 * of tests/lib/ingest-build.h, LOST records among them), drained by
 * ingest_drain ring after ring into one aggregation and by 1, 2 or 3
 * drain threads into shards merged into another (aggr_merge; or, the
 * last round, drained by the other threads while each shard is merged:
 * dpool_merge_draining, every ring empty after each), give the
 * same frame, two intervals in a row: counts and cumulative counts, every
 * page with its total, code sites, line heat and levels, CPU, node,
 * matrix, thread and process rows, the code view, lost; both frames pass
 * frame_check, and the samples are those the test wrote (its own count).
 * And records that find every block full during a draining merge wait on
 * the overflow list and reach other() all, in order (test_overflow).
 * (What the threads have no memory to copy: test-dpool-drops.c.)
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "dpool.h"
#include "dpool-test.h"
#include "frame.h"
#include "framebuild.h"
#include "ingest-build.h"
#include "ingest.h"
#include "record.h"
#include "ring-build.h"
#include "testlib.h"
#include "topo.h"

#define N_RINGS		6
#define N_RECORDS	1500	/* a ring */

struct trings {
	struct tring t[N_RINGS];
	struct ring r[N_RINGS];
};

static bool
trings_new(struct trings *tr)
{
	for (int k = 0; k < N_RINGS; k++) {
		if (tring_new(&tr->t[k], 4, true) != 0)
			return false;
		tring_start(&tr->t[k], 0);
		if (ring_init(&tr->r[k], tr->t[k].base, tr->t[k].mmap_len,
			      tr->t[k].page) != 0)
			return false;
	}
	return true;
}

static void
trings_free(struct trings *tr)
{
	for (int k = 0; k < N_RINGS; k++) {
		ring_fini(&tr->r[k]);
		tring_free(&tr->t[k]);
	}
}

/* Record i of ring k: a LOST record every 41st, else a SAMPLE of the
 * layout from one of 3 pids and 20 threads each, some without an address or
 * pid (unattributed); pebs ids off the events' are counted lost. */
static const struct perf_event_header *
make_record(struct rec *r, int layout, uint64_t *rng)
{
	const struct perf_event_header *h;
	uint64_t v, addr;
	uint32_t pid, tid;

	*rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
	v = *rng ^ (*rng >> 29);
	if (v % 41 == 0) {
		struct perf_event_header lh = { .type = PERF_RECORD_LOST,
						.size = 24 };

		rec_start(r);
		rec_u64(r, 7);
		rec_u64(r, 2);
		memcpy(r->b, &lh, sizeof(lh));
		return (const void *)r->b;
	}
	/* 768 pages in all: each has a line-heat slot (LINETAB_SLOTS), so
	 * which pages have line heat does not depend on the order. */
	addr = (v & 15) == 0 ? 0 : 0x10000000ull + ((v >> 8) & 0xff) * 4096 +
				   ((v >> 20) & 0xfc0);
	pid = (v & 0x300) == 0 ? (uint32_t)-1 : PID + (uint32_t)(v >> 60) % 3;
	/* A tid belongs to one pid, as in the kernel. */
	tid = 5000 + (uint32_t)(v >> 60) % 3 * 20 + (uint32_t)((v >> 32) % 20);
	if (layout == 0)
		h = rec_tp(r, pid, addr, (v >> 40) & 0x16, 36);
	else if (layout == 1)
		h = rec_sw(r, pid, addr);
	else
		h = rec_pebs(r, 11 + (v >> 50) % 4, addr, (v >> 20) & 0xff);
	memcpy(r->b + 28, &tid, sizeof(tid));
	return h;
}

/* What a drain hands other(): LOST records counted as the collector
 * does (collector/live/collector.c). */
static void
count_other(const struct perf_event_header *hdr, void *tag, void *ctx)
{
	uint64_t n;

	(void)tag;
	if (hdr->type == PERF_RECORD_LOST && record_parse_lost(hdr, &n) == 0)
		aggr_count_lost(ctx, n);
}

static int
serial_other(const struct perf_event_header *hdr, void *ctx)
{
	count_other(hdr, NULL, ctx);
	return 0;
}

/*
 * The last round's records drained while each shard is merged
 * (dpool_merge_draining): the rings of every group, the merged shard's
 * too, are empty after each merge.
 */
static void
merge_draining(struct dpool *pool, struct aggr *a, struct trings *tr,
	       struct dpool_item *items)
{
	for (unsigned i = 0; i < dpool_threads(pool); i++) {
		check_eq_i64(dpool_merge_draining(pool, i, a, items, N_RINGS,
						  5, count_other, a), 0);
		for (int k = 0; k < N_RINGS; k++) {
			check_eq_u64(ring_pending(&tr->r[k]), 0);
			check_eq_u64(items[k].st.bad_size, 0);
		}
	}
}

/*
 * Writes every ring's records, in rounds of what fits, and drains them:
 * with the pool's threads, or (pool NULL) ring after ring.  With
 * draining, the last round is drained during the shards' merge.
 * Returns the samples the decoder accepts (the test's oracle, from
 * ingest_decode).
 */
static uint64_t
run(struct trings *tr, struct aggr *a, struct dpool *pool, int layout,
    const struct source *src, const struct channel_events *ch,
    bool draining)
{
	struct dpool_item items[N_RINGS];
	struct ingest in, oracle;
	uint64_t rng[N_RINGS], want = 0;
	int written[N_RINGS] = { 0 }, left = N_RINGS, rounds = 0;
	struct rec r;

	(void)src;
	ingest_init(&in, a);
	ingest_init(&oracle, NULL);
	for (int k = 0; k < N_RINGS; k++) {
		rng[k] = 0x5eed + (uint64_t)k * 977 + (uint64_t)layout;
		items[k] = (struct dpool_item){ .ring = &tr->r[k], .ev = ch,
						.group = (unsigned)k };
	}
	/* A ring left undrained would never empty: a bounded number of
	 * rounds (a few dozen suffice). */
	while (left && check(++rounds < 1000)) {
		for (int k = 0; k < N_RINGS; k++) {
			for (; written[k] < N_RECORDS; written[k]++) {
				uint64_t save = rng[k];
				const struct perf_event_header *h =
					make_record(&r, layout, &rng[k]);
				struct sample s;

				if (!tring_room(&tr->t[k], h->size)) {
					rng[k] = save;
					break;
				}
				tring_append(&tr->t[k], h, h->size);
				if (h->type == PERF_RECORD_SAMPLE &&
				    ingest_decode(&oracle, ch, h, 5, &s) > 0)
					want++;
			}
			if (written[k] == N_RECORDS)
				left--, written[k]++;
			tring_publish(&tr->t[k]);
		}
		if (pool && draining && !left) {
			merge_draining(pool, a, tr, items);
		} else if (pool) {
			dpool_drain(pool, items, N_RINGS, 5, count_other,
				    a);
			/* Accounted at the end of each pass (nodes asked
			 * before the frame's merge). */
			check_eq_u64(dpool_queued(pool), 0);
			for (int k = 0; k < N_RINGS; k++)
				check_eq_u64(items[k].st.bad_size, 0);
		} else {
			for (int k = 0; k < N_RINGS; k++)
				ingest_drain(&in, ch, &tr->r[k], 5,
					     serial_other, a, NULL);
		}
	}
	if (pool)
		check_eq_i64(dpool_merge(pool, a), 0);
	aggr_flush(a);
	for (int k = 0; k < N_RINGS; k++)
		check_eq_u64(ring_pending(&tr->r[k]), 0);
	return want;
}

static int
cmp_page(const void *x, const void *y)
{
	const struct frame_page *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int
cmp_site(const void *x, const void *y)
{
	const struct frame_site *a = x, *b = y;

	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

/* A page's side-table figures: code sites (in any order among equals),
 * line heat, levels. */
static void
same_sides(struct frame_page *p, struct frame_page *q)
{
	check_eq_u64(p->n_sites, q->n_sites);
	check_eq_u64(p->sites_other, q->sites_other);
	qsort(p->sites, p->n_sites, sizeof(p->sites[0]), cmp_site);
	qsort(q->sites, q->n_sites, sizeof(q->sites[0]), cmp_site);
	for (size_t k = 0; k < p->n_sites && k < q->n_sites; k++)
		check(p->sites[k].ip == q->sites[k].ip &&
		      p->sites[k].samples == q->sites[k].samples);
	check(!p->lines == !q->lines);
	if (p->lines && q->lines)
		check(memcmp(p->lines, q->lines, 64 * sizeof(*p->lines)) == 0);
	check(!p->levels == !q->levels);
	if (p->levels && q->levels)
		check(memcmp(p->levels, q->levels,
			     FRAME_LEVELS * sizeof(*p->levels)) == 0);
}

static int
cmp_thread(const void *x, const void *y)
{
	const struct frame_thread *a = x, *b = y;

	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static int
cmp_proc(const void *x, const void *y)
{
	const struct frame_process *a = x, *b = y;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* Two frames of the same samples, whatever order they came in. */
static void
same_frame(struct frame *a, struct frame *b)
{
	char why[256];

	check_eq_i64(frame_check(a, why, sizeof(why)), 0);
	check_eq_i64(frame_check(b, why, sizeof(why)), 0);
	check(memcmp(&a->totals, &b->totals, sizeof(a->totals)) == 0);
	check(memcmp(&a->cumulative, &b->cumulative,
		     sizeof(a->cumulative)) == 0);
	check_eq_u64(a->tracked_pages, b->tracked_pages);
	check_eq_u64(a->n_pages, b->n_pages);
	qsort(a->pages, a->n_pages, sizeof(a->pages[0]), cmp_page);
	qsort(b->pages, b->n_pages, sizeof(b->pages[0]), cmp_page);
	for (size_t i = 0; i < a->n_pages && i < b->n_pages; i++) {
		const struct frame_page *p = &a->pages[i], *q = &b->pages[i];

		check(p->pid == q->pid && p->addr == q->addr &&
		      p->samples == q->samples && p->loads == q->loads &&
		      p->stores == q->stores && p->other == q->other &&
		      p->total == q->total && p->node == q->node &&
		      p->local == q->local && p->remote == q->remote);
		same_sides(&a->pages[i], &b->pages[i]);
	}
	check(memcmp(a->levels, b->levels, sizeof(a->levels)) == 0);
	check_eq_u64(a->code_unknown, b->code_unknown);
	check_eq_u64(a->code_untracked, b->code_untracked);
	check_eq_u64(a->n_code_sites, b->n_code_sites);
	for (size_t i = 0; i < a->n_code_sites && i < b->n_code_sites; i++)
		check(a->code_sites[i].samples == b->code_sites[i].samples &&
		      a->code_sites[i].total == b->code_sites[i].total);
	check_eq_u64(a->n_cpus, b->n_cpus);
	for (size_t i = 0; i < a->n_cpus && i < b->n_cpus; i++)
		check_eq_u64(a->cpus[i].samples, b->cpus[i].samples);
	check_eq_u64(a->cpu_unknown, b->cpu_unknown);
	check_eq_u64(a->mem_unknown, b->mem_unknown);
	check_eq_u64(a->n_nodes, b->n_nodes);
	for (size_t i = 0; i < a->n_nodes && i < b->n_nodes; i++) {
		check_eq_u64(a->nodes[i].mem_samples, b->nodes[i].mem_samples);
		check_eq_u64(a->matrix_unknown[i], b->matrix_unknown[i]);
		for (size_t j = 0; j < a->n_nodes && j < b->n_nodes; j++)
			check_eq_u64(a->matrix[i * a->n_nodes + j],
				     b->matrix[i * b->n_nodes + j]);
	}
	check_eq_u64(a->n_threads, b->n_threads);
	qsort(a->threads, a->n_threads, sizeof(a->threads[0]), cmp_thread);
	qsort(b->threads, b->n_threads, sizeof(b->threads[0]), cmp_thread);
	for (size_t i = 0; i < a->n_threads && i < b->n_threads; i++)
		check(memcmp(&a->threads[i], &b->threads[i],
			     sizeof(a->threads[i])) == 0);
	check_eq_u64(a->n_processes, b->n_processes);
	qsort(a->processes, a->n_processes, sizeof(a->processes[0]),
	      cmp_proc);
	qsort(b->processes, b->n_processes, sizeof(b->processes[0]),
	      cmp_proc);
	for (size_t i = 0; i < a->n_processes && i < b->n_processes; i++)
		check(a->processes[i].pid == b->processes[i].pid &&
		      a->processes[i].samples == b->processes[i].samples &&
		      a->processes[i].loads == b->processes[i].loads &&
		      a->processes[i].stores == b->processes[i].stores);
}

/* Whether some page has code sites and line heat (so that comparing
 * them compares something). */
static bool
with_sides(const struct frame *f)
{
	bool sites = false, lines = false;

	for (size_t i = 0; i < f->n_pages; i++) {
		sites |= f->pages[i].n_sites > 0;
		lines |= f->pages[i].lines != NULL;
	}
	return sites && lines;
}

static struct frame *
build(struct aggr *a)
{
	struct frame_meta m = { .seq = 1, .interval = 1, .source = "faults",
				.has_kinds = true,
				.period = 5, .sort = SORT_SAMPLES,
				.top_k = 100000 };

	return frame_build(a, &m);
}

/* Two intervals of the same records: alone, then with t threads (the
 * last round drained during the merge with draining). */
static void
test_threads(const struct topo *topo, int layout, unsigned t, bool draining)
{
	struct source src;
	struct channel_events ch;
	struct trings tr;
	struct aggr one, par;
	struct dpool *pool = NULL;

	rec_setup(&src, &ch, layout);
	if (!check(trings_new(&tr)) ||
	    !check(aggr_init(&one, topo, NULL, 12, 0) == 0))
		return;
	if (!check(aggr_init(&par, topo, NULL, 12, 0) == 0) ||
	    !check(dpool_new(&pool, t, &par) == 0))
		goto out;
	for (int interval = 0; interval < 2; interval++) {
		uint64_t want = run(&tr, &one, NULL, layout, &src, &ch,
				    false);
		struct frame *f1 = build(&one), *f2;

		check_eq_u64(run(&tr, &par, pool, layout, &src, &ch,
				 draining), want);
		f2 = build(&par);
		if (check(f1 && f2)) {
			check_eq_u64(f1->totals.samples + f1->totals.untracked,
				     want);
			check(want > 1000 && f1->totals.lost > 0 &&
			      f1->totals.unattributed > 0);
			check(interval == 0 || f1->cumulative.samples >
						       f1->totals.samples);
			check(with_sides(f1));
			same_frame(f1, f2);
		}
		frame_free(f1);
		frame_free(f2);
		aggr_next_interval(&one);
		aggr_next_interval(&par);
	}
out:
	dpool_free(pool);
	aggr_fini(&par);
	aggr_fini(&one);
	trings_free(&tr);
}

/* What test_overflow's other() saw: LOST records (id = ring, lost = its
 * sequence number from 1), in order per ring. */
struct seen_lost {
	uint64_t next[2];
	uint64_t n, bad;
};

static void
seq_other(const struct perf_event_header *hdr, void *tag, void *ctx)
{
	struct seen_lost *s = ctx;
	const uint64_t *body = (const void *)(hdr + 1);
	uint64_t k = (uint64_t)(uintptr_t)tag;

	if (hdr->type != PERF_RECORD_LOST || k > 1 || body[0] != k ||
	    body[1] != s->next[k] + 1) {
		s->bad++;
		return;
	}
	s->next[k]++;
	s->n++;
}

#define OVF_FILL	60000	/* pages of shard 0: a merge of some ms */
#define OVF_LOST	400	/* LOST records in ring 1 during it */

/*
 * Records past the full blocks (dpool.c's overflow list): while the
 * collector merges shard 0 (many pages, so some milliseconds) thread 1
 * drains ring 1's OVF_LOST records; 16 fit the blocks, the rest wait on
 * the list.  other() must get every one, in the ring's order, none
 * counted lost.  A run where thread 1 was not scheduled during the merge
 * queues nothing past the blocks: tried again, up to five times.
 */
static void
test_overflow(const struct topo *topo)
{
	struct source src;
	struct channel_events ch;
	struct trings tr;		/* the first two rings */
	struct tring *t = tr.t;
	struct dpool_item items[2];
	struct aggr par;
	struct dpool *pool = NULL;
	struct seen_lost seen = { { 0 } };
	struct rec rc;
	uint64_t page = 0;

	rec_setup(&src, &ch, 0);
	if (!check(trings_new(&tr)))
		return;
	for (int k = 0; k < 2; k++)
		items[k] = (struct dpool_item){ .ring = &tr.r[k], .ev = &ch,
						.group = (unsigned)k,
						.tag = (void *)(uintptr_t)k };
	if (!check(aggr_init(&par, topo, NULL, 12, 0) == 0)) {
		trings_free(&tr);
		return;
	}
	if (!check(dpool_new(&pool, 2, &par) == 0))
		goto out;
	for (int attempt = 0; attempt < 5 && !dpool_overflowed(pool);
	     attempt++) {
		dpool_test_fill(pool, items, 2, &t[0], &page, OVF_FILL,
				seq_other, &seen);
		for (int i = 0; i < OVF_LOST; i++) {
			rec_start(&rc);
			rec_u64(&rc, 1);
			rec_u64(&rc, seen.next[1] + (uint64_t)i + 1);
			memcpy(rc.b, &(struct perf_event_header){
				       .type = PERF_RECORD_LOST, .size = 24 },
			       sizeof(struct perf_event_header));
			tring_append(&t[1], rc.b, 24);
		}
		tring_publish(&t[1]);
		check_eq_i64(dpool_merge_draining(pool, 0, &par, items, 2, 5,
						  seq_other, &seen), 0);
		check_eq_i64(dpool_merge(pool, &par), 0);
		check_eq_u64(ring_pending(&tr.r[1]), 0);
		check_eq_u64(seen.bad, 0);
		check_eq_u64(seen.next[1], (uint64_t)(attempt + 1) * OVF_LOST);
	}
	aggr_flush(&par);
	check_eq_u64(seen.n, seen.next[1]);
	check_eq_u64(par.interval.lost, 0);
	fprintf(stderr, "# overflow: %llu of %llu LOST records waited past "
		"the blocks\n", (unsigned long long)dpool_overflowed(pool),
		(unsigned long long)seen.next[1]);
	check(dpool_overflowed(pool) > 0);
out:
	dpool_free(pool);
	aggr_fini(&par);
	trings_free(&tr);
}

int
main(void)
{
	int cpu_node[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };
	struct topo *topo = topo_new_fake(8, cpu_node);
	if (!check(topo != NULL))
		return test_result();
	/* 1, 2 and 3 threads (groups of six, three and two rings) with the
	 * tracepoint's layout; 2 with the others (short enough for
	 * ThreadSanitizer on a busy machine). */
	for (unsigned t = 1; t <= 3; t++)
		test_threads(topo, 0, t, false);
	for (int layout = 1; layout < 4; layout++)
		test_threads(topo, layout, 2, false);
	/* The frame's merge with the rings drained meanwhile. */
	test_threads(topo, 0, 2, true);
	test_threads(topo, 2, 3, true);
	test_overflow(topo);
	topo_free(topo);
	return test_result();
}
