#include "config.h"

/*
 * ring_drain() against synthetic rings laid out byte for byte as the
 * kernel writes them: a perf_event_mmap_page, then 2^n data pages holding
 * records at free-running u64 positions, published through data_head.
 *
 * Every record written here carries its sequence number in the first four
 * body bytes and a pattern derived from it in the rest, so the callback
 * can tell a record delivered whole and in order from a torn or stale one.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"
#include "testlib.h"

#define SEEN_MAX	64

struct tring {
	void *base;
	size_t mmap_len;
	size_t page;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t data_size;
	uint64_t head;		/* producer position, not yet published */
};

static uint8_t
tring_pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 131u + i * 7u + 1u);
}

/*
 * Maps 1 + data_pages pages.  With kernel_41, the meta page announces the
 * data area as Linux >= 4.1 does; otherwise both fields stay 0.
 */
static int
tring_new(struct tring *t, size_t data_pages, bool kernel_41)
{
	memset(t, 0, sizeof(*t));
	t->page = (size_t)sysconf(_SC_PAGESIZE);
	t->mmap_len = (1 + data_pages) * t->page;
	t->base = mmap(NULL, t->mmap_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->base == MAP_FAILED)
		return -errno;
	t->meta = t->base;
	t->data = (unsigned char *)t->base + t->page;
	t->data_size = data_pages * t->page;
	if (kernel_41) {
		t->meta->data_offset = t->page;
		t->meta->data_size = t->data_size;
	}
	return 0;
}

static void
tring_free(struct tring *t)
{
	if (t->base != NULL && t->base != MAP_FAILED)
		munmap(t->base, t->mmap_len);
	t->base = NULL;
}

/* Both positions at pos: an empty ring whose reader has reached pos. */
static void
tring_start(struct tring *t, uint64_t pos)
{
	t->head = pos;
	t->meta->data_head = pos;
	t->meta->data_tail = pos;
}

static void
tring_put(struct tring *t, uint64_t pos, const void *src, size_t len)
{
	const unsigned char *s = src;
	size_t i;

	for (i = 0; i < len; i++)
		t->data[(pos + i) & (t->data_size - 1)] = s[i];
}

/* Writes one record at the producer position; returns its position. */
static uint64_t
tring_write(struct tring *t, uint32_t type, uint16_t size, uint32_t seq)
{
	struct perf_event_header hdr = { .type = type, .misc = 0,
					 .size = size };
	uint64_t pos = t->head;
	uint8_t b;
	size_t i;

	tring_put(t, pos, &hdr, sizeof(hdr));
	if (size >= 12)
		tring_put(t, pos + 8, &seq, sizeof(seq));
	for (i = 12; i < size; i++) {
		b = tring_pattern(seq, i);
		tring_put(t, pos + i, &b, 1);
	}
	t->head += size;
	return pos;
}

/* A raw header with any size, for the corruption cases. */
static uint64_t
tring_write_header(struct tring *t, uint32_t type, uint16_t size,
		   uint64_t advance)
{
	struct perf_event_header hdr = { .type = type, .size = size };
	uint64_t pos = t->head;

	tring_put(t, pos, &hdr, sizeof(hdr));
	t->head += advance;
	return pos;
}

static void
tring_publish(struct tring *t)
{
	__atomic_store_n(&t->meta->data_head, t->head, __ATOMIC_RELEASE);
}

struct seen {
	size_t n;
	uint32_t seq[SEEN_MAX];
	uint16_t type[SEEN_MAX];
	uint16_t size[SEEN_MAX];
	const void *ptr[SEEN_MAX];
	size_t torn;		/* records whose bytes did not match */
	size_t stop_at;		/* stop on this call, 1-based; 0 never */
	const struct ring *r;
	size_t copied;		/* records handed out from scratch */
};

static int
seen_record(const struct perf_event_header *hdr, void *ctx)
{
	struct seen *s = ctx;
	const unsigned char *p = (const void *)hdr;
	uint32_t seq = UINT32_MAX;
	size_t i;

	if (hdr->size >= 12)
		memcpy(&seq, p + 8, sizeof(seq));
	for (i = 12; i < hdr->size; i++)
		if (p[i] != tring_pattern(seq, i)) {
			s->torn++;
			break;
		}
	if (s->r != NULL && p == s->r->scratch)
		s->copied++;
	if (s->n < SEEN_MAX) {
		s->seq[s->n] = seq;
		s->type[s->n] = (uint16_t)hdr->type;
		s->size[s->n] = hdr->size;
		s->ptr[s->n] = hdr;
	}
	s->n++;
	return s->stop_at != 0 && s->n == s->stop_at;
}

static bool
in_ring(const struct ring *r, const void *p)
{
	const unsigned char *c = p;

	return c >= r->data && c < r->data + r->data_size;
}

