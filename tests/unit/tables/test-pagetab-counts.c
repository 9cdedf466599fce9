/*
 * Page table counts past their fields: kinds, total and local/remote
 * carried into the side map, exact at every edge of their fields, a
 * model check of all counts over many intervals (8-bit epoch wraps
 * among them), and top-K seeing the carried counts.  Lookups, intervals,
 * extensions and the hash are in test-pagetab.c; growth, batched lookups
 * and top-K in test-pagetab-growth.c.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagetab.h"
#include "pagetab_int.h"
#include "pagetab-test.h"
#include "testlib.h"

/* n samples of one kind, one at a time (the per-sample path). */
static void
ptest_count(struct pagetab *t, struct page_entry *e, unsigned kind, int n)
{
	for (int i = 0; i < n; i++)
		pagetab_count1(t, e, kind);
}

/* Counts past 65535 (interval) and 2^32 (total) stay exact. */
static void
ptest_overflow(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	struct page_entry *e;
	struct page_counts c;

	if (!check(t != NULL))
		return;
	e = pagetab_get(t, 3, ptest_addr(3), NULL);
	if (!check(e != NULL))
		goto out;
	ptest_count(t, e, SAMPLE_STORE, 70000);
	pagetab_count1(t, e, SAMPLE_LOAD);
	c = ptest_read(t, e);
	check_eq_u64(c.stores, 70000);
	check_eq_u64(c.loads, 1);
	check_eq_u64(c.total, 70001);
	check_eq_u64(pagetab_interval_samples(t, e), 70001);
	ptest_add(t, e, 0, 0, 5000000000ull);
	c = ptest_read(t, e);
	check_eq_u64(c.other, 5000000000ull);
	check_eq_u64(c.total, 5000070001ull);
	/* Others entries stay small and unaffected. */
	check(pagetab_get(t, 3, ptest_addr(4), NULL) != NULL);
	check_eq_u64(ptest_read(t, pagetab_find(t, 3, 4)).total, 0);

	/* The next interval starts from zero, and can overflow again. */
	pagetab_next_interval(t);
	e = pagetab_get(t, 3, ptest_addr(3), NULL);
	if (!check(e != NULL))
		goto out;
	c = ptest_read(t, e);
	check_eq_u64(c.loads + c.stores + c.other, 0);
	check_eq_u64(c.total, 5000070001ull);
	ptest_count(t, e, SAMPLE_LOAD, 66000);
	c = ptest_read(t, e);
	check_eq_u64(c.loads, 66000);
	check_eq_u64(c.stores, 0);
	check_eq_u64(c.total, 5000136001ull);
	/* Stores past half their field again: the last interval's base
	 * (70000) must not count. */
	ptest_count(t, e, SAMPLE_STORE, 40000);
	c = ptest_read(t, e);
	check_eq_u64(c.stores, 40000);
	check_eq_u64(c.loads, 66000);
	check_eq_u64(c.total, 5000176001ull);
	ptest_count(t, e, SAMPLE_STORE, 40000);
	check_eq_u64(ptest_read(t, e).stores, 80000);
	/* Sorting sees the wide counts. */
	{
		struct page_info top[2];

		check_eq_u64(pagetab_topk(t, SORT_LOADS, 2, top), 1);
		check_eq_u64(top[0].c.loads, 66000);
		check_eq_u64(pagetab_topk(t, SORT_TOTAL, 2, top), 1);
		check_eq_u64(top[0].c.total, 5000216001ull);
		check_eq_u64(pagetab_topk(t, SORT_SAMPLES, 2, top), 1);
		check_eq_u64(top[0].c.stores, 80000);
	}
	/* Weight sums past 2^32 too. */
	check_eq_i64(pagetab_set_ext(t, PAGETAB_EXT_WEIGHT), 0);
	e = pagetab_find(t, 3, 3);
	if (!check(e != NULL))
		goto out;
	pagetab_add_weight(t, e, 3000000000ull);
	pagetab_add_weight(t, e, 3000000000ull);
	pagetab_add_weight(t, e, 3);
	c = ptest_read(t, e);
	check_eq_u64(c.weight_sum, 6000000003ull);
	check_eq_u64(c.weight_n, 3);
	check_eq_u64(c.total, 5000216001ull);
	{
		struct page_info top[2];

		check_eq_u64(pagetab_topk(t, SORT_LATENCY, 2, top), 1);
		check_eq_u64(top[0].c.weight_sum, 6000000003ull);
	}
	check(pagetab_bytes(t) > 0);
out:
	pagetab_free(t);
}

