/*
 * The collector's per-sample path (collector/live/ingest.c) on hand-built
 * kernel records of the three layouts memtop opens: the faults tracepoint
 * (RAW), the software page-fault event (ADDR) and a PEBS-like load/store
 * pair told apart by IDENTIFIER.  Every record must end up queued,
 * unattributed, lost or ignored, with the right kind, page and weight;
 * records of a size the event does not predict (a longer RAW) still
 * decode; and the sample -> frame latency histogram
 * (collector/live/lathist.c) reports what it was given.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggr.h"
#include "channel.h"
#include "ingest.h"
#include "lathist.h"
#include "pagetab.h"
#include "record.h"
#include "ring.h"
#include "source.h"
#include "testlib.h"
#include "threadtab.h"
#include "topo.h"

#define PID	4242
#define TID	4243

struct rec {
	unsigned char b[256];
	size_t n;
};

static void
rec_start(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	r->n = sizeof(struct perf_event_header);
}

static void
rec_u64(struct rec *r, uint64_t v)
{
	memcpy(r->b + r->n, &v, 8);
	r->n += 8;
}

static void
rec_u32x2(struct rec *r, uint32_t a, uint32_t b)
{
	memcpy(r->b + r->n, &a, 4);
	memcpy(r->b + r->n + 4, &b, 4);
	r->n += 8;
}

static const struct perf_event_header *
rec_end(struct rec *r)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
				       .size = (uint16_t)r->n };

	memcpy(r->b, &h, sizeof(h));
	return (const void *)r->b;
}

/* exceptions:page_fault_user: RAW = common header, address, ip,
 * error_code (+ pad_to bytes of padding and later fields). */
static const struct perf_event_header *
rec_tp(struct rec *r, uint32_t pid, uint64_t addr, uint64_t err,
       uint32_t raw_size)
{
	unsigned char raw[64] = { 0 };
	uint64_t ip = 0x401000;

	rec_start(r);
	rec_u64(r, 7);
	rec_u64(r, 0xffffffff81000000ull);
	rec_u32x2(r, pid, TID);
	rec_u64(r, 1000);
	rec_u32x2(r, 1, 0);
	memcpy(raw + 8, &addr, 8);
	memcpy(raw + 16, &ip, 8);
	memcpy(raw + 24, &err, 8);
	memcpy(r->b + r->n, &raw_size, 4);
	memcpy(r->b + r->n + 4, raw, raw_size);
	r->n += 4 + raw_size;
	return rec_end(r);
}

static const struct perf_event_header *
rec_sw(struct rec *r, uint32_t pid, uint64_t addr)
{
	rec_start(r);
	rec_u64(r, 7);
	rec_u64(r, 0x401000);
	rec_u32x2(r, pid, TID);
	rec_u64(r, 2000);
	rec_u64(r, addr);
	rec_u32x2(r, 0, 0);
	return rec_end(r);
}

static const struct perf_event_header *
rec_pebs(struct rec *r, uint64_t id, uint64_t addr, uint64_t weight)
{
	rec_start(r);
	rec_u64(r, id);
	rec_u64(r, 0x401000);
	rec_u32x2(r, PID, TID);
	rec_u64(r, addr);
	rec_u32x2(r, 1, 0);
	rec_u64(r, 20011);
	rec_u64(r, weight);
	rec_u64(r, 0x68100142);
	return rec_end(r);
}

