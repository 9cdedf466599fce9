#include "config.h"

/*
 * The per-page code sites beside the page table (sitetab.h): exact counts,
 * Space-Saving replacement against a model, home ways, set eviction,
 * folding, the keys the page table cannot hold, and how evenly pages
 * spread over the sets.
 */

#include <stdio.h>

#include "pagetab.h"
#include "sidetab-test.h"
#include "sitetab.h"
#include "testlib.h"

/* Fold 4 KiB pages 0x200..0x3ff into one 2 MiB page, in t once reset. */
static void
stest_sites_fold(struct sitetab *t)
{
	struct sitetab *big = sitetab_new(64);
	struct sitetab_site s[SITETAB_SITES];
	size_t n;

	sitetab_reset(t);
	sitetab_add(t, 7, 0x200, 0xa);
	sitetab_add(t, 7, 0x201, 0xa);
	sitetab_add(t, 7, 0x201, 0xb);
	sitetab_add(t, 7, 0x400, 0xc);
	sitetab_fold(big, t, 9);
	n = sitetab_get(big, 7, 1, s);
	check_eq_u64(n, 2);
	check_eq_u64(s[0].ip, 0xa);
	check_eq_u64(s[0].count, 2);
	check_eq_u64(s[1].ip, 0xb);
	n = sitetab_get(big, 7, 2, s);
	check_eq_u64(n, 1);
	check_eq_u64(s[0].ip, 0xc);
	sitetab_free(big);
}

/* Counts, ties and the Space-Saving replacement in one page's slots;
 * then the same table, reset, folded. */
static void
stest_sites(void)
{
	struct sitetab *t = sitetab_new(64);
	struct sitetab_site s[SITETAB_SITES];
	size_t n;

	check_eq_u64(sitetab_capacity(t), 64);
	for (int i = 0; i < 5; i++)
		sitetab_add(t, 1, 10, 0x100);
	for (int i = 0; i < 3; i++)
		sitetab_add(t, 1, 10, 0x200);
	sitetab_add(t, 1, 10, 0x300);
	sitetab_add(t, 1, 10, 0x400);
	sitetab_add(t, 1, 10, 0);		/* no ip: not recorded */
	n = sitetab_get(t, 1, 10, s);
	check_eq_u64(n, 4);
	check_eq_u64(s[0].ip, 0x100);
	check_eq_u64(s[0].count, 5);
	check_eq_u64(s[1].ip, 0x200);
	check_eq_u64(s[1].count, 3);
	check_eq_u64(s[2].ip, 0x300);	/* ties: lower ip first */
	check_eq_u64(s[3].ip, 0x400);
	/* Full: a newcomer takes the weakest slot (0x300, rank 1) with a
	 * count of its own samples only. */
	sitetab_add(t, 1, 10, 0x500);
	n = sitetab_get(t, 1, 10, s);
	check_eq_u64(n, 4);
	check_eq_u64(s[2].ip, 0x400);
	check_eq_u64(s[3].ip, 0x500);
	check_eq_u64(s[3].count, 1);
	/* An ip with most of the samples always holds a slot. */
	for (int i = 0; i < 100; i++)
		sitetab_add(t, 1, 10, 0x600 + (uint64_t)(i % 7) * 0x10);
	for (int i = 0; i < 60; i++)
		sitetab_add(t, 1, 10, 0x900);
	n = sitetab_get(t, 1, 10, s);
	check(n == 4);
	check_eq_u64(s[0].ip, 0x900);
	check_eq_u64(s[0].count, 60);
	check_eq_u64(sitetab_get(t, 2, 10, s), 0);
	check_eq_u64(sitetab_get(t, 1, 11, s), 0);
	stest_sites_fold(t);
	sitetab_free(t);
}

/* A full set gives up its lightest page, counted. */
static void
stest_sites_evict(void)
{
	struct sitetab *t = sitetab_new(1);	/* one set of SITETAB_WAYS pages */
	struct sitetab_site s[SITETAB_SITES];

	for (uint64_t p = 0; p < SITETAB_WAYS; p++)
		for (uint64_t k = 0; k <= p; k++)
			sitetab_add(t, 3, p, 0x10);
	sitetab_add(t, 3, 99, 0x20);
	check_eq_u64(sitetab_evicted(t), 1);
	check_eq_u64(sitetab_get(t, 3, 0, s), 0);	/* the lightest */
	check_eq_u64(sitetab_get(t, 3, 99, s), 1);
	check_eq_u64(sitetab_get(t, 3, SITETAB_WAYS - 1, s), 1);
	sitetab_free(t);
}

