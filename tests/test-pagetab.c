/*
 * Page table: lookups across pids, lazy interval reset, incremental growth
 * (checked with pagetab_check at every stage), the max_pages cap, reset,
 * and pagetab_topk against a brute-force sort of the whole table.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagetab.h"
#include "testlib.h"

#define PTEST_SHIFT	12

struct ptest_rng {
	uint64_t s;
};

/* splitmix64: deterministic per seed, good enough to scatter test data. */
static uint64_t
ptest_rand(struct ptest_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t
ptest_below(struct ptest_rng *r, uint64_t n)
{
	return n ? ptest_rand(r) % n : 0;
}

static uint64_t
ptest_addr(uint64_t page)
{
	return page << PTEST_SHIFT;
}

static bool
ptest_migrating(const struct pagetab *t)
{
	/* Two arrays are mapped only while the old one drains; the table's
	 * own struct is far smaller than a page. */
	return pagetab_bytes(t) > pagetab_capacity(t) *
				  sizeof(struct page_entry) + 4096;
}

/* Keys of the growth test: pages repeat across pids. */
static int32_t
ptest_growth_pid(size_t i)
{
	return (int32_t)(i % 5);
}

static uint64_t
ptest_growth_page(size_t i)
{
	return i / 5 * 3 + 1;
}

/*
 * Mid-migration, keys inserted so far must be found whichever array holds
 * them, and absent keys must not be, including those whose home slot lies
 * in the part of the old array already given back.
 */
static size_t
ptest_growth_lookups(struct pagetab *t, size_t inserted,
		     struct ptest_rng *r)
{
	size_t bad = 0;

	for (int k = 0; k < 200; k++) {
		size_t j = ptest_below(r, inserted);
		struct page_entry *e;

		e = pagetab_find(t, ptest_growth_pid(j), ptest_growth_page(j));
		if (!e || e->total != j)
			bad++;
		if (pagetab_find(t, ptest_growth_pid(j),
				 ptest_growth_page(j) + 1))
			bad++;
		j = inserted + ptest_below(r, inserted);
		if (pagetab_find(t, ptest_growth_pid(j), ptest_growth_page(j)))
			bad++;
	}
	return bad;
}

/* Every key inserted so far is found with its value. */
static size_t
ptest_growth_all(struct pagetab *t, size_t inserted)
{
	size_t bad = 0;

	for (size_t j = 0; j < inserted; j++) {
		struct page_entry *e;

		e = pagetab_find(t, ptest_growth_pid(j), ptest_growth_page(j));
		if (!e || e->total != j)
			bad++;
	}
	return bad;
}

static void
ptest_basic(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	struct page_entry *a, *b, *c;
	bool ins = false;

	check(t != NULL);
	if (!t)
		return;
	check_eq_u64(pagetab_page_shift(t), PTEST_SHIFT);
	check_eq_u64(pagetab_count(t), 0);
	check(pagetab_find(t, 1, 5) == NULL);

	a = pagetab_get(t, 1, 0x5123, &ins);
	check(a != NULL && ins);
	if (!a)
		goto out;
	check_eq_u64(a->page, 5);
	check_eq_i64(a->pid, 1);
	check_eq_i64(a->node, PAGE_NODE_UNQUERIED);
	check_eq_u64(a->epoch, pagetab_epoch(t));
	check_eq_u64(a->loads + a->stores + a->other + a->total, 0);
	a->loads++;
	a->total++;

	/* Another address in the same page: same entry, not inserted. */
	b = pagetab_get(t, 1, 0x5fff, &ins);
	check(b == a && !ins);
	/* Same page number in another pid is a separate entry. */
	c = pagetab_get(t, 2, 0x5000, &ins);
	check(c != NULL && ins);
	if (!c)
		goto out;
	check(c != pagetab_find(t, 1, 5));
	c->stores += 3;
	c->total += 3;
	check_eq_u64(pagetab_count(t), 2);

	a = pagetab_find(t, 1, 5);
	c = pagetab_find(t, 2, 5);
	check(a && c);
	if (a && c) {
		check_eq_u64(a->loads, 1);
		check_eq_u64(c->stores, 3);
		check_eq_u64(pagetab_interval_samples(t, a), 1);
		check_eq_u64(pagetab_interval_samples(t, c), 3);
	}
	check(pagetab_find(t, 3, 5) == NULL);
	check(pagetab_find(t, 1, 6) == NULL);
	/* pid -1 (no task) and page 0 are ordinary keys. */
	a = pagetab_get(t, -1, 0, &ins);
	check(a != NULL && ins);
	check(pagetab_find(t, -1, 0) == a);
	check_eq_u64(pagetab_count(t), 3);
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
	uint32_t first;

	check(t != NULL);
	if (!t)
		return;
	first = pagetab_epoch(t);
	e = pagetab_get(t, 7, ptest_addr(100), NULL);
	if (!check(e != NULL))
		goto out;
	e->loads = 4;
	e->stores = 2;
	e->other = 1;
	e->local = 5;
	e->remote = 2;
	e->total = 7;
	check_eq_u64(pagetab_interval_samples(t, e), 7);

	pagetab_next_interval(t);
	check_eq_u64(pagetab_epoch(t), first + 1);
	e = pagetab_find(t, 7, 100);
	if (!check(e != NULL))
		goto out;
	check_eq_u64(pagetab_interval_samples(t, e), 0);
	/* find leaves the stale counters and epoch alone. */
	check_eq_u64(e->epoch, first);
	check_eq_u64(e->loads, 4);

	e = pagetab_get(t, 7, ptest_addr(100), NULL);
	if (!check(e != NULL))
		goto out;
	check_eq_u64(e->epoch, first + 1);
	check_eq_u64(e->loads + e->stores + e->other, 0);
	check_eq_u64(e->local + e->remote, 0);
	check_eq_u64(e->total, 7);
	e->stores++;
	check_eq_u64(pagetab_interval_samples(t, e), 1);
out:
	pagetab_free(t);
}

/*
 * Key i is (ptest_growth_pid(i), ptest_growth_page(i)) with total i.
 * Check after every insert while the table is small, then at every
 * capacity change and at points through each migration.
 */
static void
ptest_growth(void)
{
	const size_t n = 300000;
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	struct ptest_rng r = { 99 };
	size_t cap, doublings = 0, mid_checks = 0, released = 0, bad = 0;
	size_t bytes;

	check(t != NULL);
	if (!t)
		return;
	cap = pagetab_capacity(t);
	bytes = pagetab_bytes(t);
	for (size_t i = 0; i < n; i++) {
		bool ins = false;
		struct page_entry *e;

		e = pagetab_get(t, ptest_growth_pid(i),
				ptest_addr(ptest_growth_page(i)), &ins);
		if (!e || !ins) {
			bad++;
			continue;
		}
		e->total = i;
		/* A piece of the old array just went: the keys around the
		 * migration front are the ones a wrong cut would lose. */
		if (pagetab_bytes(t) < bytes && pagetab_capacity(t) == cap &&
		    ptest_migrating(t)) {
			released++;
			bad += ptest_growth_all(t, i + 1);
		}
		bytes = pagetab_bytes(t);
		if (pagetab_capacity(t) != cap) {
			check_eq_u64(pagetab_capacity(t), cap * 2);
			cap = pagetab_capacity(t);
			doublings++;
			check(ptest_migrating(t));
			check_eq_i64(pagetab_check(t), 0);
		} else if (i < 5000 || (ptest_migrating(t) && i % 997 == 0)) {
			if (ptest_migrating(t)) {
				mid_checks++;
				bad += ptest_growth_lookups(t, i + 1, &r);
			}
			if (pagetab_check(t) != 0)
				bad++;
		}
		/* Load limit 0.7. */
		if (pagetab_count(t) * 10 > pagetab_capacity(t) * 7)
			bad++;
	}
	check_eq_u64(bad, 0);
	check(doublings >= 10);
	check(mid_checks > 10);
	check(released > 10);
	check_eq_u64(pagetab_count(t), n);
	check_eq_i64(pagetab_check(t), 0);
	check(pagetab_bytes(t) >= pagetab_capacity(t) *
				   sizeof(struct page_entry));

	for (size_t i = 0; i < n; i++) {
		struct page_entry *e;

		e = pagetab_find(t, ptest_growth_pid(i), ptest_growth_page(i));
		if (!e || e->total != i)
			bad++;
		/* Pages between keys and other pids stay absent. */
		if (pagetab_find(t, ptest_growth_pid(i),
				 ptest_growth_page(i) + 1))
			bad++;
		if (pagetab_find(t, ptest_growth_pid(i) + 5,
				 ptest_growth_page(i)))
			bad++;
	}
	check_eq_u64(bad, 0);

	/* Re-getting every key inserts nothing. */
	for (size_t i = 0; i < n; i += 7) {
		bool ins = true;

		if (!pagetab_get(t, ptest_growth_pid(i),
				 ptest_addr(ptest_growth_page(i)), &ins) || ins)
			bad++;
	}
	check_eq_u64(bad, 0);
	check_eq_u64(pagetab_count(t), n);
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
		uint64_t page = e->page;
		int32_t pid = e->pid;
		int rc = 0;

		/* Some other key hashes to another home slot. */
		for (int32_t q = 1000; q < 1100 && rc == 0; q++) {
			e->pid = q;
			rc = pagetab_check(t);
		}
		check_eq_i64(rc, -EINVAL);
		e->pid = pid;
		e->page = page;
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
	/* The cap bounds capacity too: no growth past what 1000 needs. */
	check(pagetab_capacity(t) <= 2048);
	pagetab_free(t);
}

static void
ptest_reset(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	size_t cap, bad = 0;
	uint64_t p = 0;

	check(t != NULL);
	if (!t)
		return;
	/* Stop halfway through a migration to reset both arrays. */
	while (p < 100000 && !(p > 1000 && ptest_migrating(t)))
		pagetab_get(t, 1, ptest_addr(p++), NULL);
	check(ptest_migrating(t));
	cap = pagetab_capacity(t);
	pagetab_reset(t);
	check_eq_u64(pagetab_count(t), 0);
	check_eq_u64(pagetab_capacity(t), cap);
	check(!ptest_migrating(t));
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

	/* A large array is emptied by dropping its pages. */
	for (uint64_t q = 0; q < 200000; q++)
		pagetab_get(t, 2, ptest_addr(q), NULL);
	pagetab_reset(t);
	check_eq_u64(pagetab_count(t), 0);
	check_eq_i64(pagetab_check(t), 0);
	check(pagetab_find(t, 2, 12345) == NULL);
	pagetab_free(t);
}

struct ptest_all {
	struct page_entry *v;
	size_t n;
};

static int
ptest_collect(struct page_entry *e, void *ctx)
{
	struct ptest_all *all = ctx;

	all->v[all->n++] = *e;
	return 0;
}

static int
ptest_stop_at_3(struct page_entry *e, void *ctx)
{
	size_t *seen = ctx;

	return ++*seen == 3 ? 42 : 0;
}

/* Reference key, written independently of pagetab.c. */
static uint64_t
ptest_key(const struct page_entry *e, enum sort_key key, uint32_t epoch)
{
	bool cur = e->epoch == epoch;

	if (key == SORT_SAMPLES)
		return cur ? (uint64_t)e->loads + e->stores + e->other : 0;
	if (key == SORT_TOTAL)
		return e->total;
	if (key == SORT_LOADS)
		return cur ? e->loads : 0;
	if (key == SORT_STORES)
		return cur ? e->stores : 0;
	return e->weight_n == 0 ? 0 : e->weight_sum / e->weight_n;
}

struct ptest_sort_ctx {
	enum sort_key key;
	uint32_t epoch;
};

static int
ptest_cmp(const void *pa, const void *pb, void *pctx)
{
	const struct page_entry *a = pa, *b = pb;
	const struct ptest_sort_ctx *ctx = pctx;
	uint64_t ka = ptest_key(a, ctx->key, ctx->epoch);
	uint64_t kb = ptest_key(b, ctx->key, ctx->epoch);

	if (ka != kb)
		return ka > kb ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->page != b->page)
		return a->page < b->page ? -1 : 1;
	return 0;
}