/*
 * Every carried count at its edges: a field brought to 0, just below half,
 * half, max - 2 and max - 1, then adds that end one short of max, at
 * max, one past it and far past the whole range, then a sample at a
 * time.  Each read must be the exact sum, the interval's samples their
 * sum, the next interval must start the interval counts at zero with
 * total kept, and top-K must rank the page above one a count behind it.
 */
static const char *const ptest_edge_names[6] = {
	"loads", "stores", "other", "total", "local", "remote",
};

static uint64_t
ptest_edge_get(const struct page_counts *c, int f)
{
	const uint64_t v[6] = { c->loads, c->stores, c->other, c->total,
				c->local, c->remote };

	return v[f];
}

/* Adds n to field f alone (total alone for f == 3). */
static void
ptest_edge_add(struct pagetab *t, struct page_entry *e, int f, uint64_t n)
{
	struct page_counts c = { 0 };
	uint64_t *v[6] = { &c.loads, &c.stores, &c.other, &c.total,
			   &c.local, &c.remote };

	*v[f] = n;
	pagetab_add_counts(t, e, &c);
}

/* One sample through the per-sample path into field f. */
static void
ptest_edge_one(struct pagetab *t, struct page_entry *e, int f)
{
	if (f < 3)
		pagetab_count1(t, e, (unsigned)f);
	else if (f == 3)
		ptest_edge_add(t, e, 3, 1);
	else
		pagetab_locality_inc(t, e, f == 4);
}

static size_t
ptest_edge_check(struct pagetab *t, int32_t pid, int32_t rival, int f,
		 uint64_t want, uint64_t total)
{
	static const enum sort_key keys[4] = {
		SORT_LOADS, SORT_STORES, SORT_SAMPLES, SORT_TOTAL,
	};
	struct page_entry *e = pagetab_find(t, pid, 1), *b;
	struct page_counts c;
	struct page_info top[1] = { { .pid = -1 } };
	size_t bad = 0;

	if (!e)
		return 1;
	c = ptest_read(t, e);
	bad += ptest_edge_get(&c, f) != want;
	bad += f != 3 && c.total != total;
	bad += pagetab_interval_samples(t, e) !=
	       c.loads + c.stores + c.other;
	for (int g = 0; g < 6; g++)
		bad += g != f && g != 3 && ptest_edge_get(&c, g) != 0;
	if (bad)
		fprintf(stderr, "carry edges: %s read %" PRIu64 " want %"
			PRIu64 "\n", ptest_edge_names[f],
			ptest_edge_get(&c, f), want);
	/* A rival one behind in the same key, in a pid of its own. */
	if (f < 4 && want >= 2) {
		b = pagetab_get(t, rival, ptest_addr(1), NULL);
		if (!b)
			return bad + 1;
		ptest_edge_add(t, b, f, want - 1);
		if (f < 3)
			ptest_edge_add(t, b, 3, want - 1);
		if (pagetab_topk(t, keys[f], 1, top) != 1 ||
		    top[0].pid != pid ||
		    ptest_edge_get(&top[0].c, f) != want) {
			fprintf(stderr, "carry edges: top-K by %s chose pid %"
				PRId32 " over %" PRIu64 "\n",
				ptest_edge_names[f], top[0].pid, want);
			bad++;
		}
	}
	return bad;
}

/* One case: field f brought to s0, then add, then a sample at a time;
 * the count problems found. */