static void
setup(struct source *src, struct channel_events *ch, int layout)
{
	const uint64_t common = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
				PERF_SAMPLE_TID | PERF_SAMPLE_CPU;
	struct event_spec *ev = &src->events[0];

	memset(src, 0, sizeof(*src));
	memset(ch, 0, sizeof(*ch));
	src->n_events = 1;
	ev->leader = -1;
	ev->tp_addr_off = ev->tp_ip_off = ev->tp_error_off = -1;
	if (layout == 0) {
		ev->attr.sample_type = common | PERF_SAMPLE_TIME |
				       PERF_SAMPLE_RAW;
		ev->role = ROLE_FAULT_TP;
		ev->tp_addr_off = 8;
		ev->tp_ip_off = 16;
		ev->tp_error_off = 24;
	} else if (layout == 1) {
		ev->attr.sample_type = common | PERF_SAMPLE_TIME |
				       PERF_SAMPLE_ADDR;
		ev->role = ROLE_FAULT;
	} else {
		ev->attr.sample_type = common | PERF_SAMPLE_ADDR |
				       PERF_SAMPLE_PERIOD |
				       PERF_SAMPLE_WEIGHT_STRUCT |
				       PERF_SAMPLE_DATA_SRC;
		ev->role = ROLE_LOAD;
		src->events[1] = *ev;
		src->events[1].role = ROLE_STORE;
		src->events[2] = *ev;
		src->events[2].role = ROLE_AUX;
		src->n_events = 3;
		src->period_in_sample = true;
		ch->ids[0] = 11;
		ch->ids[1] = 12;
		ch->ids[2] = 13;
		if (layout == 3) {
			/* IBS-like: the same records from one event whose
			 * kind comes from DATA_SRC. */
			ev->role = ROLE_OP;
			src->n_events = 1;
		}
	}
	ch->src = src;
	ch->n = src->n_events;
}

static void
test_layouts(const struct topo *topo)
{
	struct source src;
	struct channel_events ch;
	struct aggr a;
	struct ingest in;
	struct rec r;
	const uint64_t A = 0x7f0000001040ull, B = 0x7f0000005000ull;

	/* Tracepoint: error_code 0x6 write, 0x4 read, 0x14 instruction. */
	setup(&src, &ch, 0);
	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	ingest_init(&in, &a);
	check_eq_i64(ingest_sample(&in, &ch, rec_tp(&r, PID, A, 0x6, 36), 1),
		     1);
	check_eq_i64(ingest_sample(&in, &ch, rec_tp(&r, PID, A, 0x4, 36), 1),
		     1);
	check_eq_i64(ingest_sample(&in, &ch, rec_tp(&r, PID, B, 0x14, 36), 1),
		     1);
	/* A RAW longer than the format's fields (a newer kernel adding
	 * one) still decodes. */
	check_eq_i64(ingest_sample(&in, &ch, rec_tp(&r, PID, B, 0x6, 44), 1),
		     1);
	/* pid -1 (an exiting task), address 0: unattributed. */
	check_eq_i64(ingest_sample(&in, &ch,
				   rec_tp(&r, (uint32_t)-1, A, 0x6, 36), 1), 0);
	check_eq_i64(ingest_sample(&in, &ch, rec_tp(&r, PID, 0, 0x6, 36), 1),
		     0);
	/* A RAW size that breaks 8-byte alignment, a truncated record. */
	check_eq_i64(ingest_sample(&in, &ch, rec_tp(&r, PID, A, 0x6, 40), 1),
		     -EINVAL);
	rec_tp(&r, PID, A, 0x6, 36);
	((struct perf_event_header *)r.b)->size = 48;
	check_eq_i64(ingest_sample(&in, &ch, (const void *)r.b, 1), -EINVAL);
	aggr_flush(&a);
	check_eq_u64(a.interval.samples, 4);
	check_eq_u64(a.interval.stores, 2);
	check_eq_u64(a.interval.loads, 1);
	check_eq_u64(a.interval.other, 1);
	check_eq_u64(a.interval.unattributed, 2);
	check_eq_u64(a.interval.lost, 2);
	check_eq_u64(in.stats.samples, 4);
	check_eq_u64(in.stats.bad, 2);
	check_eq_u64(pagetab_count(a.pages), 2);
	aggr_fini(&a);

	/* Software event: every sample is `other`, weighted by period. */
	setup(&src, &ch, 1);
	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	ingest_init(&in, &a);
	for (int i = 0; i < 300; i++)
		check_eq_i64(ingest_sample(&in, &ch,
					   rec_sw(&r, PID, A + (uint64_t)i * 4096),
					   1), 1);
	check_eq_i64(ingest_sample(&in, &ch, rec_sw(&r, PID, 0), 1), 0);
	aggr_flush(&a);
	check_eq_u64(a.interval.samples, 300);
	check_eq_u64(a.interval.other, 300);
	check_eq_u64(a.interval.unattributed, 1);
	check_eq_u64(pagetab_count(a.pages), 300);
	aggr_fini(&a);

	/* PEBS-like: the IDENTIFIER picks the event; an unknown one is
	 * lost, the aux leader's samples are ignored. */
	setup(&src, &ch, 2);
	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	ingest_init(&in, &a);
	check_eq_i64(ingest_sample(&in, &ch, rec_pebs(&r, 11, A, 100), 1), 1);
	check_eq_i64(ingest_sample(&in, &ch, rec_pebs(&r, 11, A, 300), 1), 1);
	check_eq_i64(ingest_sample(&in, &ch, rec_pebs(&r, 12, A, 0), 1), 1);
	check_eq_i64(ingest_sample(&in, &ch, rec_pebs(&r, 99, A, 0), 1),
		     -EINVAL);
	check_eq_i64(ingest_sample(&in, &ch, rec_pebs(&r, 13, A, 0), 1), -1);
	aggr_flush(&a);
	check_eq_u64(a.interval.samples, 3);
	check_eq_u64(a.interval.loads, 2);
	check_eq_u64(a.interval.stores, 1);
	check_eq_u64(a.interval.lost, 1);
	check_eq_u64(in.stats.ignored, 1);
	check_eq_u64(pagetab_count(a.pages), 1);
	aggr_fini(&a);
}