/* A set of SITETAB_WAYS pages of n samples each at one ip. */
static void
stest_heavy_set(struct sitetab *t, int n)
{
	for (uint64_t p = 0; p < SITETAB_WAYS; p++)
		for (int k = 0; k < n; k++)
			sitetab_add(t, 3, p, 0x10 + p);
}

/*
 * A page that comes late, hot, into a full set of pages that were hot
 * earlier keeps a record while cold pages pass through (each evicting
 * one), its count exact: it inherits the weight of the page it displaced
 * (Space-Saving by page).  Without that it is the set's lightest page at
 * once and the next cold page displaces it.
 */
static void
stest_sites_evict_late(void)
{
	struct sitetab *t = sitetab_new(1);	/* one set of SITETAB_WAYS pages */
	struct sitetab_site s[SITETAB_SITES];

	stest_heavy_set(t, 100);
	for (uint64_t i = 0; i < 300; i++) {
		sitetab_add(t, 3, 50, 0x500);
		sitetab_add(t, 3, 1000 + i, 0x600);
	}
	check_eq_u64(sitetab_get(t, 3, 50, s), 1);
	check_eq_u64(s[0].ip, 0x500);
	check_eq_u64(s[0].count, 300);
	/* Each cold page displaced one page, and so did the hot page, once:
	 * it was never displaced itself. */
	check_eq_u64(sitetab_evicted(t), 301);
	/* The last cold page holds a record too, counted from its sample. */
	check_eq_u64(sitetab_get(t, 3, 1299, s), 1);
	check_eq_u64(s[0].count, 1);
	/* The displacements raised the admission bar (src/tables/admit.h);
	 * a clear or reset starts it again. */
	check(t->admit.bar > 0);
	sitetab_clear(t);
	check_eq_u64(t->admit.bar, 0);
	stest_heavy_set(t, 100);
	sitetab_add(t, 3, 50, 0x500);
	check(t->admit.bar > 0);
	sitetab_reset(t);
	check_eq_u64(t->admit.bar, 0);
	sitetab_free(t);
}

/*
 * A page that displaced a heavy one: its sites still compete as in any
 * page (the inherited weight pins no slot), so one early sample at a rare
 * ip gives way to the four ips that take most of its samples.
 */
static void
stest_sites_inherit_slots(void)
{
	struct sitetab *t = sitetab_new(1);	/* one set of SITETAB_WAYS pages */
	struct sitetab_site s[SITETAB_SITES];

	stest_heavy_set(t, 1000);
	sitetab_add(t, 3, 50, 0x999);
	for (int k = 0; k < 100; k++)
		for (uint64_t ip = 0x100; ip <= 0x400; ip += 0x100)
			sitetab_add(t, 3, 50, ip);
	check_eq_u64(sitetab_get(t, 3, 50, s), SITETAB_SITES);
	for (unsigned i = 0; i < SITETAB_SITES; i++) {
		check(s[i].ip != 0x999);
		check(s[i].count >= 99);
	}
	sitetab_free(t);
}

/*
 * Folding (a shard's merge, a coarser granularity) carries each site's
 * own inheritance, not the displaced page's weight its page inherited:
 * that would let a 1-sample site of the source outrank a hot site of
 * the destination.
 */
static void
stest_sites_inherit_fold(void)
{
	struct sitetab *src = sitetab_new(1), *dst = sitetab_new(1024);
	struct sitetab_site s[SITETAB_SITES];
	bool hot = false;

	for (int k = 0; k < 100; k++)
		for (uint64_t ip = 0x100; ip <= 0x400; ip += 0x100)
			sitetab_add(dst, 3, 50, ip);
	stest_heavy_set(src, 1000);
	sitetab_add(src, 3, 50, 0x999);
	for (int k = 0; k < 10; k++)
		sitetab_add(src, 3, 50, 0x100);
	sitetab_fold(dst, src, 0);
	check_eq_u64(sitetab_get(dst, 3, 50, s), SITETAB_SITES);
	for (unsigned i = 0; i < SITETAB_SITES; i++) {
		check(s[i].ip != 0x999);
		if (s[i].ip == 0x100) {
			hot = true;
			check_eq_u64(s[i].count, 110);
		}
	}
	check(hot);
	sitetab_free(src);
	sitetab_free(dst);
}