static bool
ptest_same(const struct page_entry *a, const struct page_entry *b)
{
	return a->page == b->page && a->pid == b->pid &&
	       a->node == b->node && a->flags == b->flags &&
	       a->epoch == b->epoch && a->loads == b->loads &&
	       a->stores == b->stores && a->other == b->other &&
	       a->local == b->local && a->remote == b->remote &&
	       a->total == b->total && a->weight_sum == b->weight_sum &&
	       a->weight_n == b->weight_n;
}

/* Compares pagetab_topk with a full sort of every entry for every key. */
static size_t
ptest_topk_compare(struct pagetab *t, size_t k, size_t *compared)
{
	size_t n = pagetab_count(t), bad = 0, got, want;
	struct ptest_all all = { calloc(n + 1, sizeof(*all.v)), 0 };
	struct page_entry *out = calloc(k + 1, sizeof(*out));
	struct page_entry *ref = calloc(n + 1, sizeof(*ref));

	if (!all.v || !out || !ref) {
		bad++;
		goto out;
	}
	pagetab_foreach(t, ptest_collect, &all);
	if (all.n != n)
		bad++;
	for (int key = 0; key < SORT__COUNT; key++) {
		struct ptest_sort_ctx ctx = { key, pagetab_epoch(t) };

		want = 0;
		for (size_t i = 0; i < all.n; i++) {
			struct page_entry e = all.v[i];

			if (ptest_key(&e, key, ctx.epoch) == 0)
				continue;
			if (e.epoch != ctx.epoch)
				e.loads = e.stores = e.other = e.local =
					e.remote = 0;
			ref[want++] = e;
		}
		qsort_r(ref, want, sizeof(*ref), ptest_cmp, &ctx);
		if (want > k)
			want = k;
		got = pagetab_topk(t, key, k, out);
		if (got != want) {
			fprintf(stderr, "key %d k %zu: got %zu want %zu\n",
				key, k, got, want);
			bad++;
			continue;
		}
		for (size_t i = 0; i < got; i++)
			if (!ptest_same(&out[i], &ref[i]))
				bad++;
		*compared += got;
	}
out:
	free(all.v);
	free(out);
	free(ref);
	return bad;
}

