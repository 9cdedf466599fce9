/*
 * keysort (src/base/keysort.c) against qsort on the same items: random
 * keys over the full 64-bit range and over a few small values (where
 * most byte passes are skipped), equal keys keeping their input order
 * (stable), keys most of which are 0 (a byte value that most, not all,
 * items share), and the sizes 0, 1 and 2.
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>

#include "keysort.h"
#include "testlib.h"

static int
ktest_cmp(const void *pa, const void *pb)
{
	const struct keysort_item *a = pa, *b = pb;

	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	/* Stable: the input order (index) breaks ties. */
	return a->index < b->index ? -1 : a->index > b->index;
}

static uint64_t
ktest_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
ktest_run(size_t n, uint64_t mask, uint64_t seed, bool skew)
{
	struct keysort_item *v = malloc((n ? n : 1) * sizeof(*v));
	struct keysort_item *w = malloc((n ? n : 1) * sizeof(*w));
	size_t bad = 0;

	if (!check(v && w)) {
		free(v);
		free(w);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		v[i].hi = ktest_rand(&seed) & mask;
		v[i].lo = ktest_rand(&seed) & mask;
		/* Skewed: most keys 0, as most rows' idle counts are. */
		if (skew && ktest_rand(&seed) % 10 < 8)
			v[i].hi = v[i].lo = 0;
		v[i].index = i;
		w[i] = v[i];
	}
	check_eq_i64(keysort(v, n), 0);
	qsort(w, n, sizeof(*w), ktest_cmp);
	for (size_t i = 0; i < n; i++)
		bad += v[i].hi != w[i].hi || v[i].lo != w[i].lo ||
		       v[i].index != w[i].index;
	check_eq_u64(bad, 0);
	free(v);
	free(w);
}

int
main(void)
{
	ktest_run(0, UINT64_MAX, 1, false);
	ktest_run(1, UINT64_MAX, 2, false);
	ktest_run(2, UINT64_MAX, 3, false);
	ktest_run(20000, UINT64_MAX, 4, false);
	ktest_run(20000, 7, 5, false);		/* many ties: stability */
	ktest_run(5000, 0xff00ff0000ull, 6, false);	/* bytes all zero */
	ktest_run(5000, 0xffff, 7, true);	/* one byte value most */
	return test_result();
}