static void
test_in_order(void)
{
	static const uint16_t sizes[] = { 56, 64, 8, 200, 48 };
	struct ring_stats st = { 0 };
	struct seen s = { 0 };
	struct tring t;
	struct ring r;
	uint64_t total = 0;
	size_t i, n;

	if (!check_eq_i64(tring_new(&t, 2, true), 0))
		return;
	tring_start(&t, 0);
	for (i = 0; i < 5; i++) {
		tring_write(&t, PERF_RECORD_SAMPLE, sizes[i], (uint32_t)i);
		total += sizes[i];
	}
	tring_publish(&t);
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), 0);
	check(r.data == t.data);
	check_eq_u64(r.data_size, t.data_size);
	check_eq_u64(ring_pending(&r), total);

	s.r = &r;
	n = ring_drain(&r, seen_record, &s, &st);
	check_eq_u64(n, 5);
	check_eq_u64(s.n, 5);
	check_eq_u64(s.torn, 0);
	for (i = 0; i < 5; i++) {
		/* The header-only record has no room for its sequence. */
		check_eq_u64(s.seq[i], sizes[i] >= 12 ? i : UINT32_MAX);
		check_eq_u64(s.size[i], sizes[i]);
		check(in_ring(&r, s.ptr[i]));
	}
	check_eq_u64(s.copied, 0);
	check_eq_u64(t.meta->data_tail, t.head);
	check_eq_u64(st.records, 5);
	check_eq_u64(st.bytes, total);
	check_eq_u64(st.bad_size, 0);
	check_eq_u64(ring_pending(&r), 0);

	n = ring_drain(&r, seen_record, &s, &st);
	check_eq_u64(n, 0);
	check_eq_u64(t.meta->data_tail, t.head);
	ring_fini(&r);
	tring_free(&t);
}

/*
 * Records that straddle the end of the data area, at positions far above
 * 2^32; a record ending exactly at the end and one starting at offset 0
 * are not copied.
 */
static void
test_wrap(void)
{
	struct seen s = { 0 };
	struct tring t;
	struct ring r;
	uint64_t base_pos;

	if (!check_eq_i64(tring_new(&t, 1, true), 0))
		return;
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), 0);
	s.r = &r;

	base_pos = (UINT64_C(5) << 32) + t.data_size - 24;
	tring_start(&t, base_pos);
	tring_write(&t, PERF_RECORD_SAMPLE, 56, 1);	/* 24 + 32 */
	tring_write(&t, PERF_RECORD_SAMPLE, 64, 2);
	tring_publish(&t);
	check_eq_u64(ring_drain(&r, seen_record, &s, NULL), 2);
	check_eq_u64(s.torn, 0);
	check_eq_u64(s.seq[0], 1);
	check_eq_u64(s.seq[1], 2);
	check(s.ptr[0] == (const void *)r.scratch);
	check(in_ring(&r, s.ptr[1]));
	check_eq_u64(t.meta->data_tail, base_pos + 120);

	/* Ends exactly at the end of the data area, then offset 0. */
	memset(&s, 0, sizeof(s));
	s.r = &r;
	tring_start(&t, (UINT64_C(9) << 32) + t.data_size - 64);
	tring_write(&t, PERF_RECORD_SAMPLE, 64, 3);
	tring_write(&t, PERF_RECORD_SAMPLE, 32, 4);
	tring_publish(&t);
	check_eq_u64(ring_drain(&r, seen_record, &s, NULL), 2);
	check_eq_u64(s.torn, 0);
	check_eq_u64(s.copied, 0);
	check(s.ptr[0] == (const void *)(r.data + r.data_size - 64));
	check(s.ptr[1] == (const void *)r.data);

	/*
	 * The header itself split across the end.  The kernel's 8-byte
	 * records never do this; a misaligned tail still must not tear.
	 */
	memset(&s, 0, sizeof(s));
	s.r = &r;
	tring_start(&t, (UINT64_C(7) << 32) + t.data_size - 4);
	tring_write(&t, PERF_RECORD_SAMPLE, 32, 5);
	tring_publish(&t);
	check_eq_u64(ring_drain(&r, seen_record, &s, NULL), 1);
	check_eq_u64(s.torn, 0);
	check_eq_u64(s.seq[0], 5);
	check_eq_u64(s.size[0], 32);
	check_eq_u64(s.copied, 1);

	/* Misaligned in mid-ring: still handed out aligned, from scratch. */
	memset(&s, 0, sizeof(s));
	s.r = &r;
	tring_start(&t, 1000 + 4);
	tring_write(&t, PERF_RECORD_SAMPLE, 32, 6);
	tring_publish(&t);
	check_eq_u64(ring_drain(&r, seen_record, &s, NULL), 1);
	check_eq_u64(s.torn, 0);
	check_eq_u64(s.copied, 1);
	check_eq_u64((uintptr_t)s.ptr[0] % 8, 0);

	/* Positions crossing 2^32 and then 2^64 itself. */
	memset(&s, 0, sizeof(s));
	s.r = &r;
	tring_start(&t, UINT64_C(0xffffffff) - 39);
	tring_write(&t, PERF_RECORD_SAMPLE, 48, 6);
	tring_write(&t, PERF_RECORD_SAMPLE, 48, 7);
	tring_publish(&t);
	check_eq_u64(ring_pending(&r), 96);
	check_eq_u64(ring_drain(&r, seen_record, &s, NULL), 2);
	check_eq_u64(t.meta->data_tail, UINT64_C(0x100000000) + 56);

	memset(&s, 0, sizeof(s));
	tring_start(&t, UINT64_MAX - 31);
	tring_write(&t, PERF_RECORD_SAMPLE, 64, 8);
	tring_write(&t, PERF_RECORD_SAMPLE, 136, 9);
	tring_publish(&t);
	check_eq_u64(t.head, 168);
	check_eq_u64(ring_pending(&r), 200);
	check_eq_u64(ring_drain(&r, seen_record, &s, NULL), 2);
	check_eq_u64(s.torn, 0);
	check_eq_u64(s.seq[1], 9);
	check_eq_u64(t.meta->data_tail, 168);
	ring_fini(&r);
	tring_free(&t);
}