static size_t
ptest_carry_edge(int f, uint64_t s0, uint64_t add, uint64_t half)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	const int32_t pid = 5;
	struct page_entry *e;
	struct page_counts c;
	uint64_t want = s0 + add + half + 2;
	size_t bad = 0;

	if (!t || pagetab_set_ext(t, PAGETAB_EXT_LOCALITY) != 0 ||
	    !(e = pagetab_get(t, pid, ptest_addr(1), NULL))) {
		pagetab_free(t);
		return 1;
	}
	for (int step = 0; step < 2; step++) {
		uint64_t n = step ? add : s0;

		if (!n)
			continue;
		ptest_edge_add(t, e, f, n);
		if (f < 3)
			ptest_edge_add(t, e, 3, n);
	}
	/* Right after the add (often a field just carried, at half). */
	bad += ptest_edge_check(t, pid, pid + 1, f, s0 + add,
				f <= 3 ? s0 + add : 0);
	/* Then a sample at a time, across a carry. */
	e = pagetab_find(t, pid, 1);
	for (uint64_t k = 0; e && k < half + 2; k++)
		ptest_edge_one(t, e, f);
	bad += ptest_edge_check(t, pid, pid + 2, f, want, f <= 3 ? want : 0);
	/* The next interval: interval counts from zero, total kept. */
	pagetab_next_interval(t);
	e = pagetab_get(t, pid, ptest_addr(1), NULL);
	if (!e) {
		pagetab_free(t);
		return bad + 1;
	}
	c = ptest_read(t, e);
	bad += c.loads || c.stores || c.other || c.local || c.remote ||
	       c.total != (f <= 3 ? want : 0);
	pagetab_count1(t, e, SAMPLE_LOAD);
	pagetab_locality_inc(t, e, true);
	c = ptest_read(t, e);
	bad += c.loads != 1 || c.local != 1 ||
	       c.total != (f <= 3 ? want : 0) + 1;
	pagetab_free(t);
	return bad;
}

static void
ptest_carry_edges(void)
{
	static const uint64_t halfs[6] = {
		PAGETAB_KIND_HALF, PAGETAB_KIND_HALF, PAGETAB_KIND_HALF,
		PAGETAB_TOTAL_HALF, PAGETAB_LOC_HALF, PAGETAB_LOC_HALF,
	};
	static const uint64_t maxs[6] = {
		PAGETAB_KIND_MAX, PAGETAB_KIND_MAX, PAGETAB_KIND_MAX,
		PAGETAB_TOTAL_MAX, PAGETAB_LOC_MAX, PAGETAB_LOC_MAX,
	};
	size_t bad = 0, cases = 0;

	for (int f = 0; f < 6; f++) {
		uint64_t h = halfs[f], m = maxs[f];
		const uint64_t starts[5] = { 0, h - 1, h, m - 2, m - 1 };

		for (int si = 0; si < 5; si++) {
			uint64_t s0 = starts[si];
			const uint64_t adds[6] = {
				m - s0 - 1, m - s0, m - s0 + 1, 1, 2,
				5 * m + 3,
			};

			for (int ai = 0; ai < 6; ai++, cases++)
				bad += ptest_carry_edge(f, s0, adds[ai], h);
		}
	}
	check_eq_u64(cases, 6 * 5 * 6);
	check_eq_u64(bad, 0);
}

/*
 * Model check: a reference that keeps every count at full width, against
 * the table over 700 intervals (the 8-bit epoch wraps twice).  Pages are
 * touched at random, some in bursts that carry local/remote/total past
 * their fields (often in one interval and not the next, so a base of an
 * old interval must not count), some left idle for exactly 256 or 512
 * intervals; every page is read back after every interval.
 */
#define PTEST_MODEL_PAGES	48

struct ptest_ref {
	uint64_t kinds[3], local, remote;	/* interval `epoch` */
	uint64_t total;
	uint32_t epoch;
	bool present;
};

static void
ptest_ref_touch(struct ptest_ref *r, uint32_t epoch)
{
	if (r->present && r->epoch == epoch)
		return;
	memset(r->kinds, 0, sizeof(r->kinds));
	r->local = r->remote = 0;
	r->epoch = epoch;
	r->present = true;
}

/* Whether page p is touched in interval i. */
static bool
ptest_model_due(struct ptest_rng *r, uint64_t p, uint32_t i)
{
	switch (p % 8) {
	case 0:			/* idle for exactly 256 intervals */
		return i % 256 == p % 5;
	case 1:			/* 512 */
		return i % 512 == 7;
	case 2:			/* every interval */
		return true;
	default:
		return ptest_below(r, 4) == 0;
	}
}

