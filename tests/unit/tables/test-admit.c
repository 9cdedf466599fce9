/*
 * The admission bar of the code-site and level tables (src/tables/admit.h)
 * against collisions: a full set in a table less than half used is a
 * collision of a few pages, so a newcomer of one sample is refused
 * (counted) but the bar stays 0, and pages of one sample elsewhere still
 * get records; the same refusal in a table at least half used raises the
 * bar.  Before, one collision just after a table's last doubling set the
 * bar to 4 for good: a small process started later got no code sites and
 * no level mix (tests/names/e2e-names-mntns.sh failed about one run in
 * sixteen that way).
 */
#include "config.h"

#include <linux/perf_event.h>

#include "levtab.h"
#include "pagetab.h"
#include "sitetab.h"
#include "testlib.h"

/* Each table of 64 records: 16 sets, its whole room. */
#define ATEST_PAGES	64
#define ATEST_FIND	100000	/* pages tried for a set's */

/* One sample of (pid, page) at ip by a page whose page-table total,
 * counting it, is total (the aggregation's call). */
static void
atest_site(struct sitetab *t, int32_t pid, uint64_t page, uint32_t total)
{
	uint64_t key = sitetab_key(pid, page);

	sitetab_add_key(t, key, pagetab_key_mix(key), 0x10, total);
}

static size_t
atest_site_set(const struct sitetab *t, int32_t pid, uint64_t page)
{
	return sitetab_home(t, sitetab_key(pid, page)) / SITETAB_WAYS;
}

static void
atest_sites(void)
{
	struct sitetab *t = sitetab_new(ATEST_PAGES);
	struct sitetab_site s[SITETAB_SITES];
	uint64_t pages[SITETAB_WAYS + 2];
	size_t n = 0, set;

	if (!check(t != NULL))
		return;
	set = atest_site_set(t, 4, 0);
	for (uint64_t p = 0; n < SITETAB_WAYS + 2 && p < ATEST_FIND; p++)
		if (atest_site_set(t, 4, p) == set)
			pages[n++] = p;
	if (!check_eq_u64(n, SITETAB_WAYS + 2))
		goto out;
	for (size_t i = 0; i <= SITETAB_WAYS; i++)
		atest_site(t, 4, pages[i], 1);
	check_eq_u64(sitetab_used(t), SITETAB_WAYS);
	check_eq_u64(sitetab_get(t, 4, pages[SITETAB_WAYS], s), 0);
	check_eq_u64(t->admit.refused, 1);
	check_eq_u64(t->admit.bar, 0);
	check(admit_page(&t->admit, 1));
	/* Past half used (pages of one sample of another pid, none in
	 * that set), the next refusal there raises the bar. */
	for (uint64_t p = 0; sitetab_used(t) * 2 < sitetab_slots(t) &&
			     p < ATEST_FIND; p++)
		if (atest_site_set(t, 5, p) != set)
			atest_site(t, 5, p, 1);
	check_eq_u64(t->admit.bar, 0);
	atest_site(t, 4, pages[SITETAB_WAYS + 1], 1);
	check_eq_u64(sitetab_get(t, 4, pages[SITETAB_WAYS + 1], s), 0);
	check(t->admit.bar > 0);
	check(!admit_page(&t->admit, 1));
out:
	sitetab_free(t);
}

/* The same for levels: an L1 load hit. */
static void
atest_level(struct levtab *t, int32_t pid, uint64_t page, uint32_t total)
{
	uint64_t key = levtab_key(pid, page);
	uint64_t src = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, L1) |
		       PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVLNUM, L1);

	levtab_add_key(t, key, pagetab_key_mix(key), src, total);
}

static size_t
atest_level_set(const struct levtab *t, int32_t pid, uint64_t page)
{
	return levtab_home(levtab_key(pid, page), t->n_sets) / LEVTAB_WAYS;
}

