#include "config.h"

/*
 * ingest_drain() against ingest_sample() record by record, on hand-built
 * records of each layout (tests/lib/ingest-build.h) through a ring that
 * wraps (tests/lib/ring-build.h), and a callback that stops the drain.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggr.h"
#include "ingest-build.h"
#include "ingest.h"
#include "lathist.h"
#include "pagetab.h"
#include "ring-build.h"
#include "testlib.h"
#include "threadtab.h"
#include "topo.h"

/*
 * A ring of 2 data pages laid out as the kernel's (meta page with
 * data_size 0, as before Linux 4.1), whose producer starts 40 bytes
 * before the end so that the stream wraps and one record is split across
 * the end.
 */
struct dring {
	struct tring t;
	struct ring r;
};

#define DRING_START(d)	(2 * (d)->t.page - 40)

static bool
dring_new(struct dring *d)
{
	if (tring_new(&d->t, 2, false) != 0)
		return false;
	tring_start(&d->t, DRING_START(d));
	return ring_init(&d->r, d->t.base, d->t.mmap_len, d->t.page) == 0;
}

static void
dring_free(struct dring *d)
{
	ring_fini(&d->r);
	tring_free(&d->t);
}

struct other_seen {
	uint64_t n;
	int stop_at;	/* non-zero for this record (1-based); 0 never */
};

static int
other_record(const struct perf_event_header *hdr, void *ctx)
{
	struct other_seen *o = ctx;

	check_eq_u64(hdr->type, PERF_RECORD_LOST);
	return ++o->n == (uint64_t)o->stop_at;
}

/* Record i of a random stream: a SAMPLE of the layout (any outcome:
 * queued, unattributed, ignored, bad) from one of 100 threads, or every
 * 37th a LOST record.  Every 53rd tracepoint record has a longer RAW,
 * off the learnt layout. */
static const struct perf_event_header *
drain_record(struct rec *r, int layout, int i, uint64_t *rng)
{
	const struct perf_event_header *h;
	uint64_t v, addr;
	uint32_t pid, tid;

	*rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
	v = *rng ^ (*rng >> 29);
	if (i % 37 == 36) {
		struct perf_event_header lh = { .type = PERF_RECORD_LOST,
						.size = 24 };

		rec_start(r);
		rec_u64(r, 7);
		rec_u64(r, 3);
		memcpy(r->b, &lh, sizeof(lh));
		return (const void *)r->b;
	}
	addr = (v & 15) == 0 ? 0 : 0x10000000ull + ((v >> 8) & 0xffff) * 4096;
	pid = (v & 0x300) == 0 ? (uint32_t)-1 : PID;
	tid = 5000 + (uint32_t)((v >> 32) % 100);
	if (layout == 0)
		h = rec_tp(r, pid, addr, (v >> 40) & 0x16,
			   i % 53 == 0 ? 44 : 36);
	else if (layout == 1)
		h = rec_sw(r, pid, addr);
	else
		h = rec_pebs(r, 11 + (v >> 50) % 4, addr, (v >> 20) & 0xff);
	if (layout == 3) {
		/* DATA_SRC (the last field): loads, stores, neither. */
		uint64_t ds = (v >> 10) & 0x6;

		memcpy(r->b + h->size - 8, &ds, sizeof(ds));
	}
	/* pid/tid follow IDENTIFIER and IP in all three. */
	memcpy(r->b + 28, &tid, sizeof(tid));
	return h;
}

struct page_match {
	struct pagetab *self, *other;
	uint64_t mismatches;
};

/* The entry's counts (weights too) match those of the other table. */
static int
page_match(struct page_entry *e, void *ctx)
{
	struct page_match *m = ctx;
	struct page_entry *o = pagetab_find(m->other, pagetab_entry_pid(e),
					    pagetab_entry_page(e));
	struct page_counts ce, co;

	if (!o) {
		m->mismatches++;
		return 0;
	}
	pagetab_read(m->self, e, &ce);
	pagetab_read(m->other, o, &co);
	if (memcmp(&ce, &co, sizeof(ce)) != 0)
		m->mismatches++;
	return 0;
}

