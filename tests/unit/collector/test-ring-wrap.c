#include "config.h"

/*
 * ring_drain() where positions wrap: records that straddle the end of the
 * data area, positions far above 2^32 and across 2^64, and a producer and
 * reader going round the ring for many laps (synthetic rings from
 * tests/lib/ring-build.h).
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ring-build.h"
#include "testlib.h"

/*
 * Two records from just below the end of the data area, at a position far
 * above 2^32: the first straddles the end and is copied, the second
 * starts in the ring.
 */
static void
wrap_straddle(struct tring *t, struct ring *r)
{
	struct seen s = { .r = r };
	uint64_t base_pos;

	base_pos = (UINT64_C(5) << 32) + t->data_size - 24;
	tring_start(t, base_pos);
	tring_write(t, PERF_RECORD_SAMPLE, 56, 1);	/* 24 + 32 */
	tring_write(t, PERF_RECORD_SAMPLE, 64, 2);
	tring_publish(t);
	check_eq_u64(ring_drain(r, seen_record, &s, NULL), 2);
	check_eq_u64(s.torn, 0);
	check_eq_u64(s.seq[0], 1);
	check_eq_u64(s.seq[1], 2);
	check(s.ptr[0] == (const void *)r->scratch);
	check(in_ring(r, s.ptr[1]));
	check_eq_u64(t->meta->data_tail, base_pos + 120);
}

/* Ends exactly at the end of the data area, then offset 0: no copies. */
static void
wrap_exact_end(struct tring *t, struct ring *r)
{
	struct seen s = { .r = r };

	tring_start(t, (UINT64_C(9) << 32) + t->data_size - 64);
	tring_write(t, PERF_RECORD_SAMPLE, 64, 3);
	tring_write(t, PERF_RECORD_SAMPLE, 32, 4);
	tring_publish(t);
	check_eq_u64(ring_drain(r, seen_record, &s, NULL), 2);
	check_eq_u64(s.torn, 0);
	check_eq_u64(s.copied, 0);
	check(s.ptr[0] == (const void *)(r->data + r->data_size - 64));
	check(s.ptr[1] == (const void *)r->data);
}

/*
 * The header itself split across the end.  The kernel's 8-byte records
 * never do this; a misaligned tail still must not tear.  Misaligned in
 * mid-ring, a record is still handed out aligned, from scratch.
 */
static void
wrap_misaligned(struct tring *t, struct ring *r)
{
	struct seen s = { .r = r };

	tring_start(t, (UINT64_C(7) << 32) + t->data_size - 4);
	tring_write(t, PERF_RECORD_SAMPLE, 32, 5);
	tring_publish(t);
	check_eq_u64(ring_drain(r, seen_record, &s, NULL), 1);
	check_eq_u64(s.torn, 0);
	check_eq_u64(s.seq[0], 5);
	check_eq_u64(s.size[0], 32);
	check_eq_u64(s.copied, 1);

	memset(&s, 0, sizeof(s));
	s.r = r;
	tring_start(t, 1000 + 4);
	tring_write(t, PERF_RECORD_SAMPLE, 32, 6);
	tring_publish(t);
	check_eq_u64(ring_drain(r, seen_record, &s, NULL), 1);
	check_eq_u64(s.torn, 0);
	check_eq_u64(s.copied, 1);
	check_eq_u64((uintptr_t)s.ptr[0] % 8, 0);
}

/* Positions crossing 2^32 and then 2^64 itself. */
static void
wrap_u64_positions(struct tring *t, struct ring *r)
{
	struct seen s = { .r = r };

	tring_start(t, UINT64_C(0xffffffff) - 39);
	tring_write(t, PERF_RECORD_SAMPLE, 48, 6);
	tring_write(t, PERF_RECORD_SAMPLE, 48, 7);
	tring_publish(t);
	check_eq_u64(ring_pending(r), 96);
	check_eq_u64(ring_drain(r, seen_record, &s, NULL), 2);
	check_eq_u64(t->meta->data_tail, UINT64_C(0x100000000) + 56);

	memset(&s, 0, sizeof(s));
	tring_start(t, UINT64_MAX - 31);
	tring_write(t, PERF_RECORD_SAMPLE, 64, 8);
	tring_write(t, PERF_RECORD_SAMPLE, 136, 9);
	tring_publish(t);
	check_eq_u64(t->head, 168);
	check_eq_u64(ring_pending(r), 200);
	check_eq_u64(ring_drain(r, seen_record, &s, NULL), 2);
	check_eq_u64(s.torn, 0);
	check_eq_u64(s.seq[1], 9);
	check_eq_u64(t->meta->data_tail, 168);
}

/*
 * Records that straddle the end of the data area, at positions far above
 * 2^32; a record ending exactly at the end and one starting at offset 0
 * are not copied.
 */
static void
test_wrap(void)
{
	struct tring t;
	struct ring r;

	if (!check_eq_i64(tring_new(&t, 1, true), 0))
		return;
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), 0);
	wrap_straddle(&t, &r);
	wrap_exact_end(&t, &r);
	wrap_misaligned(&t, &r);
	wrap_u64_positions(&t, &r);
	ring_fini(&r);
	tring_free(&t);
}

struct laps {
	uint32_t next_seq;
	size_t torn, copied, stop_every, calls;
	const struct ring *r;
};

static int
laps_record(const struct perf_event_header *hdr, void *ctx)
{
	struct laps *l = ctx;
	const unsigned char *p = (const void *)hdr;
	uint32_t seq;
	size_t i;

	memcpy(&seq, p + 8, sizeof(seq));
	if (seq != l->next_seq)
		l->torn++;
	l->next_seq = seq + 1;
	for (i = 12; i < hdr->size; i++)
		if (p[i] != tring_pattern(seq, i)) {
			l->torn++;
			break;
		}
	if (p == l->r->scratch)
		l->copied++;
	l->calls++;
	return l->calls % l->stop_every == 0;
}

/*
 * A producer that, like the kernel, writes only into free space
 * (data_size - (head - tail)) and a reader that sometimes stops early,
 * for many laps, starting just below 2^32.
 */
static void
test_laps(void)
{
	struct ring_stats st = { 0 };
	struct laps l = { .stop_every = 7 };
	struct tring t;
	struct ring r;
	uint32_t seq = 0, rng = 12345;
	uint64_t start = UINT64_C(0x100000000) - 4096 - 8;
	uint16_t size;
	int round;

	if (!check_eq_i64(tring_new(&t, 1, true), 0))
		return;
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), 0);
	l.r = &r;
	tring_start(&t, start);
	for (round = 0; round < 5000; round++) {
		for (;;) {
			rng = rng * 1103515245u + 12345u;
			size = (uint16_t)(16 + 8 * ((rng >> 16) % 64));
			if (t.data_size - (t.head - t.meta->data_tail) < size)
				break;
			tring_write(&t, PERF_RECORD_SAMPLE, size, seq++);
		}
		tring_publish(&t);
		ring_drain(&r, laps_record, &l, &st);
	}
	while (ring_pending(&r) != 0)
		ring_drain(&r, laps_record, &l, &st);

	check_eq_u64(l.torn, 0);
	check_eq_u64(l.next_seq, seq);
	check_eq_u64(st.records, seq);
	check_eq_u64(st.bytes, t.head - start);
	check_eq_u64(st.bad_size, 0);
	check(l.copied > 100);
	check(seq > 10000);
	check(t.head - start > 100 * t.data_size);
	ring_fini(&r);
	tring_free(&t);
}

int
main(void)
{
	test_wrap();
	test_laps();
	return test_result();
}