/* Loss, throttle and unknown records go to the callback like samples. */
static void
test_all_types(void)
{
	static const uint16_t types[] = {
		PERF_RECORD_SAMPLE, PERF_RECORD_LOST, PERF_RECORD_THROTTLE,
		PERF_RECORD_UNTHROTTLE, 99, PERF_RECORD_LOST_SAMPLES,
		0xffff, PERF_RECORD_SAMPLE,
	};
	struct ring_stats st = { 0 };
	struct seen s = { 0 };
	struct tring t;
	struct ring r;
	size_t i;

	if (!check_eq_i64(tring_new(&t, 1, true), 0))
		return;
	tring_start(&t, 4096 * 3 + 8);
	for (i = 0; i < 8; i++)
		tring_write(&t, types[i], 40, (uint32_t)i);
	tring_publish(&t);
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), 0);
	check_eq_u64(ring_drain(&r, seen_record, &s, &st), 8);
	for (i = 0; i < 8; i++) {
		check_eq_u64(s.type[i], types[i]);
		check_eq_u64(s.seq[i], i);
	}
	check_eq_u64(s.torn, 0);
	check_eq_u64(st.records, 8);
	check_eq_u64(t.meta->data_tail, t.head);
	ring_fini(&r);
	tring_free(&t);
}

/*
 * Two good records, then a header that cannot be a kernel record, then
 * good records that are unreachable behind it.  The two are delivered,
 * the rest up to head is skipped and counted, and a second drain finds
 * nothing.
 */
static void
bad_case(const char *what, uint16_t bad_size, uint64_t bad_advance,
	 bool followers, uint64_t extra_head)
{
	struct ring_stats st = { 0 };
	struct seen s = { 0 };
	struct tring t;
	struct ring r;
	uint64_t bad_pos, start = UINT64_C(3) << 32;

	fprintf(stderr, "bad size case: %s\n", what);
	if (!check_eq_i64(tring_new(&t, 1, true), 0))
		return;
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), 0);
	tring_start(&t, start);
	tring_write(&t, PERF_RECORD_SAMPLE, 48, 0);
	tring_write(&t, PERF_RECORD_LOST, 32, 1);
	bad_pos = tring_write_header(&t, PERF_RECORD_SAMPLE, bad_size,
				     bad_advance);
	if (followers) {
		tring_write(&t, PERF_RECORD_SAMPLE, 48, 2);
		tring_write(&t, PERF_RECORD_SAMPLE, 48, 3);
	}
	t.head += extra_head;
	tring_publish(&t);

	check_eq_u64(ring_drain(&r, seen_record, &s, &st), 2);
	check_eq_u64(s.n, 2);
	check_eq_u64(s.seq[1], 1);
	check_eq_u64(st.records, 2);
	check_eq_u64(st.bytes, 80);
	check_eq_u64(st.bad_size, 1);
	check_eq_u64(st.skipped_bytes, t.head - bad_pos);
	check_eq_u64(st.bytes + st.skipped_bytes, t.head - start);
	check_eq_u64(t.meta->data_tail, t.head);
	check_eq_u64(ring_pending(&r), 0);
	check_eq_u64(ring_drain(&r, seen_record, &s, &st), 0);
	check_eq_u64(st.bad_size, 1);
	ring_fini(&r);
	tring_free(&t);
}