static bool
same_aggr(struct aggr *a, struct aggr *b)
{
	struct page_match pm = { .self = a->pages, .other = b->pages };
	struct thread_entry *ta, *tb;
	size_t na, nb;
	bool ok = true;

	aggr_flush(a);
	aggr_flush(b);
	ok &= check(memcmp(&a->interval, &b->interval,
			   sizeof(a->interval)) == 0);
	for (int c = 0; c < a->n_cpus; c++)
		ok &= check_eq_u64(a->cpu_samples[c], b->cpu_samples[c]);
	ok &= check_eq_u64(a->mem_unknown, b->mem_unknown);
	ok &= check_eq_u64(a->cpu_unknown, b->cpu_unknown);
	ok &= check_eq_u64(pagetab_count(a->pages), pagetab_count(b->pages));
	/* Every page's counts, weights (and so the weight extension) too. */
	ok &= check_eq_u64(pagetab_ext(a->pages), pagetab_ext(b->pages));
	if (ok)
		pagetab_foreach(a->pages, page_match, &pm);
	ok &= check_eq_u64(pm.mismatches, 0);
	ta = threadtab_snapshot(a->threads, &na);
	tb = threadtab_snapshot(b->threads, &nb);
	ok &= check_eq_u64(na, nb);
	for (size_t i = 0; ok && i < na; i++)
		ok &= check(memcmp(&ta[i], &tb[i], sizeof(ta[i])) == 0);
	free(ta);
	free(tb);
	return ok;
}

/* Two files of the same contents (small ones). */
static bool
same_file(const char *pa, const char *pb)
{
	char ba[4096] = "", bb[4096] = "";
	FILE *fa = fopen(pa, "r"), *fb = fopen(pb, "r");
	size_t na = fa ? fread(ba, 1, sizeof(ba), fa) : 0;
	size_t nb = fb ? fread(bb, 1, sizeof(bb), fb) : 0;

	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return fa && fb && na > 0 && na == nb && memcmp(ba, bb, na) == 0;
}

/*
 * One run of test_drain: the same stream into a (ingest_sample) and b
 * (ingest_decode, then ingest_drain through the ring).
 */
struct drain_run {
	struct ingest in_a, in_b;
	struct aggr a, b;
	struct source src;
	struct channel_events ch;
	struct dring d;
	struct ring_stats st;
	struct other_seen o;
	uint64_t records, lost_records, want_tid[100];
	size_t drained;
};

/* Fills the ring, then drains it in one go, until 6000 records. */
static void
drain_stream(struct drain_run *dr, int layout)
{
	uint64_t rng = 0x5eed + (uint64_t)layout;
	struct rec r;
	int i = 0;

	while (i < 6000) {
		for (; i < 6000; i++) {
			const struct perf_event_header *h =
				drain_record(&r, layout, i, &rng);
			struct sample s;
			uint32_t tid;

			if (!tring_room(&dr->d.t, h->size))
				break;
			tring_append(&dr->d.t, h, h->size);
			dr->records++;
			if (h->type != PERF_RECORD_SAMPLE) {
				dr->lost_records++;
				continue;
			}
			ingest_sample(&dr->in_a, &dr->ch, h, 5);
			memcpy(&tid, r.b + 28, sizeof(tid));
			if (ingest_decode(&dr->in_b, &dr->ch, h, 5, &s) > 0)
				dr->want_tid[tid - 5000]++;
		}
		/* ingest_decode above learnt in_b's layouts: the drain must
		 * give the same with them as without. */
		dr->drained += ingest_drain(&dr->in_b, &dr->ch, &dr->d.r, 5,
					    other_record, &dr->o, &dr->st);
	}
}

/* The outcome of a run: counts, stats, aggregations, threads. */
static void
drain_check(struct drain_run *dr, int layout)
{
	struct thread_entry *te;
	size_t n_te;

	check_eq_u64(dr->drained, dr->records);
	check_eq_u64(dr->st.records, dr->records);
	check_eq_u64(dr->st.bad_size, 0);
	check_eq_u64(dr->st.bytes, dr->d.t.head - DRING_START(&dr->d));
	check_eq_u64(ring_pending(&dr->d.r), 0);
	check_eq_u64(dr->o.n, dr->lost_records);
	check(memcmp(&dr->in_a.stats, &dr->in_b.stats,
		     sizeof(dr->in_a.stats)) == 0);
	check(dr->in_a.stats.samples > 0 && dr->in_a.stats.unattributed > 0);
	check(layout != 2 || (dr->in_a.stats.bad > 0 &&
			      dr->in_a.stats.ignored > 0));
	same_aggr(&dr->a, &dr->b);
	check_eq_u64(dr->a.interval.samples, dr->in_a.stats.samples);
	te = threadtab_snapshot(dr->b.threads, &n_te);
	check_eq_u64(n_te, 100);
	for (size_t k = 0; te && k < n_te; k++)
		check_eq_u64(te[k].samples, dr->want_tid[te[k].tid - 5000]);
	free(te);
}

/*
 * One layout, with the latency histogram (written to lat_a and lat_b)
 * when timed.  False when it could not start.
 */
