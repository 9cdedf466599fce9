#include "config.h"

/*
 * The object table (src/objects/objtab.h) against an array oracle: a
 * small address space where each unit holds the birth number of the
 * object covering it (0 = none).  Random maps and unmaps, partial and
 * whole, must leave objtab_find() naming the same object at every unit
 * and objtab_count() equal to the oracle's runs; then the bounded table,
 * its untracked count, and site interning.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objtab.h"
#include "testlib.h"

#define UNITS 16384	/* the oracle's size; a run uses `units` of it */
#define UNIT 0x1000ull
#define BASE 0x7f0000000000ull

static uint64_t oracle[2][UNITS];

static size_t units = UNITS;

static size_t
oracle_runs(const uint64_t *o)
{
	size_t n = 0;

	for (size_t i = 0; i < units; i++)
		if (o[i] && (i == 0 || o[i - 1] != o[i]))
			n++;
	return n;
}

static bool
compare(const struct objtab *t, int32_t pid, const uint64_t *o)
{
	bool ok = true;

	for (size_t i = 0; i < units && ok; i++) {
		const struct obj *x = objtab_find(t, pid, BASE + i * UNIT + 7);

		ok = check_eq_u64(x ? x->birth : 0, o[i]);
	}
	return ok;
}

struct walk {
	int32_t pid;
	uint64_t end;	/* the last object's end in pid */
	size_t n;
	bool bad;
};

static int
walk_one(int32_t pid, const struct obj *o, void *ctx)
{
	struct walk *w = ctx;

	if (pid != w->pid)
		w->end = 0;
	w->bad |= o->size == 0 || o->base < w->end;
	w->pid = pid;
	w->end = o->base + o->size;
	w->n++;
	return 0;
}

/*
 * n_units of address space, steps random maps (two in three) and unmaps
 * of 1 .. short_len units (one in four: long_len).  512 units give tens
 * of objects; 16 Ki units with short ranges give thousands, so the
 * table's blocks split, merge and empty (objblocks.c).
 */
static void
test_random(size_t n_units, int steps, size_t short_len, size_t long_len,
	    unsigned seed)
{
	struct objtab *t = objtab_new(0);
	uint64_t birth = 0;

	units = n_units;
	memset(oracle, 0, sizeof(oracle));
	srand(seed);
	for (int step = 0; step < steps; step++) {
		int p = rand() % 2;
		size_t a = (size_t)rand() % units;
		size_t len = 1 + (size_t)rand() %
			     (rand() % 4 ? short_len : long_len);

		if (a + len > units)
			len = units - a;
		if (rand() % 3) {
			struct obj o = { .base = BASE + a * UNIT,
					 .size = len * UNIT, .site = 0,
					 .tid = p, .birth = ++birth };

			check_eq_i64(objtab_map(t, 100 + p, &o), 0);
			for (size_t i = a; i < a + len; i++)
				oracle[p][i] = birth;
		} else {
			objtab_unmap(t, 100 + p, BASE + a * UNIT, len * UNIT);
			for (size_t i = a; i < a + len; i++)
				oracle[p][i] = 0;
		}
		if (step % 97 == 0 || step == steps - 1) {
			if (!compare(t, 100, oracle[0]) ||
			    !compare(t, 101, oracle[1]))
				break;
			check_eq_u64(objtab_count(t),
				     oracle_runs(oracle[0]) +
				     oracle_runs(oracle[1]));
		}
	}
	/* Overlap lists the objects a range cuts, in order. */
	{
		struct obj out[4];
		size_t n = objtab_overlap(t, 100, BASE, units * UNIT, out, 4);

		check_eq_u64(n, oracle_runs(oracle[0]));
		for (size_t i = 1; i < 4 && i < n; i++)
			check(out[i - 1].base + out[i - 1].size <= out[i].base);
		/* A length that wraps reaches the top of the address space:
		 * the same objects from BASE on. */
		check_eq_u64(objtab_overlap(t, 100, BASE, UINT64_MAX, out, 4),
			     n);
	}
	/* Every object once, each pid's ascending and disjoint. */
	{
		struct walk w = { .pid = -1 };

		check_eq_i64(objtab_foreach(t, walk_one, &w), 0);
		check_eq_u64(w.n, objtab_count(t));
		check(!w.bad);
	}
	/* Objects born before the midpoint of pid 101 end, the rest stay. */
	objtab_drop_older(t, 101, birth / 2);
	for (size_t i = 0; i < units; i++)
		if (oracle[1][i] < birth / 2)
			oracle[1][i] = 0;
	check(compare(t, 101, oracle[1]));
	objtab_drop_pid(t, 100);
	check_eq_u64(objtab_count(t), oracle_runs(oracle[1]));
	check(objtab_find(t, 100, BASE) == NULL);
	objtab_free(t);
}