/*
 * The fast decoder (fixed offsets, learnt from the first record of an
 * event) must give exactly what the general one gives, field by field,
 * on records with random contents: pids -1, addresses 0 and kernel
 * addresses, every error_code bit, weights, data sources.
 */
static void
test_fast_matches_general(void)
{
	uint64_t rng = 0x1234567;
	struct source src;
	struct channel_events ch;
	struct rec r;

	for (int layout = 0; layout < 3; layout++) {
		struct ingest in;
		int mismatches = 0;

		setup(&src, &ch, layout);
		src.events[0].attr.sample_type |= layout == 2 ?
			PERF_SAMPLE_PHYS_ADDR : 0;
		src.events[1].attr.sample_type |= layout == 2 ?
			PERF_SAMPLE_PHYS_ADDR : 0;
		ingest_init(&in, NULL);
		for (int i = 0; i < 3000; i++) {
			const struct perf_event_header *h;
			const struct event_spec *ev = &src.events[0];
			struct record_layout l;
			struct record_sample rs;
			struct sample s1, s2;
			uint64_t v, addr;
			uint32_t pid;
			int r1, r2;

			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			v = rng ^ (rng >> 29);
			addr = (v & 7) == 0 ? 0 : (v & 7) == 1 ?
			       0xffff888000001000ull : v >> 8;
			pid = (v & 0x30) == 0 ? (uint32_t)-1 : PID;
			if (layout == 0) {
				h = rec_tp(&r, pid, addr, v >> 40, 36);
			} else if (layout == 1) {
				h = rec_sw(&r, pid, addr);
			} else {
				h = rec_pebs(&r, 11 + (v >> 50) % 2, addr, v);
				/* PHYS_ADDR after DATA_SRC. */
				rec_u64(&r, v >> 12);
				h = rec_end(&r);
				ev = &src.events[(v >> 50) % 2];
			}
			memset(&s1, 0, sizeof(s1));
			memset(&s2, 0, sizeof(s2));
			source_layout(ev, &l);
			r1 = record_parse_sample(&l, h, &rs) < 0 ? -EINVAL :
			     source_decode(&src, ev, &rs, 5, &s1);
			r2 = ingest_decode(&in, &ch, h, 5, &s2);
			if (r1 != r2 || (r1 >= 0 &&
			    (s1.addr != s2.addr || s1.ip != s2.ip ||
			     s1.time != s2.time || s1.period != s2.period ||
			     s1.weight != s2.weight ||
			     s1.data_src != s2.data_src ||
			     s1.phys_addr != s2.phys_addr ||
			     s1.pid != s2.pid || s1.tid != s2.tid ||
			     s1.cpu != s2.cpu ||
			     (r1 > 0 && s1.kind != s2.kind))))
				mismatches++;
		}
		check_eq_i64(mismatches, 0);
		/* The fast layout was learnt and used. */
		check(in.fast[0].size != 0);
		check(in.fast[0].learnt);
	}
}

/*
 * A ring of 2 data pages in plain memory, laid out as the kernel's
 * (meta page with data_size 0, as before Linux 4.1), whose producer starts
 * 40 bytes before the end so that the stream wraps and one record is
 * split across the end.
 */
struct tring {
	void *base;
	size_t len, page;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t head;
	struct ring r;
};

