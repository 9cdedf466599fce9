#include "config.h"

/*
 * perfdata_order against hand-built pipe-mode captures whose order is
 * worked out here by perf's rule (perfdata_order.h): rounds hand out what
 * is no newer than the newest time of the round before; a record without
 * a time goes out at once; without rounds a bounded window slides, and
 * what comes out older than something before it is counted; a reader
 * error comes after every record read before it.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "perfdata-build.h"
#include "perfdata_order.h"
#include "perfdata_read.h"
#include "testlib.h"

/* A sample's time; UINT64_MAX stands for a FINISHED_ROUND, UINT64_MAX - 1
 * for a sample of the second event, which has no TIME. */
#define ROUND		UINT64_MAX
#define NO_EVENT	(UINT64_MAX - 1)
#define NOEV_TIME	7777	/* what drain() says for it */
#define ST_UNTIMED	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |	\
			 PERF_SAMPLE_ADDR)
/* A time with this bit: a sample of the third event (ST_SAMPLE2, id 404),
 * whose TIME sits 8 bytes before ST_SAMPLE's; drain() says the time with
 * the bit again. */
#define EV2		(UINT64_C(1) << 62)
#define EV2_SIZE	56

static struct buf *
image(const uint64_t *times, size_t n)
{
	struct perf_event_attr a = mk_attr(ST_SAMPLE, 0x1cd),
			       u = mk_attr(ST_UNTIMED, 0x2cd),
			       e2 = mk_attr(ST_SAMPLE2, 0x3cd);
	struct buf *b = calloc(1, sizeof(*b));
	struct rb s;

	buf_put(b, "PERFILE2", 8);
	buf_u64(b, 16);
	buf_hdr(b, PERFDATA_REC_HEADER_ATTR, 8 + sizeof(a) + 8);
	buf_put(b, &a, sizeof(a));
	buf_u64(b, 101);
	buf_hdr(b, PERFDATA_REC_HEADER_ATTR, 8 + sizeof(u) + 8);
	buf_put(b, &u, sizeof(u));
	buf_u64(b, 202);
	buf_hdr(b, PERFDATA_REC_HEADER_ATTR, 8 + sizeof(e2) + 8);
	buf_put(b, &e2, sizeof(e2));
	buf_u64(b, 404);
	for (size_t i = 0; i < n; i++) {
		const struct perf_event_header *h;

		if (times[i] == ROUND) {
			buf_hdr(b, PERFDATA_REC_FINISHED_ROUND, 8);
		} else if (times[i] == NO_EVENT) {
			buf_hdr(b, PERF_RECORD_SAMPLE, 32);
			buf_u64(b, 202);
			buf_u64(b, 7);
			buf_u64(b, 0x2000);
		} else if (times[i] & EV2) {
			/* IDENTIFIER, TID, TIME, ADDR, CPU, RAW of 4 bytes */
			buf_hdr(b, PERF_RECORD_SAMPLE, EV2_SIZE);
			buf_u64(b, 404);
			buf_u64(b, 7);
			buf_u64(b, times[i] & ~EV2);
			buf_u64(b, 0x3000);
			buf_u64(b, 0);
			buf_u64(b, 4);
		} else {
			h = mk_sample(&s, 101, 7, times[i], 0x1000, 0);
			buf_put(b, h, h->size);
		}
	}
	return b;
}

/* Replays b through an order of max_bytes; the times handed out go to
 * got.  Returns the last perfdata_order_next result. */
static int
drain(const void *img, size_t len, uint64_t max_bytes, uint64_t *got,
      size_t *n_got, struct perfdata_order_stats *st, char *err,
      size_t errlen)
{
	struct perfdata_reader *r;
	struct perfdata_order *o;
	struct perfdata_record rec;
	int ret;

	*n_got = 0;
	check_eq_i64(perfdata_reader_open_mem(&r, img, len, err, errlen), 0);
	check_eq_i64(perfdata_order_new(&o, max_bytes), 0);
	while ((ret = perfdata_order_next(o, r, &rec, err, errlen)) == 1) {
		uint64_t t;

		check_eq_u64(rec.hdr->type, PERF_RECORD_SAMPLE);
		memcpy(&t, (const unsigned char *)rec.hdr + 32, 8);
		if (rec.hdr->size == 32)
			t = NOEV_TIME;
		/* Each record with its own event. */
		check_eq_u64(rec.event_idx, rec.hdr->size == EV2_SIZE ? 2 :
					    rec.hdr->size == 32 ? 1 : 0);
		if (rec.hdr->size == EV2_SIZE) {
			memcpy(&t, (const unsigned char *)rec.hdr + 24, 8);
			t |= EV2;
		}
		got[(*n_got)++] = t;
	}
	*st = *perfdata_order_stats(o);
	perfdata_order_free(o);
	perfdata_reader_free(r);
	return ret;
}

