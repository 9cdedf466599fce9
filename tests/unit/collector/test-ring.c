#include "config.h"

/*
 * ring_drain() against synthetic rings (tests/lib/ring-build.h): records
 * in order, every record type, bad sizes, the pre-4.1 meta page, rings
 * ring_init() refuses, and a callback that stops early.  Wrapping
 * positions and many laps are in test-ring-wrap.c.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "ring-build.h"
#include "testlib.h"

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

int
main(void)
{
	test_in_order();
	test_all_types();
	test_bad_sizes();
	test_pre41_layout();
	test_init_rejects();
	test_stop();
	return test_result();
}