/* Split keeps both halves with the old site; reuse gets the new one. */
static void
test_split_reuse(void)
{
	struct objtab *t = objtab_new(2);
	struct obj a = { .base = 0x10000, .size = 0x10000, .site = 1,
			 .birth = 1 };
	struct obj b = { .base = 0x14000, .size = 0x1000, .site = 2,
			 .birth = 2 };
	const struct obj *x;

	check_eq_i64(objtab_map(t, 1, &a), 0);
	objtab_unmap(t, 1, 0x14000, 0x1000);
	check_eq_u64(objtab_count(t), 2);
	x = objtab_find(t, 1, 0x15000);
	check(x && x->site == 1 && x->base == 0x15000 && x->size == 0xb000);
	check(objtab_find(t, 1, 0x14000) == NULL);
	/* Full: the third object is not kept and is counted. */
	check_eq_i64(objtab_map(t, 1, &b), -ENOSPC);
	check_eq_u64(objtab_untracked(t), 1);
	/* Mapping over the left half ends it first, so it fits. */
	b.base = 0x10000;
	b.size = 0x4000;
	check_eq_i64(objtab_map(t, 1, &b), 0);
	x = objtab_find(t, 1, 0x10000);
	check(x && x->site == 2);
	b.size = 0;
	check_eq_i64(objtab_map(t, 1, &b), -EINVAL);
	/* exec at time 2: objects born before end, later ones stay. */
	objtab_drop_older(t, 1, 2);
	check_eq_u64(objtab_count(t), 1);
	check(objtab_find(t, 1, 0x15000) == NULL);
	check(objtab_find(t, 1, 0x10000) != NULL);
	objtab_free(t);
}

static void
test_sites(void)
{
	struct objtab *t = objtab_new(0);
	const char *c1[] = { "main+0x10", "__libc_start_call_main+0x7a" };
	const char *c2[] = { "main+0x20", NULL };
	int64_t i1 = objtab_site_intern(t, "make_table+0x1c", c1, 2);
	int64_t i2 = objtab_site_intern(t, "make_table+0x1c", c2, 2);
	int64_t i3 = objtab_site_intern(t, "make_table+0x1c", c1, 2);

	check(i1 >= 0 && i2 >= 0);
	check(i1 != i2);
	check_eq_i64(i3, i1);
	check_eq_str(objtab_site(t, (uint32_t)i2)->callers[0], "main+0x20");
	check(objtab_site(t, (uint32_t)i2)->callers[1] == NULL);
	for (int i = 0; i < 300; i++) {
		char name[32];

		snprintf(name, sizeof(name), "f%d+0x1", i);
		check_eq_i64(objtab_site_intern(t, name, NULL, 0), i + 2);
	}
	check_eq_i64(objtab_site_intern(t, "f7+0x1", NULL, 0), 9);
	check_eq_u64(objtab_n_sites(t), 302);
	objtab_free(t);
}

int
main(void)
{
	test_random(512, 4000, 16, 200, 18);
	test_random(UNITS, 60000, 2, 64, 19);
	test_split_reuse();
	test_sites();
	return test_result();
}
