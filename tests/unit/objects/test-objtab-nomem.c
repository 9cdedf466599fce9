#include "config.h"

/*
 * The object table (src/objects/objtab.h) when memory runs out: an object
 * objtab_map could not keep for want of memory counts in objtab_untracked,
 * like one a full table could not keep.  Allocations are refused through
 * tests/lib/failalloc.h, which counts the refusals.  The oracle is that
 * count: a map during which an allocation was refused could not keep its
 * object (objtab_map has no fallback), one during which none was refused
 * kept it.  A site whose strings find no memory is not interned.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "failalloc.h"
#include "objtab.h"
#include "testlib.h"

#define UNIT 0x1000ull
#define BASE 0x7f0000000000ull

/* objtab_map with every allocation refused when `fail`; *hit: whether
 * one was asked for (and refused). */
static int
map_maybe(struct objtab *t, int32_t pid, const struct obj *o, bool fail,
	  bool *hit)
{
	unsigned long before = failalloc_refused;
	int ret;

	failalloc_on = fail;
	ret = objtab_map(t, pid, o);
	failalloc_on = false;
	*hit = failalloc_refused > before;
	return ret;
}

/*
 * Objects appended to 12 pids in turn (new pids grow the pid array, a
 * full block of a pid splits into a new one), every fifth map refused
 * memory: exactly the maps that asked for memory then fail, each counts
 * once, and only the others' objects are found.
 */
#define GROW_PIDS 12
#define GROW_MAPS 2400

static void
test_grow(void)
{
	static bool lost[GROW_MAPS];
	struct objtab *t = objtab_new(0);
	uint64_t k = 0;

	for (size_t i = 0; i < GROW_MAPS; i++) {
		struct obj o = { .base = BASE + i / GROW_PIDS * 2 * UNIT,
				 .size = UNIT, .site = 1, .birth = i + 1 };
		int ret = map_maybe(t, 1 + (int32_t)(i % GROW_PIDS), &o,
				    i % 5 == 0, &lost[i]);

		k += lost[i];
		check_eq_i64(ret, lost[i] ? -ENOMEM : 0);
	}
	printf("# %llu of %d maps refused memory\n", (unsigned long long)k,
	       GROW_MAPS / 5);
	fflush(stdout);
	/* The first map of pids 1, 6 and 11, and a block's worth later. */
	check(k >= 3);
	check_eq_u64(objtab_untracked(t), k);
	check_eq_u64(objtab_count(t), GROW_MAPS - k);
	for (size_t i = 0; i < GROW_MAPS; i++) {
		const struct obj *x = objtab_find(t,
			1 + (int32_t)(i % GROW_PIDS),
			BASE + i / GROW_PIDS * 2 * UNIT + 7);

		check(lost[i] ? x == NULL : x && x->birth == i + 1);
	}
	objtab_free(t);
}

/*
 * One block of `fill` objects: a big one (100 units) and small ones after
 * it.  Then a small object mapped inside the big one, memory refused.
 */
static struct objtab *
split_table(int32_t pid, size_t fill)
{
	struct objtab *t = objtab_new(0);
	struct obj big = { .base = BASE, .size = 100 * UNIT, .site = 1,
			   .birth = 1 };

	check_eq_i64(objtab_map(t, pid, &big), 0);
	for (size_t j = 1; j < fill; j++) {
		struct obj o = { .base = BASE + (100 + 2 * j) * UNIT,
				 .size = UNIT, .site = 2, .birth = 1 + j };

		check_eq_i64(objtab_map(t, pid, &o), 0);
	}
	check_eq_u64(objtab_count(t), fill);
	return t;
}

static void
test_split(void)
{
	struct obj x = { .base = BASE + 10 * UNIT, .size = UNIT, .site = 3,
			 .birth = 1000 };
	struct objtab *t = split_table(1, 64);
	const struct obj *o;
	bool hit;

	/* A full block: the split's right half needs a new block.  Nothing
	 * changes; the big object still names the range. */
	check_eq_i64(map_maybe(t, 1, &x, true, &hit), -ENOMEM);
	check(hit);
	check_eq_u64(objtab_untracked(t), 1);
	check_eq_u64(objtab_count(t), 64);
	o = objtab_find(t, 1, x.base);
	check(o && o->birth == 1 && o->size == 100 * UNIT);
	/* With memory it is kept. */
	check_eq_i64(map_maybe(t, 1, &x, false, &hit), 0);
	check(!hit);
	o = objtab_find(t, 1, x.base);
	check(o && o->birth == 1000);
	check_eq_u64(objtab_untracked(t), 1);
	objtab_free(t);

	/* One slot left: the split takes it, the new object then needs a
	 * new block.  The range is a hole between the halves. */
	t = split_table(2, 63);
	check_eq_i64(map_maybe(t, 2, &x, true, &hit), -ENOMEM);
	check(hit);
	check_eq_u64(objtab_untracked(t), 1);
	check_eq_u64(objtab_count(t), 64);
	check(objtab_find(t, 2, x.base) == NULL);
	o = objtab_find(t, 2, x.base - UNIT);
	check(o && o->birth == 1 && o->base == BASE);
	o = objtab_find(t, 2, x.base + UNIT);
	check(o && o->birth == 1 && o->base == x.base + UNIT);
	/* A caller's own loss (no memory for a site) counts too. */
	objtab_untrack(t);
	check_eq_u64(objtab_untracked(t), 2);
	objtab_free(t);
}

/* objtab_site_intern with every allocation refused when `fail`; *hit
 * as map_maybe's. */
static int64_t
intern_maybe(struct objtab *t, const char *site, const char *const *callers,
	     size_t n, bool fail, bool *hit)
{
	unsigned long before = failalloc_refused;
	int64_t ret;

	failalloc_on = fail;
	ret = objtab_site_intern(t, site, callers, n);
	failalloc_on = false;
	*hit = failalloc_refused > before;
	return ret;
}

/*
 * A new site once the sites' arrays have room: its strings' copies are
 * the only memory it asks for.  Refused (the site's own, or a caller's),
 * interning fails with -ENOMEM, which its callers count untracked
 * (test-allocs, test-heapobjs), and the table keeps no half-made site;
 * with memory, the same site is interned.
 */
static void
test_site_strings(void)
{
	const char *callers[2] = { "main+0x10", "start+0x4" };
	struct objtab *t = objtab_new(0);
	bool hit;

	check_eq_i64(intern_maybe(t, "first+0x1", NULL, 0, false, &hit), 0);
	check_eq_i64(intern_maybe(t, "make+0x1c", NULL, 0, true, &hit),
		     -ENOMEM);
	check(hit);
	check_eq_i64(intern_maybe(t, "make+0x1c", callers, 2, true, &hit),
		     -ENOMEM);
	check(hit);
	check_eq_u64(objtab_n_sites(t), 1);
	check_eq_i64(intern_maybe(t, "make+0x1c", callers, 2, false, &hit),
		     1);
	check_eq_str(objtab_site(t, 1)->site, "make+0x1c");
	check_eq_str(objtab_site(t, 1)->callers[1], "start+0x4");
	/* Already interned: no memory needed. */
	check_eq_i64(intern_maybe(t, "make+0x1c", callers, 2, true, &hit),
		     1);
	check(!hit);
	objtab_free(t);
}

int
main(void)
{
	test_grow();
	test_split();
	test_site_strings();
	return test_result();
}
