/*
 * Page table: lookups across pids, keys that cannot be tracked, lazy
 * interval reset and the sweep that keeps 8-bit epochs honest, counts
 * past their fields (kinds, total, local/remote carried; each at its
 * edges), a model check of all counts over many intervals, the
 * extensions, the max_pages cap, reset, foreach, and probe lengths for
 * realistic key sets (the hash).  Growth, batched lookups and
 * pagetab_topk are in test-pagetab-growth.c.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagetab.h"
#include "pagetab_int.h"
#include "pagetab-test.h"
#include "testlib.h"

static void
ptest_basic(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	struct page_entry *a, *b, *c;
	bool ins = false;

	check(t != NULL);
	if (!t)
		return;
	check_eq_u64(sizeof(struct page_entry), 24);
	check_eq_u64(pagetab_page_shift(t), PTEST_SHIFT);
	check_eq_u64(pagetab_count(t), 0);
	check(pagetab_find(t, 1, 5) == NULL);

	a = pagetab_get(t, 1, 0x5123, &ins);
	check(a != NULL && ins);
	if (!a)
		goto out;
	check_eq_u64(pagetab_entry_page(a), 5);
	check_eq_i64(pagetab_entry_pid(a), 1);
	check_eq_i64(a->node, PAGE_NODE_UNQUERIED);
	check_eq_u64(a->ivl & PAGETAB_IVL_EPOCH, (uint8_t)pagetab_epoch(t));
	check_eq_u64(ptest_read(t, a).total, 0);
	pagetab_count1(t, a, SAMPLE_LOAD);

	/* Another address in the same page: same entry, not inserted. */
	b = pagetab_get(t, 1, 0x5fff, &ins);
	check(b == a && !ins);
	/* Same page number in another pid is a separate entry. */
	c = pagetab_get(t, 2, 0x5000, &ins);
	check(c != NULL && ins);
	if (!c)
		goto out;
	check(c != pagetab_find(t, 1, 5));
	for (int i = 0; i < 3; i++)
		pagetab_count1(t, c, SAMPLE_STORE);
	check_eq_u64(pagetab_count(t), 2);

	a = pagetab_find(t, 1, 5);
	c = pagetab_find(t, 2, 5);
	check(a && c);
	if (a && c) {
		check_eq_u64(ptest_read(t, a).loads, 1);
		check_eq_u64(ptest_read(t, a).total, 1);
		check_eq_u64(ptest_read(t, c).stores, 3);
		check_eq_u64(pagetab_interval_samples(t, a), 1);
		check_eq_u64(pagetab_interval_samples(t, c), 3);
	}
	check(pagetab_find(t, 3, 5) == NULL);
	check(pagetab_find(t, 1, 6) == NULL);
	/* Page 0 and pid 0 are ordinary keys; the largest pid and page fit. */
	a = pagetab_get(t, 0, 0, &ins);
	check(a != NULL && ins);
	check(pagetab_find(t, 0, 0) == a);
	a = pagetab_get(t, PAGETAB_MAX_PID, ptest_addr(PAGETAB_PAGE_MASK),
			&ins);
	check(a != NULL && ins);
	if (a) {
		check_eq_i64(pagetab_entry_pid(a), PAGETAB_MAX_PID);
		check_eq_u64(pagetab_entry_page(a), PAGETAB_PAGE_MASK);
	}
	/* pid -1 (no task), pids and pages past the key: not tracked. */
	check(pagetab_get(t, -1, 0x1000, &ins) == NULL && !ins);
	check(pagetab_get(t, PAGETAB_MAX_PID + 1, 0x1000, NULL) == NULL);
	check(pagetab_get(t, 1, ptest_addr(PAGETAB_PAGE_MASK + 1), NULL) ==
	      NULL);
	check(pagetab_find(t, -1, 1) == NULL);
	check_eq_u64(pagetab_count(t), 4);
	check_eq_i64(pagetab_check(t), 0);
	/* NULL inserted pointer is allowed. */
	check(pagetab_get(t, 9, 0x9000, NULL) != NULL);
out:
	pagetab_free(t);
	pagetab_free(NULL);
}