/*
 * Random tables over three intervals: few pids and small counter ranges
 * so keys tie often; some entries go stale, some have zero keys.
 */
static void
ptest_topk_random(void)
{
	size_t bad = 0, compared = 0, migrating = 0;

	for (uint64_t seed = 1; seed <= 60; seed++) {
		struct ptest_rng r = { seed };
		size_t n = seed <= 3 ? seed - 1 : ptest_below(&r, 3000);
		struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
		size_t ks[] = { 1, 10, n + 5, 1 + ptest_below(&r, n + 1) };

		if (!t) {
			bad++;
			continue;
		}
		for (int interval = 0; interval < 3; interval++) {
			for (size_t i = 0; i < n; i++) {
				int32_t pid = (int32_t)ptest_below(&r, 4) - 1;
				uint64_t page = ptest_below(&r, n + 1);
				struct page_entry *e;

				e = pagetab_get(t, pid, ptest_addr(page), NULL);
				if (!e) {
					bad++;
					continue;
				}
				e->loads += ptest_below(&r, 3);
				e->stores += ptest_below(&r, 3);
				e->other += ptest_below(&r, 2);
				e->total += ptest_below(&r, 4);
				e->local = ptest_below(&r, 5);
				e->flags = ptest_below(&r, 3);
				if (ptest_below(&r, 2)) {
					e->weight_sum += ptest_below(&r, 40);
					e->weight_n += 1;
				}
			}
			pagetab_next_interval(t);
			n = n / 2;
		}
		if (ptest_migrating(t))
			migrating++;
		for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
			bad += ptest_topk_compare(t, ks[i], &compared);
		pagetab_free(t);
	}
	check_eq_u64(bad, 0);
	check(compared > 10000);
	check(migrating > 0);
}