static bool
tring_new(struct tring *t)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	t->page = page;
	t->len = 3 * page;
	t->base = aligned_alloc(page, t->len);
	if (!t->base)
		return false;
	memset(t->base, 0, t->len);
	t->meta = t->base;
	t->data = (unsigned char *)t->base + page;
	t->head = 2 * page - 40;
	t->meta->data_tail = t->head;
	t->meta->data_head = t->head;
	return ring_init(&t->r, t->base, t->len, page) == 0;
}

static void
tring_free(struct tring *t)
{
	ring_fini(&t->r);
	free(t->base);
}

/* Room for n more bytes. */
static bool
tring_room(const struct tring *t, size_t n)
{
	return t->head - t->meta->data_tail + n <= 2 * t->page;
}

static void
tring_put(struct tring *t, const void *rec, size_t n)
{
	for (size_t i = 0; i < n; i++)
		t->data[(t->head + i) & (2 * t->page - 1)] =
			((const unsigned char *)rec)[i];
	t->head += n;
	__atomic_store_n(&t->meta->data_head, t->head, __ATOMIC_RELEASE);
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

/*
 * ingest_drain against ingest_sample record by record, on the same random
 * stream through a ring that wraps: the same outcome for every record
 * (queued, unattributed, ignored, lost), the same aggregation, every LOST
 * record handed to the callback, every record counted in the return
 * value and the ring's stats.  100 threads: more than a batch's 64
 * thread slots, so tids share slots and counts are handed on mid-batch;
 * each thread's count is also checked against the decoder's verdicts.
 */
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
	for (int run = 0; run < 8; run++) {
		int layout = run % 4;
		bool timed = run >= 4;
		struct ingest in_a, in_b;
		struct aggr a, b;
		struct source src;
		struct channel_events ch;
		struct tring t = { 0 };
		struct ring_stats st = { 0 };
		struct other_seen o = { 0 };
		uint64_t rng = 0x5eed + (uint64_t)layout, records = 0;
		uint64_t lost_records = 0, want_tid[100] = { 0 };
		size_t drained = 0;
		struct thread_entry *te;
		size_t n_te;
		struct rec r;
		int i = 0;

		setup(&src, &ch, layout);
		if (!check(aggr_init(&a, topo, NULL, 12, 0) == 0))
			return;
		if (!check(aggr_init(&b, topo, NULL, 12, 0) == 0) ||
		    !check(tring_new(&t))) {
			aggr_fini(&a);
			return;
		}
		ingest_init(&in_a, &a);
		ingest_init(&in_b, &b);
		/* The drain reads a sample's time apart from the rest (the
		 * aggregation does not want it): both histograms must
		 * match. */
		if (timed) {
			in_a.lat = lathist_new(lat_a);
			in_b.lat = lathist_new(lat_b);
			check(in_a.lat != NULL && in_b.lat != NULL);
		}
		while (i < 6000) {
			/* Fill the ring, then drain it in one go. */
			for (; i < 6000; i++) {
				const struct perf_event_header *h =
					drain_record(&r, layout, i, &rng);
				struct sample s;
				uint32_t tid;

				if (!tring_room(&t, h->size))
					break;
				tring_put(&t, h, h->size);
				records++;
				if (h->type != PERF_RECORD_SAMPLE) {
					lost_records++;
					continue;
				}
				ingest_sample(&in_a, &ch, h, 5);
				memcpy(&tid, r.b + 28, sizeof(tid));
				if (ingest_decode(&in_b, &ch, h, 5, &s) > 0)
					want_tid[tid - 5000]++;
			}
			/* ingest_decode above learnt in_b's layouts: the drain
			 * must give the same with them as without. */
			drained += ingest_drain(&in_b, &ch, &t.r, 5,
						other_record, &o, &st);
		}
		check_eq_u64(drained, records);
		check_eq_u64(st.records, records);
		check_eq_u64(st.bad_size, 0);
		check_eq_u64(st.bytes, t.head - (2 * t.page - 40));
		check_eq_u64(ring_pending(&t.r), 0);
		check_eq_u64(o.n, lost_records);
		check(memcmp(&in_a.stats, &in_b.stats,
			     sizeof(in_a.stats)) == 0);
		check(in_a.stats.samples > 0 && in_a.stats.unattributed > 0);
		check(layout != 2 || (in_a.stats.bad > 0 &&
				      in_a.stats.ignored > 0));
		same_aggr(&a, &b);
		check_eq_u64(a.interval.samples, in_a.stats.samples);
		if (timed) {
			lathist_publish(in_a.lat, 1, 3000000);
			lathist_publish(in_b.lat, 1, 3000000);
			lathist_free(in_a.lat);
			lathist_free(in_b.lat);
			check(same_file(lat_a, lat_b));
		}
		te = threadtab_snapshot(b.threads, &n_te);
		check_eq_u64(n_te, 100);
		for (size_t k = 0; te && k < n_te; k++)
			check_eq_u64(te[k].samples, want_tid[te[k].tid - 5000]);
		free(te);
		tring_free(&t);
		aggr_fini(&a);
		aggr_fini(&b);
	}
	unlink(lat_a);
	unlink(lat_b);
}