static void
ptest_epoch(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	struct page_entry *e;
	struct page_counts c;
	uint32_t first;

	check(t != NULL);
	if (!t || !check(pagetab_set_ext(t, PAGETAB_EXT_LOCALITY) == 0))
		goto out;
	first = pagetab_epoch(t);
	e = pagetab_get(t, 7, ptest_addr(100), NULL);
	if (!check(e != NULL))
		goto out;
	ptest_add(t, e, 4, 2, 1);
	for (int i = 0; i < 7; i++)
		pagetab_add_locality(t, e, i < 5);
	check_eq_u64(pagetab_interval_samples(t, e), 7);
	c = ptest_read(t, e);
	check_eq_u64(c.local, 5);
	check_eq_u64(c.remote, 2);

	pagetab_next_interval(t);
	check_eq_u64(pagetab_epoch(t), first + 1);
	e = pagetab_find(t, 7, 100);
	if (!check(e != NULL))
		goto out;
	/* find leaves the entry alone; it reads as zero this interval. */
	check_eq_u64(e->ivl & PAGETAB_IVL_EPOCH, (uint8_t)first);
	c = ptest_read(t, e);
	check_eq_u64(c.loads + c.stores + c.other + c.local + c.remote, 0);
	check_eq_u64(c.total, 7);

	e = pagetab_get(t, 7, ptest_addr(100), NULL);
	if (!check(e != NULL))
		goto out;
	check_eq_u64(e->ivl & PAGETAB_IVL_EPOCH, (uint8_t)(first + 1));
	c = ptest_read(t, e);
	check_eq_u64(c.loads + c.stores + c.other + c.local + c.remote, 0);
	check_eq_u64(c.total, 7);
	pagetab_count1(t, e, SAMPLE_STORE);
	check_eq_u64(pagetab_interval_samples(t, e), 1);
out:
	pagetab_free(t);
}

/*
 * An entry counted once and never again must read zero for its interval
 * counts across the 8-bit epoch wrap (and the 16-bit one): the sweep
 * zeroes them in time.
 */
