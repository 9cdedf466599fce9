/*
 * Page table: lookups across pids, keys that cannot be tracked, lazy
 * interval reset and the sweep that keeps 16-bit epochs honest, growth
 * one subtable at a time (checked with pagetab_check all along, with the
 * memory a page costs), batched lookups whose batch makes subtables grow,
 * counts past their u16/u32 fields, the extensions, the max_pages cap,
 * reset, and pagetab_topk against a brute-force sort of the whole table.
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

static struct page_counts
ptest_read(const struct pagetab *t, const struct page_entry *e)
{
	struct page_counts c;

	pagetab_read(t, e, &c);
	return c;
}

/* Adds loads, stores, other (this interval; total grows by their sum). */
static void
ptest_add(struct pagetab *t, struct page_entry *e, uint64_t loads,
	  uint64_t stores, uint64_t other)
{
	struct page_counts c = { .loads = loads, .stores = stores,
				 .other = other,
				 .total = loads + stores + other };

	pagetab_add_counts(t, e, &c);
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
	check_eq_u64(a->epoch, (uint16_t)pagetab_epoch(t));
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
	check_eq_u64(e->epoch, (uint16_t)first);
	c = ptest_read(t, e);
	check_eq_u64(c.loads + c.stores + c.other + c.local + c.remote, 0);
	check_eq_u64(c.total, 7);

	e = pagetab_get(t, 7, ptest_addr(100), NULL);
	if (!check(e != NULL))
		goto out;
	check_eq_u64(e->epoch, (uint16_t)(first + 1));
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
 * counts across the 16-bit epoch wrap: the sweep zeroes them in time.
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
		pagetab_add_counts(t, e, &(struct page_counts){ .total = i });
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
		if (!e || ptest_read(t, e).total != i)
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

			if (out[i] && e != out[i])
				bad++;
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
	/* Sorting sees the wide counts. */
	{
		struct page_info top[2];

		check_eq_u64(pagetab_topk(t, SORT_LOADS, 2, top), 1);
		check_eq_u64(top[0].c.loads, 66000);
		check_eq_u64(pagetab_topk(t, SORT_TOTAL, 2, top), 1);
		check_eq_u64(top[0].c.total, 5000136001ull);
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
	check_eq_u64(c.total, 5000136001ull);
	{
		struct page_info top[2];

		check_eq_u64(pagetab_topk(t, SORT_LATENCY, 2, top), 1);
		check_eq_u64(top[0].c.weight_sum, 6000000003ull);
	}
	check(pagetab_bytes(t) > 0);
out:
	pagetab_free(t);
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

static int
ptest_stop_at_3(struct page_entry *e, void *ctx)
{
	size_t *seen = ctx;

	return ++*seen == 3 ? 42 : 0;
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
		for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
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
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
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
	ptest_epoch_wrap();
	ptest_growth();
	ptest_get_many();
	ptest_overflow();
	ptest_ext();
	ptest_check_detects();
	ptest_max_pages();
	ptest_reset();
	ptest_topk_random();
	ptest_topk_ties();
	ptest_foreach();
	return test_result();
}