static void
check_order(const uint64_t *got, size_t n_got, const uint64_t *want,
	    size_t n_want)
{
	check_eq_u64(n_got, n_want);
	for (size_t i = 0; i < n_got && i < n_want; i++)
		if (got[i] != want[i]) {
			printf("# at %zu: got %llu, want %llu\n", i,
			       (unsigned long long)got[i],
			       (unsigned long long)want[i]);
			check(false);
			return;
		}
}

/* The records of in[] drained in one go, in the order of want[]; their
 * figures in *st. */
static void
drain_expect(const uint64_t *in, size_t n_in, const uint64_t *want,
	     size_t n_want, struct perfdata_order_stats *st)
{
	struct buf *b = image(in, n_in);
	uint64_t got[32];
	size_t n;
	char err[256];

	check_eq_i64(drain(b->p, b->len, PERFDATA_ORDER_MAX_BYTES, got, &n, st,
			   err, sizeof(err)), 0);
	check_order(got, n, want, n_want);
	free(b);
}

static void
test_rounds(void)
{
	/* Round 1 flushes nothing, round 2 up to 30 (round 1's newest);
	 * the sample of the event without TIME goes out when read, before
	 * anything held;
	 * 28 arrives after 30 went out: out of order, first of the end. */
	static const uint64_t in[] = {
		30, 10, 20, ROUND, 25, NO_EVENT, 40, 35, ROUND, 50, 28, 45,
	};
	static const uint64_t want[] = {
		NOEV_TIME, 10, 20, 25, 30, 28, 35, 40, 45, 50,
	};
	struct perfdata_order_stats st;

	drain_expect(in, ARRAY_SIZE(in), want, ARRAY_SIZE(want), &st);
	check_eq_u64(st.rounds, 2);
	check_eq_u64(st.unordered, 1);
	check_eq_u64(st.untimed, 1);
	check_eq_u64(st.forced, 0);
}

/* A record that may go is handed out before the next one is read, even
 * when it comes in order behind nothing: 8 goes as soon as it is read
 * (round 2 lets up to 10 go), so 5, read after it, comes out after it.
 * Then records queued behind a head that may not go (30) wait with it,
 * while an older one (9) overtakes them.  8, 5 and 9 come out after 10:
 * out of order, counted. */
static void
test_ready_at_once(void)
{
	static const uint64_t in[] = {
		10, ROUND, ROUND, 8, 5, 30, 31, 32, 9, ROUND, ROUND,
	};
	static const uint64_t want[] = { 10, 8, 5, 9, 30, 31, 32 };
	struct perfdata_order_stats st;

	drain_expect(in, ARRAY_SIZE(in), want, ARRAY_SIZE(want), &st);
	check_eq_u64(st.unordered, 3);
}

/* The FIFO's runs: records in order that lie one after another in the
 * file share an entry, but not across a round (30 after 20), a record
 * handed out at once (40 after 30) or another event (50 between 40 and
 * 60): each goes out once, with its own event and time. */
static void
test_runs(void)
{
	static const uint64_t in[] = {
		10, 20, ROUND, 30, NO_EVENT, 40, 50 | EV2, 60, ROUND, 70,
		ROUND, ROUND,
	};
	static const uint64_t want[] = {
		NOEV_TIME, 10, 20, 30, 40, 50 | EV2, 60, 70,
	};
	struct perfdata_order_stats st;

	drain_expect(in, ARRAY_SIZE(in), want, ARRAY_SIZE(want), &st);
	check_eq_u64(st.rounds, 4);
	check_eq_u64(st.unordered + st.forced, 0);
	check_eq_u64(st.held_max, 6);
}

/* The reader's in-place path (aligned, host order, uncompressed): each
 * record's offset in the image, its event, and a sample whose id names no
 * event handed out as such and counted. */
static void
test_reader_in_place(void)
{
	static const uint64_t in[] = { 5, 6 };
	struct buf *b = image(in, ARRAY_SIZE(in));
	struct perfdata_reader *r;
	struct perfdata_record rec;
	struct rb s;
	const struct perf_event_header *h = mk_sample(&s, 303, 7, 9, 0x1000,
						      0);
	uint64_t at[3];
	char err[256];

	/* image()'s two samples are the size of this one, of id 303,
	 * which no event has (the third has 404). */
	at[2] = b->len;
	at[1] = at[2] - h->size;
	at[0] = at[1] - h->size;
	buf_put(b, h, h->size);
	check_eq_i64(perfdata_reader_open_mem(&r, b->p, b->len, err,
					      sizeof(err)), 0);
	for (size_t i = 0; i < 3; i++) {
		check_eq_i64(perfdata_reader_next(r, &rec, err, sizeof(err)), 1);
		check_eq_u64(rec.offset, at[i]);
		check_eq_u64(rec.event_idx, i < 2 ? 0 : PERFDATA_NO_EVENT);
		check(rec.stable);
	}
	check_eq_i64(perfdata_reader_next(r, &rec, err, sizeof(err)), 0);
	check_eq_u64(perfdata_reader_stats(r)->unmatched, 1);
	check_eq_u64(perfdata_reader_stats(r)->records, 3);
	perfdata_reader_free(r);
	free(b);
}