static void
atest_levels(void)
{
	struct levtab *t = levtab_new(ATEST_PAGES);
	uint64_t got[DATASRC_LVL__COUNT], pages[LEVTAB_WAYS + 2];
	size_t n = 0, set;

	if (!check(t != NULL))
		return;
	atest_level(t, 4, 0, 1);	/* the table's sets, allocated */
	set = atest_level_set(t, 4, 0);
	for (uint64_t p = 0; n < LEVTAB_WAYS + 2 && p < ATEST_FIND; p++)
		if (atest_level_set(t, 4, p) == set)
			pages[n++] = p;
	if (!check_eq_u64(n, LEVTAB_WAYS + 2))
		goto out;
	for (size_t i = 0; i <= LEVTAB_WAYS; i++)
		atest_level(t, 4, pages[i], 1);
	check_eq_u64(levtab_count(t), LEVTAB_WAYS);
	check(!levtab_page(t, 4, pages[LEVTAB_WAYS], got));
	check_eq_u64(t->admit.refused, 1);
	check_eq_u64(t->admit.bar, 0);
	for (uint64_t p = 0; levtab_count(t) * 2 < t->n_sets * LEVTAB_WAYS &&
			     p < ATEST_FIND; p++)
		if (atest_level_set(t, 5, p) != set)
			atest_level(t, 5, p, 1);
	check_eq_u64(t->admit.bar, 0);
	atest_level(t, 4, pages[LEVTAB_WAYS + 1], 1);
	check(!levtab_page(t, 4, pages[LEVTAB_WAYS + 1], got));
	check(t->admit.bar > 0);
out:
	levtab_free(t);
}

/* One sample of (pid, page) counted in the page table pt, then handed
 * to the code-site table t as the aggregation hands it (its total). */
static void
atest_sample(struct pagetab *pt, struct sitetab *t, int32_t pid,
	     uint64_t page)
{
	bool ins;
	struct page_entry *e = pagetab_get(pt, pid, page << 12, &ins);

	if (!check(e != NULL))
		return;
	pagetab_count1(pt, e, SAMPLE_LOAD);
	atest_site(t, pid, page, e->total);
}

/*
 * A table filled past half with pages of one sample, in one interval (so
 * none is quiet): a page of a few samples new to a full set takes the
 * place of a page of one once its total is more than twice that page's
 * own page-table total, plus one (its fourth sample), where the fixed
 * margin of ADMIT_BAR_MAX kept it out for good: the hot pages of
 * tests/e2e/e2e-replay-callchain.sh under ThreadSanitizer, behind the
 * thousands of pages its runtime touches once.  Pages of equal samples
 * keep their places (test-sites-bound's uniform refault).
 */
static void
atest_light(void)
{
	struct pagetab *pt = pagetab_new(12, 0);
	struct sitetab *t = sitetab_new(ATEST_PAGES);
	struct sitetab_site s[SITETAB_SITES];
	uint64_t hot = 0;
	size_t set;

	if (!check(pt && t))
		goto out;
	t->admit.pages = pt;
	for (uint64_t p = 0; sitetab_used(t) * 2 < sitetab_slots(t) + 8 &&
			     p < ATEST_FIND; p++)
		atest_sample(pt, t, 5, p);
	/* A page of pid 4 whose set is full. */
	for (uint64_t p = 0; p < ATEST_FIND && !hot; p++) {
		size_t n = 0;

		set = atest_site_set(t, 4, p);
		for (size_t w = 0; w < SITETAB_WAYS; w++)
			n += t->rec[set * SITETAB_WAYS + w].key != 0;
		if (n == SITETAB_WAYS)
			hot = p;
	}
	if (!check(hot != 0))
		goto out;
	for (int i = 0; i < 3; i++)
		atest_sample(pt, t, 4, hot);
	check_eq_u64(sitetab_get(t, 4, hot, s), 0);
	atest_sample(pt, t, 4, hot);
	atest_sample(pt, t, 4, hot);
	if (check_eq_u64(sitetab_get(t, 4, hot, s), 1))
		check_eq_u64(s[0].count, 2);
	check_eq_u64(sitetab_evicted(t), 1);
out:
	sitetab_free(t);
	pagetab_free(pt);
}

int
main(void)
{
	atest_sites();
	atest_levels();
	atest_light();
	return test_result();
}