/*
 * The table is sized to its pages (issue 15): it starts at
 * SITETAB_FIRST_SETS sets, doubles as pages come, keeps every page's
 * sites and counts through each doubling, evicts nothing before its
 * capacity, stays at most half used and within four times its pages,
 * and starts small again when reset.
 */
static void
stest_sites_grow(void)
{
	const size_t cap = 1u << 16, n = cap / 4;
	struct sitetab *t = sitetab_new(cap);
	struct sitetab_site s[SITETAB_SITES];
	size_t bad = 0;

	if (!check(t != NULL))
		return;
	check_eq_u64(sitetab_capacity(t), cap);
	check_eq_u64(sitetab_slots(t), SITETAB_FIRST_SETS * SITETAB_WAYS);
	/* Page i of pid 40 + i % 3: (i % 5) + 1 samples at ip 0x1000 + i,
	 * one at 0x7000 for odd pages. */
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k <= i % 5; k++)
			sitetab_add(t, (int32_t)(40 + i % 3), i, 0x1000 + i);
		if (i & 1)
			sitetab_add(t, (int32_t)(40 + i % 3), i, 0x7000);
	}
	check_eq_u64(sitetab_evicted(t), 0);
	check_eq_u64(sitetab_used(t), n);
	check(sitetab_slots(t) >= 2 * n && sitetab_slots(t) <= 8 * n);
	for (size_t i = 0; i < n; i++) {
		size_t got = sitetab_get(t, (int32_t)(40 + i % 3), i, s);
		size_t want = (i & 1) ? 2 : 1;

		if (got != want || s[0].ip != 0x1000 + i ||
		    s[0].count != i % 5 + 1 ||
		    (want == 2 && (s[1].ip != 0x7000 || s[1].count != 1)))
			bad++;
	}
	if (!check(bad == 0))
		fprintf(stderr, "sitetab grow: %zu of %zu pages wrong\n",
			bad, n);
	sitetab_reset(t);
	check_eq_u64(sitetab_slots(t), SITETAB_FIRST_SETS * SITETAB_WAYS);
	check_eq_u64(sitetab_used(t), 0);
	check_eq_u64(sitetab_get(t, 40, 0, s), 0);
	/* Past its capacity it evicts, and counts it. */
	for (size_t i = 0; i < 2 * cap; i++)
		sitetab_add(t, 41, i, 0x1000);
	check_eq_u64(sitetab_slots(t), cap);
	check(sitetab_evicted(t) >= cap);
	check(sitetab_used(t) <= cap);
	sitetab_free(t);
}

/*
 * Right after a doubling most pages are still in the old table: each is
 * found there, a sample of it moves its set first (one record, exact
 * counts, not a second one in the new table), and a fold reads both.
 */
static void
stest_sites_moving(void)
{
	struct sitetab *t = sitetab_new(1u << 16), *big = sitetab_new(1u << 16);
	struct sitetab_site s[SITETAB_SITES];
	size_t n = 0, bad = 0, slots;

	if (!check(t != NULL && big != NULL))
		goto out;
	slots = sitetab_slots(t);
	while (sitetab_slots(t) == slots && n < (1u << 16))
		sitetab_add(t, 50, 2 * n++, 0x2000);
	check(t->old != NULL);		/* the pages have not all moved */
	for (size_t i = 0; i < n; i++)
		if (sitetab_get(t, 50, 2 * i, s) != 1 || s[0].count != 1)
			bad++;
	/* A second sample of each, in reverse (old sets before the mover
	 * reaches them), and a second ip for even pages. */
	for (size_t i = n; i-- > 0;) {
		sitetab_add(t, 50, 2 * i, 0x2000);
		if (i % 2 == 0)
			sitetab_add(t, 50, 2 * i, 0x3000);
	}
	check_eq_u64(sitetab_used(t), n);
	check_eq_u64(sitetab_evicted(t), 0);
	for (size_t i = 0; i < n; i++)
		if (sitetab_get(t, 50, 2 * i, s) != (i % 2 ? 1u : 2u) ||
		    s[0].ip != 0x2000 || s[0].count != 2)
			bad++;
	if (!check(bad == 0))
		fprintf(stderr, "sitetab moving: %zu wrong of %zu\n", bad, n);
	/* A fold of a table still moving: pages 2i, 2i + 1 -> page i. */
	sitetab_reset(t);
	slots = sitetab_slots(t);
	for (n = 0; sitetab_slots(t) == slots && n < (1u << 16); n++)
		sitetab_add(t, 51, n, 0x2000);
	check(t->old != NULL);
	sitetab_fold(big, t, 1);
	bad = 0;
	for (size_t i = 0; i < n / 2; i++)
		if (sitetab_get(big, 51, i, s) != 1 || s[0].count != 2)
			bad++;
	check_eq_u64(bad, 0);
out:
	sitetab_free(t);
	sitetab_free(big);
}