static void
test_bad_sizes(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	bad_case("size 0", 0, 8, true, 0);
	bad_case("size 4", 4, 8, true, 0);
	bad_case("size 12", 12, 16, true, 0);
	bad_case("size 9", 9, 16, true, 0);
	/*
	 * Larger than the data area.  head is pushed out too, so only the
	 * data_size check (not the head check) can catch it.
	 */
	bad_case("size > data_size", (uint16_t)(2 * page), 8, true, 4 * page);
	bad_case("size past head", 64, 32, false, 0);
	bad_case("header past head", 48, 4, false, 0);
}

static void
test_pre41_layout(void)
{
	struct seen s = { 0 };
	struct tring t;
	struct ring r;

	if (!check_eq_i64(tring_new(&t, 2, false), 0))
		return;
	check_eq_u64(t.meta->data_size, 0);
	tring_start(&t, 2 * t.data_size - 16);
	tring_write(&t, PERF_RECORD_SAMPLE, 40, 1);
	tring_write(&t, PERF_RECORD_COMM, 32, 2);
	tring_publish(&t);
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), 0);
	check(r.data == (unsigned char *)t.base + t.page);
	check_eq_u64(r.data_size, 2 * t.page);
	s.r = &r;
	check_eq_u64(ring_drain(&r, seen_record, &s, NULL), 2);
	check_eq_u64(s.torn, 0);
	check_eq_u64(s.copied, 1);
	check_eq_u64(s.seq[1], 2);
	ring_fini(&r);
	tring_free(&t);
}

static void
test_init_rejects(void)
{
	struct tring t;
	struct ring r;

	/* 1 + 3 pages: the data area is not 2^n pages. */
	if (!check_eq_i64(tring_new(&t, 3, false), 0))
		return;
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), -EINVAL);
	ring_fini(&r);
	t.meta->data_offset = t.page;
	t.meta->data_size = 3 * t.page;
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), -EINVAL);
	ring_fini(&r);
	tring_free(&t);

	if (!check_eq_i64(tring_new(&t, 4, true), 0))
		return;
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), 0);
	ring_fini(&r);
	ring_fini(&r);
	/* A meta page announcing a data area that is not 2^n bytes. */
	t.meta->data_size = 3 * t.page;
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), -EINVAL);
	t.meta->data_size = 4 * t.page - 8;
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), -EINVAL);
	/* Or one that runs past the mapping. */
	t.meta->data_size = 4 * t.page;
	t.meta->data_offset = 2 * t.page;
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), -EINVAL);
	t.meta->data_offset = t.page;
	/* Mapping lengths that are not 1 + 2^n pages. */
	check_eq_i64(ring_init(&r, t.base, t.page, t.page), -EINVAL);
	check_eq_i64(ring_init(&r, t.base, t.mmap_len - 8, t.page), -EINVAL);
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page + 8), -EINVAL);
	check_eq_i64(ring_init(&r, NULL, t.mmap_len, t.page), -EINVAL);
	check(r.scratch == NULL);
	check_eq_u64(ring_pending(&r), 0);
	check_eq_u64(ring_drain(&r, seen_record, NULL, NULL), 0);
	ring_fini(&r);
	ring_fini(NULL);
	tring_free(&t);
}

static void
test_stop(void)
{
	struct ring_stats st = { 0 };
	struct seen s = { 0 };
	struct tring t;
	struct ring r;
	uint64_t pos[4];
	size_t i;

	if (!check_eq_i64(tring_new(&t, 1, true), 0))
		return;
	tring_start(&t, 1000 * 8);
	for (i = 0; i < 4; i++)
		pos[i] = tring_write(&t, PERF_RECORD_SAMPLE, 56, (uint32_t)i);
	tring_publish(&t);
	check_eq_i64(ring_init(&r, t.base, t.mmap_len, t.page), 0);

	s.stop_at = 2;
	check_eq_u64(ring_drain(&r, seen_record, &s, &st), 2);
	check_eq_u64(t.meta->data_tail, pos[2]);
	check_eq_u64(ring_pending(&r), 112);
	check_eq_u64(st.bytes, 112);

	/* The kernel adds one more before the next drain. */
	tring_write(&t, PERF_RECORD_SAMPLE, 24, 4);
	tring_publish(&t);
	check_eq_u64(ring_pending(&r), 136);
	s.stop_at = 0;
	check_eq_u64(ring_drain(&r, seen_record, &s, &st), 3);
	check_eq_u64(s.n, 5);
	for (i = 0; i < 5; i++)
		check_eq_u64(s.seq[i], i);
	check_eq_u64(st.records, 5);
	check_eq_u64(t.meta->data_tail, t.head);
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
	test_in_order();
	test_wrap();
	test_all_types();
	test_bad_sizes();
	test_pre41_layout();
	test_init_rejects();
	test_stop();
	test_laps();
	return test_result();
}
