/*
 * Thread table: counting, lazy interval reset, snapshot order, growth to
 * thousands of tids against a brute-force reference, reset.
 */
#include "config.h"

#include <stdlib.h>

#include "testlib.h"
#include "threadtab.h"

#define TTEST_TIDS	5000

static void
ttest_basic(void)
{
	struct threadtab *t = threadtab_new();
	struct thread_entry *s;
	size_t n = 99;

	check(t != NULL);
	if (!t)
		return;
	check_eq_u64(threadtab_count(t), 0);
	s = threadtab_snapshot(t, &n);
	check(s == NULL);
	check_eq_u64(n, 0);

	check_eq_i64(threadtab_add(t, 100, 100, 3), 0);
	check_eq_i64(threadtab_add(t, 100, 101, 5), 0);
	check_eq_i64(threadtab_add(t, 200, 201, 5), 0);
	check_eq_i64(threadtab_add(t, 100, 100, 3), 0);
	/* Zero samples registers the thread but does not list it. */
	check_eq_i64(threadtab_add(t, 300, 300, 0), 0);
	check_eq_u64(threadtab_count(t), 4);

	s = threadtab_snapshot(t, &n);
	check_eq_u64(n, 3);
	if (s && n == 3) {
		/* 100 with 3 + 3, then the two fives in tid order. */
		check_eq_i64(s[0].tid, 100);
		check_eq_u64(s[0].samples, 6);
		check_eq_u64(s[0].total, 6);
		check_eq_i64(s[1].tid, 101);
		check_eq_u64(s[1].samples, 5);
		check_eq_i64(s[2].tid, 201);
		check_eq_i64(s[2].pid, 200);
	}
	free(s);
	threadtab_free(t);
	threadtab_free(NULL);
}

static void
ttest_interval(void)
{
	struct threadtab *t = threadtab_new();
	struct thread_entry *s;
	size_t n;

	check(t != NULL);
	if (!t)
		return;
	threadtab_add(t, 1, 10, 7);
	threadtab_add(t, 1, 11, 4);
	threadtab_next_interval(t);
	s = threadtab_snapshot(t, &n);
	check(s == NULL);
	check_eq_u64(n, 0);

	threadtab_add(t, 1, 11, 1);
	s = threadtab_snapshot(t, &n);
	check_eq_u64(n, 1);
	if (s && n == 1) {
		check_eq_i64(s[0].tid, 11);
		check_eq_u64(s[0].samples, 1);
		check_eq_u64(s[0].total, 5);
	}
	free(s);

	/* A reused tid keeps counting and takes the new pid. */
	threadtab_add(t, 2, 11, 1);
	s = threadtab_snapshot(t, &n);
	check_eq_u64(n, 1);
	if (s && n == 1) {
		check_eq_i64(s[0].pid, 2);
		check_eq_u64(s[0].samples, 2);
	}
	free(s);
	check_eq_u64(threadtab_count(t), 2);
	threadtab_free(t);
}

/* Random adds over many tids (negative, zero, consecutive, sparse),
 * compared with per-tid sums kept in plain arrays. */
static void
ttest_random(void)
{
	static uint64_t want_samples[TTEST_TIDS], want_total[TTEST_TIDS];
	static int32_t want_pid[TTEST_TIDS];
	struct threadtab *t = threadtab_new();
	uint64_t x = 12345;
	size_t bad = 0;

	check(t != NULL);
	if (!t)
		return;
	for (int interval = 0; interval < 3; interval++) {
		struct thread_entry *s;
		size_t n, listed = 0;
		int32_t prev_tid = 0;
		uint64_t prev = UINT64_MAX;

		for (size_t i = 0; i < TTEST_TIDS; i++)
			want_samples[i] = 0;
		for (int i = 0; i < 40000; i++) {
			size_t slot;
			uint64_t add;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			slot = x % (TTEST_TIDS / (3 - interval));
			add = (x >> 20) % 4;
			want_pid[slot] = (int32_t)(slot / 7);
			want_samples[slot] += add;
			want_total[slot] += add;
			if (threadtab_add(t, want_pid[slot],
					  (int32_t)(slot * 37) - 500, add))
				bad++;
		}
		s = threadtab_snapshot(t, &n);
		for (size_t i = 0; i < TTEST_TIDS; i++)
			if (want_samples[i])
				listed++;
		check_eq_u64(n, listed);
		for (size_t i = 0; s && i < n; i++) {
			size_t slot = (size_t)(s[i].tid + 500) / 37;

			if (s[i].samples > prev ||
			    (s[i].samples == prev && s[i].tid <= prev_tid))
				bad++;
			prev = s[i].samples;
			prev_tid = s[i].tid;
			if (slot >= TTEST_TIDS ||
			    s[i].samples != want_samples[slot] ||
			    s[i].total != want_total[slot] ||
			    s[i].pid != want_pid[slot])
				bad++;
		}
		free(s);
		threadtab_next_interval(t);
	}
	check_eq_u64(bad, 0);
	check(threadtab_count(t) > TTEST_TIDS * 9 / 10);

	threadtab_reset(t);
	check_eq_u64(threadtab_count(t), 0);
	threadtab_add(t, 1, 42, 1);
	{
		size_t n;
		struct thread_entry *s = threadtab_snapshot(t, &n);

		check_eq_u64(n, 1);
		if (s && n == 1)
			check_eq_u64(s[0].total, 1);
		free(s);
	}
	threadtab_free(t);
}

int
main(void)
{
	ttest_basic();
	ttest_interval();
	ttest_random();
	return test_result();
}