/* Keys the page table cannot hold are not recorded; its extreme keys
 * are, and survive a fold (which decodes them). */
static void
stest_sites_keys(void)
{
	struct sitetab *t = sitetab_new(64);
	struct sitetab *big = sitetab_new(64);
	struct sitetab_site s[SITETAB_SITES];
	size_t n;

	sitetab_add(t, -1, 5, 0x10);
	sitetab_add(t, 1, PAGETAB_PAGE_MASK + 1, 0x10);
	check_eq_u64(sitetab_get(t, -1, 5, s), 0);
	check_eq_u64(sitetab_get(t, 1, PAGETAB_PAGE_MASK + 1, s), 0);
	for (int i = 0; i < 3; i++)
		sitetab_add(t, PAGETAB_MAX_PID, PAGETAB_PAGE_MASK, 0x20);
	sitetab_fold(big, t, 1);
	n = sitetab_get(big, PAGETAB_MAX_PID, PAGETAB_PAGE_MASK >> 1, s);
	check_eq_u64(n, 1);
	check_eq_u64(s[0].ip, 0x20);
	check_eq_u64(s[0].count, 3);
	sitetab_free(big);
	sitetab_free(t);
	sitetab_free(NULL);
}

/* The Space-Saving rule of sitetab.h, written plainly: the model the
 * table must match sample for sample. */
struct site_model {
	uint64_t ip[SITETAB_SITES];
	uint32_t count[SITETAB_SITES], rank[SITETAB_SITES];
	unsigned used;
};

static void
site_model_add(struct site_model *m, uint64_t ip)
{
	unsigned min = 0;

	for (unsigned i = 0; i < m->used; i++) {
		if (m->ip[i] == ip) {
			m->count[i]++;
			m->rank[i]++;
			return;
		}
	}
	if (m->used < SITETAB_SITES) {
		m->ip[m->used] = ip;
		m->count[m->used] = m->rank[m->used] = 1;
		m->used++;
		return;
	}
	for (unsigned i = 1; i < SITETAB_SITES; i++)
		if (m->rank[i] < m->rank[min])
			min = i;
	m->ip[min] = ip;
	m->count[min] = 1;
	m->rank[min]++;
}

#define SM_PAGES 300
#define SM_HIGH 8

static const uint64_t sm_ip_high[SM_HIGH] = {
	0, 0, 0, UINT64_C(1) << 32, UINT64_C(0x7ffd) << 32,
	UINT64_C(0xffffffff81000000), UINT64_C(1) << 48,
	UINT64_C(0x00ff800000000000),
};

static void
stest_sites_model(void)
{
	static struct site_model m[SM_PAGES];
	struct sitetab *t = sitetab_new(SM_PAGES * 8);	/* no eviction */
	struct sitetab_site s[SITETAB_SITES];
	uint64_t x = 88172645463325252ull;
	bool ok = true;

	for (int i = 0; i < 200000; i++) {
		uint64_t p, ip;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p = (x >> 8) % SM_PAGES;
		/* Skewed: low ips often, up to 12 per page; ips that differ
		 * only above bit 31 (the record keeps those bits apart), in
		 * the kernel half, and past 48 bits (not recorded). */
		ip = 0x1000 + ((x >> 24) % 12) * ((x >> 40) % 3 ? 0 : 1) * 16 +
		     ((x >> 50) % 3) * 16;
		ip += sm_ip_high[(x >> 56) % SM_HIGH];
		sitetab_add(t, (int32_t)(p % 5), p, ip);
		if (sitetab_ip_fits(ip))
			site_model_add(&m[p], ip);
	}
	check_eq_u64(sitetab_evicted(t), 0);
	for (uint64_t p = 0; p < SM_PAGES && ok; p++) {
		size_t n = sitetab_get(t, (int32_t)(p % 5), p, s);

		ok &= check_eq_u64(n, m[p].used);
		for (size_t k = 0; k < n && ok; k++) {
			unsigned j = 0;

			while (j < m[p].used && m[p].ip[j] != s[k].ip)
				j++;
			ok &= check(j < m[p].used);
			ok = ok && check_eq_u64(s[k].count, m[p].count[j]);
		}
	}
	sitetab_free(t);
}

