/*
 * Page table, growth and top-K: growth one subtable at a time (checked
 * with pagetab_check all along, with the memory a page costs), batched
 * lookups whose batch makes subtables grow, and pagetab_topk against a
 * brute-force sort of the whole table.  The rest is in test-pagetab.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "pagetab-test.h"
#include "pagetab.h"
#include "testlib.h"

/*
 * Key i is (ptest_growth_pid(i), ptest_growth_page(i)) with total i.
 * Checks after every insert while the table is small, then at every
 * capacity change, and the memory per page once the table is large: the
 * issue's bounds are 32 bytes on average and 48 at worst.
 */
static void
ptest_growth(void)
{
	const size_t n = 300000;
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	size_t cap, growths = 0, bad = 0, samples = 0;
	double per_page, worst = 0, sum = 0;

	check(t != NULL);
	if (!t)
		return;
	cap = pagetab_capacity(t);
	for (size_t i = 0; i < n; i++) {
		bool ins = false;
		struct page_entry *e;

		e = pagetab_get(t, ptest_growth_pid(i),
				ptest_addr(ptest_growth_page(i)), &ins);
		if (!e || !ins) {
			bad++;
			continue;
		}
		/* A total per page, below the carry: the bounds are for the
		 * slots, and a page past the carry also has a side-map entry
		 * (the model check in test-pagetab.c covers those). */
		pagetab_add_counts(t, e, &(struct page_counts){
			.total = i % PAGETAB_TOTAL_HALF });
		if (pagetab_capacity(t) != cap) {
			cap = pagetab_capacity(t);
			growths++;
			if (i < 3000 || growths % 256 == 0)
				bad += pagetab_check(t) != 0;
		} else if (i < 2000 && pagetab_check(t) != 0) {
			bad++;
		}
		/* Load limit 7/8 in every subtable. */
		if (pagetab_count(t) * 8 > pagetab_capacity(t) * 7)
			bad++;
		if (i >= 65536 && i % 100 == 0) {
			per_page = (double)pagetab_bytes(t) / (double)(i + 1);
			sum += per_page;
			samples++;
			if (per_page > worst)
				worst = per_page;
		}
	}
	check_eq_u64(bad, 0);
	check(growths >= 1024 * 10);
	check_eq_u64(pagetab_count(t), n);
	check_eq_i64(pagetab_check(t), 0);
	check(worst <= 48);
	check(samples && sum / (double)samples <= 32);
	if (worst > 48 || sum / (double)samples > 32)
		fprintf(stderr, "bytes/page: worst %.1f, average %.1f\n",
			worst, sum / (double)samples);

	for (size_t i = 0; i < n; i++) {
		struct page_entry *e;

		e = pagetab_find(t, ptest_growth_pid(i), ptest_growth_page(i));
		if (!e || ptest_read(t, e).total != i % PAGETAB_TOTAL_HALF)
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

/*
 * One batch of ptest_get_many: the entries pagetab_get_many (or
 * pagetab_get_samples) returned from t against pagetab_get on ref, then
 * counted through the returned pointers.  Returns the mismatches.
 */
static size_t
ptest_many_compare(struct pagetab *t, struct pagetab *ref,
		   const int32_t *pid, const uint64_t *addr,
		   struct page_entry *const *out, const bool *ins, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		bool rins = false;
		struct page_entry *e = pagetab_get(ref, pid[i], addr[i],
						   &rins);

		if (!e != !out[i] || rins != ins[i])
			bad++;
		if (out[i] && (pagetab_entry_pid(out[i]) != pid[i] ||
			       pagetab_entry_page(out[i]) !=
			       addr[i] >> PTEST_SHIFT))
			bad++;
	}
	/* Count through the returned pointers: all must be live. */
	for (size_t i = 0; i < n; i++)
		if (out[i])
			pagetab_count1(t, out[i], SAMPLE_LOAD);
	for (size_t i = 0; i < n; i++) {
		struct page_entry *e = pagetab_find(t, pid[i],
					addr[i] >> PTEST_SHIFT);
		struct page_entry *re = pagetab_find(ref, pid[i],
					addr[i] >> PTEST_SHIFT);

		if (out[i] && e != out[i])
			bad++;
		if (re)
			pagetab_count1(ref, re, SAMPLE_LOAD);
	}
	/* The interval's counts too: a page's first lookup of an
	 * interval must start them from 0, as pagetab_get does. */
	for (size_t i = 0; i < n; i++) {
		struct page_entry *re = pagetab_find(ref, pid[i],
					addr[i] >> PTEST_SHIFT);
		struct page_counts ct, cr;

		if (!out[i] || !re)
			continue;
		pagetab_read(t, out[i], &ct);
		pagetab_read(ref, re, &cr);
		if (ct.loads != cr.loads || ct.total != cr.total)
			bad++;
	}
	return bad;
}

/*
 * pagetab_get_many against one-by-one pagetab_get on a twin table: same
 * entries, same `inserted`, and every returned pointer still valid after
 * batches whose inserts made subtables grow; repeats within a batch and
 * untrackable keys included.  Every other batch that fits in one call
 * goes through pagetab_get_samples (the aggregation's way) instead.
 */
static void
ptest_get_many(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	struct pagetab *ref = pagetab_new(PTEST_SHIFT, 0);
	struct ptest_rng r = { 7 };
	size_t bad = 0, moved = 0, via_samples = 0;

	if (!check(t && ref))
		goto out;
	for (int round = 0; round < 400; round++) {
		struct sample smp[PAGETAB_MANY];
		int32_t pid[300];
		uint64_t addr[300];
		struct page_entry *out[300];
		bool ins[300];
		size_t n = 1 + ptest_below(&r, 300);
		size_t cap = pagetab_capacity(t);

		for (size_t i = 0; i < n; i++) {
			pid[i] = (int32_t)ptest_below(&r, 3) -
				 (ptest_below(&r, 50) == 0);
			addr[i] = ptest_addr(ptest_below(&r, 40000)) +
				  ptest_below(&r, 4096);
		}
		if (round % 2 && n <= PAGETAB_MANY) {
			memset(smp, 0, sizeof(smp));
			for (size_t i = 0; i < n; i++) {
				smp[i].pid = pid[i];
				smp[i].addr = addr[i];
			}
			pagetab_get_samples(t, smp, n, out, ins);
			via_samples++;
		} else {
			pagetab_get_many(t, pid, addr, n, out, ins);
		}
		moved += pagetab_capacity(t) != cap;
		bad += ptest_many_compare(t, ref, pid, addr, out, ins, n);
		if (round % 7 == 6) {
			pagetab_next_interval(t);
			pagetab_next_interval(ref);
		}
	}
	check_eq_u64(bad, 0);
	check(moved > 10);
	check(via_samples > 100);
	check_eq_u64(pagetab_count(t), pagetab_count(ref));
	check_eq_i64(pagetab_check(t), 0);
	/* inserted may be NULL. */
	{
		int32_t pid = 1;
		uint64_t addr = 0x1234000;
		struct page_entry *e = NULL;

		pagetab_get_many(t, &pid, &addr, 1, &e, NULL);
		check(e != NULL && e == pagetab_find(t, 1, 0x1234));
	}
out:
	pagetab_free(t);
	pagetab_free(ref);
}

struct ptest_all {
	const struct pagetab *t;
	struct page_info *v;
	size_t n;
};

static int
ptest_collect(struct page_entry *e, void *ctx)
{
	struct ptest_all *all = ctx;
	struct page_info *p = &all->v[all->n++];

	p->pid = pagetab_entry_pid(e);
	p->page = pagetab_entry_page(e);
	p->node = e->node;
	pagetab_read(all->t, e, &p->c);
	return 0;
}

/* Reference key, written independently of pagetab.c. */
static uint64_t
ptest_key(const struct page_info *p, enum sort_key key)
{
	if (key == SORT_SAMPLES)
		return p->c.loads + p->c.stores + p->c.other;
	if (key == SORT_TOTAL)
		return p->c.total;
	if (key == SORT_LOADS)
		return p->c.loads;
	if (key == SORT_STORES)
		return p->c.stores;
	return p->c.weight_n == 0 ? 0 : p->c.weight_sum / p->c.weight_n;
}

static int
ptest_cmp(const void *pa, const void *pb, void *pctx)
{
	const struct page_info *a = pa, *b = pb;
	enum sort_key key = *(const enum sort_key *)pctx;
	uint64_t ka = ptest_key(a, key), kb = ptest_key(b, key);

	if (ka != kb)
		return ka > kb ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->page != b->page)
		return a->page < b->page ? -1 : 1;
	return 0;
}