static void
ptest_epoch_wrap(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	size_t bad = 0;

	if (!check(t != NULL))
		return;
	for (uint64_t p = 0; p < 3000; p++) {
		struct page_entry *e = pagetab_get(t, 1, ptest_addr(p), NULL);

		if (e)
			ptest_add(t, e, 1, 2, 3);
	}
	for (uint32_t i = 0; i < 65536 + 70; i++) {
		pagetab_next_interval(t);
		if (i < 65530 && i % 4096 != 0)
			continue;
		for (uint64_t p = 0; p < 3000; p++) {
			struct page_entry *e = pagetab_find(t, 1, p);

			if (!e || pagetab_interval_samples(t, e) != 0 ||
			    ptest_read(t, e).total != 6)
				bad++;
		}
	}
	check_eq_u64(bad, 0);
	check_eq_i64(pagetab_check(t), 0);
	pagetab_free(t);
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
	for (int i = 0; i < 70000; i++)
		pagetab_count1(t, e, SAMPLE_STORE);
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
	for (int i = 0; i < 66000; i++)
		pagetab_count1(t, e, SAMPLE_LOAD);
	c = ptest_read(t, e);
	check_eq_u64(c.loads, 66000);
	check_eq_u64(c.stores, 0);
	check_eq_u64(c.total, 5000136001ull);
	/* Stores past half their field again: the last interval's base
	 * (70000) must not count. */
	for (int i = 0; i < 40000; i++)
		pagetab_count1(t, e, SAMPLE_STORE);
	c = ptest_read(t, e);
	check_eq_u64(c.stores, 40000);
	check_eq_u64(c.loads, 66000);
	check_eq_u64(c.total, 5000176001ull);
	for (int i = 0; i < 40000; i++)
		pagetab_count1(t, e, SAMPLE_STORE);
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

/* Extensions added to a table that holds pages keep what it holds. */
static void
ptest_ext(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	struct page_counts c;
	size_t bad = 0;

	if (!check(t != NULL))
		return;
	check_eq_u64(pagetab_ext(t), 0);
	for (uint64_t p = 0; p < 5000; p++) {
		struct page_entry *e = pagetab_get(t, 2, ptest_addr(p), NULL);

		if (!e) {
			bad++;
			continue;
		}
		e->node = (int16_t)(p % 3);
		e->flags = (uint16_t)p;
		ptest_add(t, e, p % 7, 1, 0);
		/* No extension: both are no-ops. */
		pagetab_add_locality(t, e, true);
		pagetab_add_weight(t, e, 100);
	}
	check_eq_i64(pagetab_set_ext(t, PAGETAB_EXT_WEIGHT), 0);
	check_eq_u64(pagetab_ext(t), PAGETAB_EXT_WEIGHT);
	check_eq_i64(pagetab_check(t), 0);
	for (uint64_t p = 0; p < 5000; p++) {
		struct page_entry *e = pagetab_find(t, 2, p);

		if (!e) {
			bad++;
			continue;
		}
		c = ptest_read(t, e);
		if (e->node != (int16_t)(p % 3) || e->flags != (uint16_t)p ||
		    c.loads != p % 7 || c.stores != 1 || c.weight_n != 0 ||
		    c.local != 0)
			bad++;
		pagetab_add_weight(t, e, 10 + p);
		pagetab_add_weight(t, e, 20 + p);
	}
	check_eq_i64(pagetab_set_ext(t, PAGETAB_EXT_LOCALITY), 0);
	check_eq_u64(pagetab_ext(t), PAGETAB_EXT_WEIGHT | PAGETAB_EXT_LOCALITY);
	/* Asking again changes nothing. */
	check_eq_i64(pagetab_set_ext(t, PAGETAB_EXT_LOCALITY), 0);
	for (uint64_t p = 0; p < 5000; p++) {
		struct page_entry *e = pagetab_get(t, 2, ptest_addr(p), NULL);

		if (!e) {
			bad++;
			continue;
		}
		pagetab_add_locality(t, e, p % 2);
		c = ptest_read(t, e);
		if (c.weight_n != 2 || c.weight_sum != 30 + 2 * p ||
		    c.local != p % 2 || c.remote != 1 - p % 2 ||
		    c.loads != p % 7)
			bad++;
	}
	/* Growth moves the extensions along. */
	for (uint64_t p = 5000; p < 60000; p++)
		if (!pagetab_get(t, 2, ptest_addr(p), NULL))
			bad++;
	for (uint64_t p = 0; p < 5000; p++) {
		struct page_entry *e = pagetab_find(t, 2, p);

		c = e ? ptest_read(t, e) : (struct page_counts){ 0 };
		if (!e || c.weight_sum != 30 + 2 * p || c.local != p % 2)
			bad++;
	}
	check_eq_u64(bad, 0);
	check_eq_i64(pagetab_check(t), 0);
	pagetab_free(t);
}

/* pagetab_check must notice an entry that its probe chain cannot reach. */
static void
ptest_check_detects(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	struct page_entry *e = NULL;

	check(t != NULL);
	if (!t)
		return;
	for (uint64_t p = 0; p < 100; p++)
		e = pagetab_get(t, 1, ptest_addr(p), NULL);
	check_eq_i64(pagetab_check(t), 0);
	if (e) {
		uint64_t key = e->key;
		int rc = 0;

		/* Some other key hashes to another subtable or home. */
		for (uint64_t q = 1000; q < 1100 && rc == 0; q++) {
			e->key = (key & ~PAGETAB_PAGE_MASK) | q;
			rc = pagetab_check(t);
		}
		check_eq_i64(rc, -EINVAL);
		e->key = key;
		check_eq_i64(pagetab_check(t), 0);
	}
	pagetab_free(t);
}

static void
ptest_max_pages(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 1000);
	size_t bad = 0;

	check(t != NULL);
	if (!t)
		return;
	for (uint64_t p = 0; p < 1000; p++)
		if (!pagetab_get(t, 3, ptest_addr(p), NULL))
			bad++;
	check_eq_u64(bad, 0);
	check_eq_u64(pagetab_count(t), 1000);
	check(pagetab_get(t, 3, ptest_addr(1000), NULL) == NULL);
	check(pagetab_get(t, 4, ptest_addr(0), NULL) == NULL);
	/* Existing pages are still served. */
	check(pagetab_get(t, 3, ptest_addr(999), NULL) != NULL);
	check_eq_u64(pagetab_count(t), 1000);
	check_eq_i64(pagetab_check(t), 0);
	pagetab_free(t);
}