/* n pages of pid 4 with one home way in t (so one set). */
static size_t
stest_set_pages(const struct sitetab *t, uint64_t *pages, size_t n)
{
	size_t home = sitetab_home(t, sitetab_key(4, 0)), k = 0;

	for (uint64_t p = 0; k < n && p < 100000; p++)
		if (sitetab_home(t, sitetab_key(4, p)) == home)
			pages[k++] = p;
	return k;
}

/* Pages sharing a set and a home way: the first to come takes it, and a
 * later page that outweighs it takes it over.  Counts must follow the
 * pages through the swaps (a model of four pages), no page is lost while
 * the set has room, and then the lightest goes. */
static void
stest_sites_home(void)
{
	struct sitetab *t = sitetab_new(64);
	struct sitetab_site s[SITETAB_SITES];
	uint64_t pages[5], n[5] = { 0 };
	uint64_t x = 0x1234567;

	check(stest_set_pages(t, pages, 5) == 5);
	/* Page 0 comes first and sits at home, 1..3 take the other ways;
	 * then all gain weight in turns, page 3 most: it and the others
	 * swap places with the page at home on the way. */
	for (int i = 0; i < 4000; i++) {
		unsigned k;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = i < 4 ? (unsigned)i : (unsigned)(x % 10) % 4;
		if (i >= 4 && x % 3 == 0)
			k = 3;
		sitetab_add(t, 4, pages[k], 0x500 + (x >> 20) % 3 * 16);
		n[k]++;
	}
	check_eq_u64(sitetab_evicted(t), 0);
	/* The heaviest page moved home. */
	check(t->rec[sitetab_home(t, sitetab_key(4, pages[0]))].key ==
	      sitetab_key(4, pages[3]));
	for (unsigned k = 0; k < 4; k++) {
		uint64_t sum = 0;
		size_t m = sitetab_get(t, 4, pages[k], s);

		check_eq_u64(m, 3);
		for (size_t j = 0; j < m; j++)
			sum += s[j].count;
		check_eq_u64(sum, n[k]);
	}
	/* A fifth page: the set's lightest page gives way. */
	{
		unsigned light = 0;

		for (unsigned k = 1; k < 4; k++)
			if (n[k] < n[light])
				light = k;
		sitetab_add(t, 4, pages[4], 0x900);
		check_eq_u64(sitetab_evicted(t), 1);
		check_eq_u64(sitetab_get(t, 4, pages[light], s), 0);
		check_eq_u64(sitetab_get(t, 4, pages[4], s), 1);
	}
	sitetab_free(t);
}

/*
 * Pages spread over the sets: a heap's consecutive pages of one process
 * (4 KiB and 2 MiB pages look alike: small consecutive numbers) and the
 * same few 1 GiB pages of many processes, a quarter of a 256 Ki-page
 * table each (larger than memtop's own, so the spread is judged over
 * many sets).  A set taken from bits 32 up of the product crowds
 * both into a small part of the sets, and most pages lose their sites;
 * hashed evenly, four pages a set never overflow here but for a handful.
 */
static void
stest_sites_spread(void)
{
	const struct spread_set *sets = spread_sets;

	for (size_t k = 0; k < SPREAD_SETS; k++) {
		struct sitetab *t = sitetab_new(1u << 18);
		size_t n = (size_t)sets[k].pids * sets[k].pages;

		if (!check(t != NULL))
			return;
		for (uint32_t p = 0; p < sets[k].pids; p++)
			for (uint64_t i = 0; i < sets[k].pages; i++)
				sitetab_add(t, (int32_t)(300 + p),
					    sets[k].first + i, 0x401000);
		if (!check(sitetab_evicted(t) <= n / 100))
			fprintf(stderr, "sitetab spread: set %zu: %llu of "
				"%zu pages evicted\n", k,
				(unsigned long long)sitetab_evicted(t), n);
		sitetab_free(t);
	}
}

int
main(void)
{
	stest_sites();
	stest_sites_evict();
	stest_sites_evict_late();
	stest_sites_inherit_slots();
	stest_sites_inherit_fold();
	stest_sites_grow();
	stest_sites_moving();
	stest_sites_keys();
	stest_sites_model();
	stest_sites_home();
	stest_sites_spread();
	return test_result();
}