static size_t
ptest_model_one(struct pagetab *t, struct ptest_ref *ref, struct ptest_rng *r,
		uint64_t p, bool loc)
{
	uint32_t epoch = pagetab_epoch(t);
	struct page_entry *e = pagetab_get(t, (int32_t)(p % 3),
					   ptest_addr(p), NULL);
	unsigned op = (unsigned)ptest_below(r, 8);
	uint64_t n = ptest_below(r, 200);

	if (!e)
		return 1;
	ptest_ref_touch(ref, epoch);
	/* Bursts: one page in 8 gets thousands of samples. */
	if (ptest_below(r, 8) == 0)
		n += 1000 + ptest_below(r, 9000);
	for (uint64_t k = 0; k < n && op < 6; k++) {
		unsigned kind = (unsigned)ptest_below(r, 3);
		bool local = op < 3 ? ptest_below(r, 4) != 0 :
				      ptest_below(r, 4) == 0;

		pagetab_count1(t, e, kind);
		ref->kinds[kind]++;
		ref->total++;
		if (loc) {
			pagetab_locality_inc(t, e, local);
			*(local ? &ref->local : &ref->remote) += 1;
		} else {
			pagetab_add_locality(t, e, local);	/* no-op */
		}
	}
	if (op >= 6) {
		/* Folding adds (granularity): any size, even huge. */
		struct page_counts c = {
			.loads = ptest_below(r, 3000),
			.stores = op == 7 ? 70000 : ptest_below(r, 10),
			.other = ptest_below(r, 2),
			.local = ptest_below(r, 5000),
			.remote = ptest_below(r, 3) * 2047,
		};

		c.total = c.loads + c.stores + c.other +
			  (ptest_below(r, 50) == 0 ? 5000000000ull : 0);
		pagetab_add_counts(t, e, &c);
		ref->kinds[SAMPLE_LOAD] += c.loads;
		ref->kinds[SAMPLE_STORE] += c.stores;
		ref->kinds[SAMPLE_OTHER] += c.other;
		ref->total += c.total;
		if (loc) {
			ref->local += c.local;
			ref->remote += c.remote;
		}
	}
	return 0;
}

/* Every page read without a touch: the model's counts, interval ones
 * only when current. */
static size_t
ptest_model_compare(struct pagetab *t, const struct ptest_ref *ref)
{
	uint32_t epoch = pagetab_epoch(t);
	size_t bad = 0;

	for (uint64_t p = 0; p < PTEST_MODEL_PAGES; p++) {
		const struct ptest_ref *m = &ref[p];
		struct page_entry *e = pagetab_find(t, (int32_t)(p % 3), p);
		bool cur = m->present && m->epoch == epoch;
		struct page_counts c;

		if (!m->present) {
			bad += e != NULL;
			continue;
		}
		if (!e) {
			bad++;
			continue;
		}
		c = ptest_read(t, e);
		if (c.loads != (cur ? m->kinds[SAMPLE_LOAD] : 0) ||
		    c.stores != (cur ? m->kinds[SAMPLE_STORE] : 0) ||
		    c.other != (cur ? m->kinds[SAMPLE_OTHER] : 0) ||
		    c.local != (cur ? m->local : 0) ||
		    c.remote != (cur ? m->remote : 0) || c.total != m->total) {
			if (bad == 0)
				fprintf(stderr, "model: interval %u page %"
					PRIu64 ": local %" PRIu64 "/%" PRIu64
					" remote %" PRIu64 "/%" PRIu64
					" total %" PRIu64 "/%" PRIu64 "\n",
					epoch, p, c.local, cur ? m->local : 0,
					c.remote, cur ? m->remote : 0,
					c.total, m->total);
			bad++;
		}
	}
	return bad;
}

static void
ptest_model(void)
{
	for (int loc = 0; loc < 2; loc++) {
		struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
		struct ptest_ref *ref = calloc(PTEST_MODEL_PAGES,
					       sizeof(*ref));
		struct ptest_rng r = { 7 + (uint64_t)loc };
		size_t bad = 0, wide = 0;

		if (!check(t && ref) || (loc && !check(pagetab_set_ext(t,
				PAGETAB_EXT_LOCALITY) == 0)))
			goto next;
		for (uint32_t i = 0; i < 700; i++) {
			for (uint64_t p = 0; p < PTEST_MODEL_PAGES; p++)
				if (ptest_model_due(&r, p, i))
					bad += ptest_model_one(t, &ref[p], &r,
							       p, loc);
			bad += ptest_model_compare(t, ref);
			for (uint64_t p = 0; p < PTEST_MODEL_PAGES; p++)
				wide += ref[p].local >= 4096 ||
					ref[p].remote >= 4096;
			pagetab_next_interval(t);
			bad += ptest_model_compare(t, ref);
		}
		check_eq_u64(bad, 0);
		/* The bursts did carry local/remote past 12 bits. */
		check(!loc || wide > 100);
		check_eq_i64(pagetab_check(t), 0);
next:
		free(ref);
		pagetab_free(t);
	}
}

int
main(void)
{
	ptest_overflow();
	ptest_carry_edges();
	ptest_model();
	return test_result();
}