static void
test_window(void)
{
	/* Three 88-byte samples fit: the fourth pushes the oldest out. */
	static const uint64_t in[] = { 50, 40, 30, 20, 10, 60 };
	static const uint64_t want[] = { 20, 10, 30, 40, 50, 60 };
	static const uint64_t sorted[] = { 10, 20, 30, 40, 50, 60 };
	static const uint64_t one[] = { 40, 30, 20, 10, 50, 60 };
	struct buf *b = image(in, ARRAY_SIZE(in));
	struct perfdata_order_stats st;
	uint64_t got[32];
	size_t n;
	char err[256];

	check_eq_i64(drain(b->p, b->len, 3 * 88, got, &n, &st, err, sizeof(err)),
		     0);
	check_order(got, n, want, ARRAY_SIZE(want));
	check_eq_u64(st.forced, 3);
	check_eq_u64(st.unordered, 1);
	check_eq_u64(st.held_max, 4);
	/* A window that holds them all sorts them all. */
	check_eq_i64(drain(b->p, b->len, 6 * 88, got, &n, &st, err, sizeof(err)),
		     0);
	check_order(got, n, sorted, ARRAY_SIZE(sorted));
	check_eq_u64(st.forced + st.unordered, 0);
	/* A bound below one record still holds one. */
	check_eq_i64(drain(b->p, b->len, 1, got, &n, &st, err, sizeof(err)), 0);
	check_order(got, n, one, ARRAY_SIZE(one));
	free(b);
}

static void
test_error_after_records(void)
{
	static const uint64_t in[] = { 30, 10, 20 };
	static const uint64_t want[] = { 10, 20, 30 };
	struct buf *b = image(in, ARRAY_SIZE(in));
	struct perfdata_order_stats st;
	uint64_t got[32];
	size_t n;
	char err[256] = "";

	/* A record that runs past the end of the data. */
	buf_hdr(b, PERF_RECORD_SAMPLE, 4096);
	buf_u64(b, 101);
	check_eq_i64(drain(b->p, b->len, PERFDATA_ORDER_MAX_BYTES, got, &n, &st,
			   err, sizeof(err)), -EPROTO);
	check_order(got, n, want, ARRAY_SIZE(want));
	check(strstr(err, "past the end") != NULL);
	free(b);
}

/*
 * 40000 samples (3.4 MiB, more than the FIFO's first byte ring, so it
 * wraps and grows) through windows of 8 KiB and 1 MiB: mostly in order,
 * every 7th 25 ns older than its neighbour (those go to the heap).  A
 * model of the rule (hold while under the bound, the oldest out when
 * over, the rest sorted at the end) gives the order.  Misaligned, the
 * image's records are copies the order must keep (its byte ring), else
 * it queues pointers into the image.
 */
static void
test_big(uint64_t window, size_t misalign)
{
	enum { N = 40000, REC = 88 };
	struct buf *head = image(NULL, 0);
	size_t len = head->len + (size_t)N * REC, held = 0, n_got = 0;
	unsigned char *mem = malloc(len + misalign), *img = mem + misalign;
	uint64_t *times = malloc(N * sizeof(*times));
	uint64_t *want = malloc(N * sizeof(*want));
	uint64_t *model = malloc(N * sizeof(*model));
	uint64_t *got = malloc(N * sizeof(*got));
	struct perfdata_order_stats st;
	char err[256];
	struct rb s;

	memcpy(img, head->p, head->len);
	for (size_t i = 0; i < N; i++) {
		const struct perf_event_header *h;

		times[i] = 1000 + 10 * i - (i % 7 == 3 ? 25 : 0);
		h = mk_sample(&s, 101, 7, times[i], 0x1000, 0);
		memcpy(img + head->len + i * REC, h, REC);
		/* The model: held[] sorted by time (then by arrival). */
		size_t k = held;
		while (k > 0 && model[k - 1] > times[i]) {
			model[k] = model[k - 1];
			k--;
		}
		model[k] = times[i];
		held++;
		if (held * REC > window && held > 1) {
			want[n_got++] = model[0];
			memmove(model, model + 1, --held * sizeof(*model));
		}
	}
	memcpy(want + n_got, model, held * sizeof(*model));
	check_eq_i64(n_got + held, N);
	check_eq_i64(drain(img, len, window, got, &n_got, &st, err,
			   sizeof(err)), 0);
	check_order(got, n_got, want, N);
	check_eq_u64(st.forced, N - held);
	check_eq_u64(st.unordered, 0);
	free(head);
	free(mem);
	free(times);
	free(want);
	free(model);
	free(got);
}

int
main(void)
{
	test_big(8192, 0);
	test_big(1 << 20, 0);
	test_big(8192, 4);
	test_big(1 << 20, 4);
	/* A window past the first byte ring: it fills, wraps onto held
	 * records unless it grows. */
	test_big(3 << 19, 4);
	test_rounds();
	test_ready_at_once();
	test_reader_in_place();
	test_window();
	test_error_after_records();
	test_runs();
	return test_result();
}