/* Compares pagetab_topk with a full sort of every entry for every key. */
static size_t
ptest_topk_compare(struct pagetab *t, size_t k, size_t *compared)
{
	size_t n = pagetab_count(t), bad = 0, got, want;
	struct ptest_all all = { t, calloc(n + 1, sizeof(*all.v)), 0 };
	struct page_info *out = calloc(k + 1, sizeof(*out));
	struct page_info *ref = calloc(n + 1, sizeof(*ref));

	if (!all.v || !out || !ref) {
		bad++;
		goto out;
	}
	pagetab_foreach(t, ptest_collect, &all);
	if (all.n != n)
		bad++;
	for (int key = 0; key < SORT__COUNT; key++) {
		enum sort_key sk = key;

		want = 0;
		for (size_t i = 0; i < all.n; i++)
			if (ptest_key(&all.v[i], sk) != 0)
				ref[want++] = all.v[i];
		qsort_r(ref, want, sizeof(*ref), ptest_cmp, &sk);
		if (want > k)
			want = k;
		got = pagetab_topk(t, sk, k, out);
		if (got != want) {
			fprintf(stderr, "key %d k %zu: got %zu want %zu\n",
				key, k, got, want);
			bad++;
			continue;
		}
		for (size_t i = 0; i < got; i++)
			if (memcmp(&out[i].c, &ref[i].c, sizeof(ref[i].c)) ||
			    out[i].pid != ref[i].pid ||
			    out[i].page != ref[i].page ||
			    out[i].node != ref[i].node)
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
 * so keys tie often; some entries go stale, some have zero keys, a few
 * counts pass their fields.
 */
static void
ptest_topk_random(void)
{
	size_t bad = 0, compared = 0;

	for (uint64_t seed = 1; seed <= 60; seed++) {
		struct ptest_rng r = { seed };
		size_t n = seed <= 3 ? seed - 1 : ptest_below(&r, 3000);
		struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
		size_t ks[] = { 1, 10, n + 5, 1 + ptest_below(&r, n + 1) };

		if (!t || pagetab_set_ext(t, seed % 2 ? PAGETAB_EXT_WEIGHT |
					  PAGETAB_EXT_LOCALITY : 0) < 0) {
			bad++;
			pagetab_free(t);
			continue;
		}
		for (int interval = 0; interval < 3; interval++) {
			for (size_t i = 0; i < n; i++) {
				int32_t pid = (int32_t)ptest_below(&r, 4);
				uint64_t page = ptest_below(&r, n + 1);
				struct page_entry *e;
				bool big = ptest_below(&r, 500) == 0;

				e = pagetab_get(t, pid, ptest_addr(page), NULL);
				if (!e) {
					bad++;
					continue;
				}
				ptest_add(t, e, ptest_below(&r, 3) +
					  (big ? 70000 : 0),
					  ptest_below(&r, 3),
					  ptest_below(&r, 2));
				pagetab_add_locality(t, e,
						     ptest_below(&r, 2));
				e->flags = (uint16_t)ptest_below(&r, 3);
				e->node = (int16_t)ptest_below(&r, 3) - 1;
				if (ptest_below(&r, 2))
					pagetab_add_weight(t, e,
						ptest_below(&r, 40));
			}
			pagetab_next_interval(t);
			n = n / 2;
		}
		for (size_t i = 0; i < ARRAY_SIZE(ks); i++)
			bad += ptest_topk_compare(t, ks[i], &compared);
		pagetab_free(t);
	}
	check_eq_u64(bad, 0);
	check(compared > 10000);
}

/* Equal keys come out by (pid, page) ascending; zero keys never do. */
static void
ptest_topk_ties(void)
{
	struct pagetab *t = pagetab_new(PTEST_SHIFT, 0);
	struct page_info out[8];
	static const struct { int32_t pid; uint64_t page; uint32_t loads; }
	in[] = {
		{ 5, 9, 2 }, { 5, 3, 2 }, { 0, 7, 2 }, { 2, 100, 2 },
		{ 3, 1, 0 }, { 1, 1, 7 },
	};
	size_t got;

	check(t != NULL);
	if (!t)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(in); i++) {
		struct page_entry *e;
		struct page_counts c = { .loads = in[i].loads };

		e = pagetab_get(t, in[i].pid, ptest_addr(in[i].page), NULL);
		if (!check(e != NULL))
			continue;
		c.total = in[i].loads ? 10 : 0;
		pagetab_add_counts(t, e, &c);
	}
	got = pagetab_topk(t, SORT_LOADS, 8, out);
	check_eq_u64(got, 5);
	if (got == 5) {
		check_eq_i64(out[0].pid, 1);
		check_eq_i64(out[1].pid, 0);
		check_eq_i64(out[2].pid, 2);
		check_eq_i64(out[3].pid, 5);
		check_eq_u64(out[3].page, 3);
		check_eq_i64(out[4].pid, 5);
		check_eq_u64(out[4].page, 9);
	}
	/* Latency: no weight extension, so nothing qualifies. */
	check_eq_u64(pagetab_topk(t, SORT_LATENCY, 8, out), 0);
	check_eq_u64(pagetab_topk(t, SORT_LOADS, 0, out), 0);

	/* After the interval ends: stale for interval keys, still ranked by
	 * total, and the copies carry zero interval counts. */
	pagetab_next_interval(t);
	check_eq_u64(pagetab_topk(t, SORT_SAMPLES, 8, out), 0);
	check_eq_u64(pagetab_topk(t, SORT_LOADS, 8, out), 0);
	got = pagetab_topk(t, SORT_TOTAL, 2, out);
	check_eq_u64(got, 2);
	if (got == 2) {
		check_eq_i64(out[0].pid, 0);
		check_eq_i64(out[1].pid, 1);
		check_eq_u64(out[0].c.loads + out[1].c.loads, 0);
		check_eq_u64(out[0].c.total, 10);
	}
	pagetab_free(t);
}

int
main(void)
{
	ptest_growth();
	ptest_get_many();
	ptest_topk_random();
	ptest_topk_ties();
	return test_result();
}