static bool
drain_one(const struct topo *topo, int layout, bool timed,
	  const char *lat_a, const char *lat_b)
{
	struct drain_run *dr = calloc(1, sizeof(*dr));

	if (!dr)
		return false;
	rec_setup(&dr->src, &dr->ch, layout);
	if (!check(aggr_init(&dr->a, topo, NULL, 12, 0) == 0)) {
		free(dr);
		return false;
	}
	if (!check(aggr_init(&dr->b, topo, NULL, 12, 0) == 0) ||
	    !check(dring_new(&dr->d))) {
		aggr_fini(&dr->a);
		free(dr);
		return false;
	}
	ingest_init(&dr->in_a, &dr->a);
	ingest_init(&dr->in_b, &dr->b);
	/* The drain reads a sample's time apart from the rest (the
	 * aggregation does not want it): both histograms must match. */
	if (timed) {
		dr->in_a.lat = lathist_new(lat_a);
		dr->in_b.lat = lathist_new(lat_b);
		check(dr->in_a.lat != NULL && dr->in_b.lat != NULL);
	}
	drain_stream(dr, layout);
	drain_check(dr, layout);
	if (timed) {
		lathist_publish(dr->in_a.lat, 1, 3000000);
		lathist_publish(dr->in_b.lat, 1, 3000000);
		lathist_free(dr->in_a.lat);
		lathist_free(dr->in_b.lat);
		check(same_file(lat_a, lat_b));
	}
	dring_free(&dr->d);
	aggr_fini(&dr->a);
	aggr_fini(&dr->b);
	free(dr);
	return true;
}

/*
 * ingest_drain against ingest_sample record by record, on the same random
 * stream through a ring that wraps: the same outcome for every record
 * (queued, unattributed, ignored, lost), the same aggregation, every LOST
 * record handed to the callback, every record counted in the return
 * value and the ring's stats.  100 threads: more than a batch's 64
 * thread slots, so tids share slots and counts are handed on mid-batch;
 * each thread's count is also checked against the decoder's verdicts.
 */
static void
test_drain(const struct topo *topo)
{
	char lat_a[] = "/tmp/memtop-test-drain-a.XXXXXX";
	char lat_b[] = "/tmp/memtop-test-drain-b.XXXXXX";
	int fd_a = mkstemp(lat_a), fd_b = mkstemp(lat_b);

	if (!check(fd_a >= 0 && fd_b >= 0))
		return;
	close(fd_a);
	close(fd_b);
	/* Each layout with and without the latency histogram: the drain
	 * is compiled for both, and without it for each role of a
	 * one-event source (layout 3: ROLE_OP). */
	for (int run = 0; run < 8; run++)
		if (!drain_one(topo, run % 4, run >= 4, lat_a, lat_b))
			break;
	unlink(lat_a);
	unlink(lat_b);
}

/* The callback's non-zero return stops the drain after that record; the
 * next drain goes on from there. */
static void
test_drain_stop(const struct topo *topo)
{
	struct other_seen o = { .stop_at = 1 };
	struct dring d = { 0 };
	struct source src;
	struct channel_events ch;
	struct ingest in;
	struct aggr a;
	struct rec r;
	uint64_t rng = 1;

	rec_setup(&src, &ch, 1);
	if (!check(aggr_init(&a, topo, NULL, 12, 0) == 0))
		return;
	if (!check(dring_new(&d))) {
		aggr_fini(&a);
		return;
	}
	ingest_init(&in, &a);
	rec_sw(&r, PID, 0x10000000);
	tring_append(&d.t, r.b, r.n);
	(void)drain_record(&r, 1, 36, &rng);	/* a LOST record */
	tring_append(&d.t, r.b, r.n);
	rec_sw(&r, PID, 0x10001000);
	tring_append(&d.t, r.b, r.n);
	check_eq_u64(ingest_drain(&in, &ch, &d.r, 1, other_record, &o, NULL),
		     2);
	check_eq_u64(in.stats.samples, 1);
	check_eq_u64(ingest_drain(&in, &ch, &d.r, 1, other_record, &o, NULL),
		     1);
	check_eq_u64(in.stats.samples, 2);
	check_eq_u64(o.n, 1);
	aggr_flush(&a);
	check_eq_u64(a.interval.samples, 2);
	dring_free(&d);
	aggr_fini(&a);
}

int
main(void)
{
	static const int cpu_node[2] = { 0, 0 };
	struct topo *topo = topo_new_fake(2, cpu_node);

	/* Not a check: test-ingest counts that one (the checks of the two
	 * programs add up to those of the one they were split from). */
	if (topo == NULL) {
		test_fail_at(__FILE__, __LINE__, "topo_new_fake failed");
		return test_result();
	}
	test_drain(topo);
	test_drain_stop(topo);
	topo_free(topo);
	return test_result();
}
