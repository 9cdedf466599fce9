/*
 * Page table: lookups across pids, keys that cannot be tracked, lazy
 * interval reset and the sweep that keeps 8-bit epochs honest, the
 * extensions, the max_pages cap, reset, foreach, and probe lengths for
 * realistic key sets (the hash).  Counts past their fields are in
 * test-pagetab-counts.c; growth, batched lookups and pagetab_topk in
 * test-pagetab-growth.c.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "pagetab-test.h"
#include "pagetab.h"
#include "pagetab_int.h"
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

	for (size_t k = 0; k < ARRAY_SIZE(sets); k++) {
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
	ptest_ext();
	ptest_check_detects();
	ptest_max_pages();
	ptest_reset();
	ptest_foreach();
	ptest_probe_lengths();
	return test_result();
}