static void
ptest_reset(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	size_t bad = 0;
	uint64_t p;

	check(t != NULL);
	if (!t)
		return;
	for (p = 0; p < 100000; p++)
		pagetab_get(t, 1, ptest_addr(p), NULL);
	pagetab_reset(t);
	check_eq_u64(pagetab_count(t), 0);
	check_eq_u64(pagetab_capacity(t), 0);
	check_eq_i64(pagetab_check(t), 0);
	check(pagetab_find(t, 1, 0) == NULL);
	check(pagetab_find(t, 1, p - 1) == NULL);
	for (uint64_t q = 0; q < p; q += 2) {
		bool ins = false;

		if (!pagetab_get(t, 1, ptest_addr(q), &ins) || !ins)
			bad++;
	}
	check_eq_u64(bad, 0);
	check_eq_u64(pagetab_count(t), (p + 1) / 2);
	check(pagetab_find(t, 1, 1) == NULL);
	check_eq_i64(pagetab_check(t), 0);
	pagetab_free(t);
}

static int
ptest_stop_at_3(struct page_entry *e, void *ctx)
{
	size_t *seen = ctx;

	return ++*seen == 3 ? 42 : 0;
}

static void
ptest_foreach(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	size_t seen = 0;

	check(t != NULL);
	if (!t)
		return;
	for (uint64_t p = 0; p < 10; p++)
		pagetab_get(t, 1, ptest_addr(p), NULL);
	check_eq_i64(pagetab_foreach(t, ptest_stop_at_3, &seen), 42);
	check_eq_u64(seen, 3);
	pagetab_free(t);
}

/*
 * Mean slots read to find a key (1 at its home slot), over every entry:
 * what the hash's spread comes to under linear probing.
 */
static double
ptest_mean_probes(const struct pagetab *t)
{
	uint64_t sum = 0, n = 0;

	for (unsigned j = 0; j < PAGETAB_SUBS; j++) {
		const struct pagetab_sub *s = &t->subs[j];

		for (uint32_t i = 0; i < s->cap; i++) {
			struct page_entry *e = pagetab_at(s->slots, t->stride,
							  i);
			size_t home;

			if (!e->key)
				continue;
			home = pagetab_home(s->cap, pagetab_hash(e->key));
			sum += (i + s->cap - home) % s->cap + 1;
			n++;
		}
	}
	return n ? (double)sum / (double)n : 0;
}

/*
 * Key sets a live run sees: one process's heap page after page (4 KiB
 * and 2 MiB pages), the same pages in many processes (forked workers,
 * a whole-system run), and many processes at 1 GiB granularity where
 * each has a few small page numbers.  At the table's load (7/8 at most)
 * a random hash needs about 3 slots a lookup; a hash whose home slot
 * shares its bits with the subtable's clusters those sets into runs of
 * hundreds.
 */
static void
ptest_probe_lengths(void)
{
	static const struct {
		const char *name;
		unsigned shift;
		uint32_t pids, pages;
		uint64_t first;		/* page number of the first page */
	} sets[] = {
		{ "one pid, 4 KiB heap", 12, 1, 1u << 19, 0x555555554ull },
		{ "one pid, 2 MiB pages", 21, 1, 1u << 19, 0x2aaaaull },
		{ "16 pids, same pages", 12, 16, 1u << 15, 0x555555554ull },
		{ "8192 pids x 64 pages", 12, 8192, 64, 0x555555554ull },
		{ "65536 pids, 1 GiB", 30, 65536, 8, 0x1fcull },
	};

	for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
		struct pagetab *t = pagetab_new(sets[k].shift, 0);
		size_t missing = 0;
		double probes;

		check(t != NULL);
		if (!t)
			return;
		for (uint32_t p = 0; p < sets[k].pids; p++)
			for (uint64_t i = 0; i < sets[k].pages; i++)
				if (!pagetab_get(t, (int32_t)(300 + p),
						 (sets[k].first + i) <<
						 sets[k].shift, NULL))
					missing++;
		check_eq_u64(missing, 0);
		probes = ptest_mean_probes(t);
		if (probes > 6.0) {
			fprintf(stderr, "probe lengths: %s: %.1f slots a "
				"lookup\n", sets[k].name, probes);
			check(probes <= 6.0);
		}
		pagetab_free(t);
	}
}

int
main(void)
{
	ptest_basic();
	ptest_epoch();
	ptest_epoch_wrap();
	ptest_overflow();
	ptest_carry_edges();
	ptest_model();
	ptest_ext();
	ptest_check_detects();
	ptest_max_pages();
	ptest_reset();
	ptest_foreach();
	ptest_probe_lengths();
	return test_result();
}