/* The callback's non-zero return stops the drain after that record; the
 * next drain goes on from there. */
static void
test_drain_stop(const struct topo *topo)
{
	struct other_seen o = { .stop_at = 1 };
	struct tring t = { 0 };
	struct source src;
	struct channel_events ch;
	struct ingest in;
	struct aggr a;
	struct rec r;
	uint64_t rng = 1;

	setup(&src, &ch, 1);
	if (!check(aggr_init(&a, topo, NULL, 12, 0) == 0))
		return;
	if (!check(tring_new(&t))) {
		aggr_fini(&a);
		return;
	}
	ingest_init(&in, &a);
	rec_sw(&r, PID, 0x10000000);
	tring_put(&t, r.b, r.n);
	(void)drain_record(&r, 1, 36, &rng);	/* a LOST record */
	tring_put(&t, r.b, r.n);
	rec_sw(&r, PID, 0x10001000);
	tring_put(&t, r.b, r.n);
	check_eq_u64(ingest_drain(&in, &ch, &t.r, 1, other_record, &o, NULL),
		     2);
	check_eq_u64(in.stats.samples, 1);
	check_eq_u64(ingest_drain(&in, &ch, &t.r, 1, other_record, &o, NULL),
		     1);
	check_eq_u64(in.stats.samples, 2);
	check_eq_u64(o.n, 1);
	aggr_flush(&a);
	check_eq_u64(a.interval.samples, 2);
	tring_free(&t);
	aggr_fini(&a);
}

/* Latency lines: "seq S publish_ns P samples N notime M lat_ms L:C ...". */
static void
test_lathist(void)
{
	char path[] = "/tmp/memtop-test-lathist.XXXXXX";
	int fd = mkstemp(path);
	struct lathist *h;
	char line[512];
	FILE *f;

	if (!check(fd >= 0))
		return;
	close(fd);
	h = lathist_new(path);
	if (!check(h != NULL))
		goto out;
	/* The histogram's interval starts at creation: use times far
	 * ahead of it, then publish the first frame there. */
	lathist_publish(h, 0, 1000000000000ull);
	lathist_add(h, 1000000000000ull + 100000000ull);	/* +100 ms */
	lathist_add(h, 1000000000000ull + 900000000ull);	/* +900 ms */
	lathist_add(h, 0);
	lathist_add(h, 999000000000ull);			/* -1 s */
	lathist_publish(h, 1, 1000000000000ull + 1000000000ull);
	lathist_free(h);
	f = fopen(path, "r");
	if (!check(f != NULL))
		goto out;
	check(fgets(line, sizeof(line), f) != NULL);
	check(fgets(line, sizeof(line), f) != NULL);
	fclose(f);
	/* 2 s old, ~900 ms (bucket start 899.7 ms, rounded up), ~100 ms. */
	check_eq_str(line, "seq 1 publish_ns 1001000000000 samples 3 notime 1 "
		     "lat_ms 2000:1 901:1 101:1\n");
out:
	unlink(path);
}

int
main(void)
{
	static const int cpu_node[2] = { 0, 0 };
	struct topo *topo = topo_new_fake(2, cpu_node);

	if (!check(topo != NULL))
		return test_result();
	test_layouts(topo);
	test_fast_matches_general();
	test_drain(topo);
	test_drain_stop(topo);
	test_lathist();
	topo_free(topo);
	return test_result();
}