/* Equal keys come out by (pid, page) ascending; zero keys never do. */
static void
ptest_topk_ties(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	struct page_entry out[8];
	static const struct { int32_t pid; uint64_t page; uint32_t loads; }
	in[] = {
		{ 5, 9, 2 }, { 5, 3, 2 }, { -1, 7, 2 }, { 2, 100, 2 },
		{ 3, 1, 0 }, { 1, 1, 7 },
	};
	size_t got;

	check(t != NULL);
	if (!t)
		return;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		struct page_entry *e;

		e = pagetab_get(t, in[i].pid, ptest_addr(in[i].page), NULL);
		if (!check(e != NULL))
			continue;
		e->loads = in[i].loads;
		e->total = in[i].loads ? 10 : 0;
	}
	got = pagetab_topk(t, SORT_LOADS, 8, out);
	check_eq_u64(got, 5);
	if (got == 5) {
		check_eq_i64(out[0].pid, 1);
		check_eq_i64(out[1].pid, -1);
		check_eq_i64(out[2].pid, 2);
		check_eq_i64(out[3].pid, 5);
		check_eq_u64(out[3].page, 3);
		check_eq_i64(out[4].pid, 5);
		check_eq_u64(out[4].page, 9);
	}
	/* Latency: no weights yet, so nothing qualifies. */
	check_eq_u64(pagetab_topk(t, SORT_LATENCY, 8, out), 0);
	check_eq_u64(pagetab_topk(t, SORT_LOADS, 0, out), 0);

	/* After the interval ends: stale for interval keys, still ranked by
	 * total, and the copies carry zeroed interval counters. */
	pagetab_next_interval(t);
	check_eq_u64(pagetab_topk(t, SORT_SAMPLES, 8, out), 0);
	check_eq_u64(pagetab_topk(t, SORT_LOADS, 8, out), 0);
	got = pagetab_topk(t, SORT_TOTAL, 2, out);
	check_eq_u64(got, 2);
	if (got == 2) {
		check_eq_i64(out[0].pid, -1);
		check_eq_i64(out[1].pid, 1);
		check_eq_u64(out[0].loads + out[1].loads, 0);
		check_eq_u64(out[0].total, 10);
	}
	/* The table itself still holds the old counters. */
	check_eq_u64(pagetab_find(t, 1, 1)->loads, 7);
	pagetab_free(t);
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

int
main(void)
{
	ptest_basic();
	ptest_epoch();
	ptest_growth();
	ptest_check_detects();
	ptest_max_pages();
	ptest_reset();
	ptest_topk_random();
	ptest_topk_ties();
	ptest_foreach();
	return test_result();
}
