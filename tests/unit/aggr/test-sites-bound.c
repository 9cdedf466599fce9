/*
 * Code sites bounded to the hottest pages (issue 15: memory a page and
 * a random cache line a sample): the code-site table memtop gives an
 * aggregation holds at most 16 Ki pages (1 MiB of 64-byte records)
 * whatever --max-pages says, and pages that turn hot after it filled
 * with pages of an earlier phase still get their sites, exact, in the
 * frame (the page-level Space-Saving of src/tables/sitetab.h), while the
 * pages displaced are counted in sites_evicted.  The data_src level
 * mixes are bounded the same way (src/tables/levtab.h): the hot pages
 * keep theirs, exact, and the displaced are counted in levels_evicted.
 * Below that bound both tables take a byte for each page the page table
 * tracks (a 64-byte record every SIDES_TRACKED_A_RECORD pages, at least
 * SIDES_RECORDS_MIN records), in an aggregation and in a shard's merge.
 * The oracle is the test's own count of what it added.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <linux/perf_event.h>

#include "admit.h"
#include "aggr.h"
#include "aggr-test.h"
#include "aggr_granularity.h"
#include "datasrc.h"
#include "frame.h"
#include "framebuild.h"
#include "sides.h"
#include "sitetab.h"
#include "testlib.h"
#include "topo.h"

#define STEST_PID	100
#define STEST_HOT	20	/* pages hot in the second phase */
#define STEST_ROUNDS	300	/* samples of each hot page */
#define STEST_OLD	20000	/* pages of the first phase, more than fit */
#define STEST_OLD_N	100	/* samples of each: the bar reaches its cap */
#define STEST_COLD	100	/* new cold pages a round of the second */
#define STEST_SITE_PAGES 16384	/* the bound the README and man page give */
/* The samples a late hot page may leave in sites_other: below the
 * admission bar, the mean weight met up to its cap (src/tables/admit.h),
 * which the first phase's weights are well past, then until its total is
 * a multiple of ADMIT_RETRY (the first phase's pages outweigh it). */
#define STEST_LATE	(ADMIT_BAR_MAX + ADMIT_RETRY - 1)
/* An L1 hit, as PEBS gives it. */
#define STEST_SRC	(PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, L1) | \
			 PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVLNUM, L1))

static void
stest_add(struct aggr *a, uint64_t page, uint64_t ip)
{
	struct sample s = { .addr = page << 12, .pid = STEST_PID,
			    .tid = STEST_PID, .cpu = 0, .kind = SAMPLE_LOAD,
			    .period = 1, .ip = ip, .data_src = STEST_SRC };

	aggr_add(a, &s);
}

static struct frame *
stest_build(struct aggr *a, size_t top_k)
{
	struct frame_target tg[1] = { { .pid = STEST_PID, .comm = "t",
					.alive = true } };
	struct frame_meta m = ftest_meta("faults", 1, SORT_SAMPLES, top_k);

	m.targets = tg;
	m.n_targets = 1;
	return frame_build(a, &m);
}

/* Records the level table has now. */
static size_t
stest_level_slots(const struct levtab *t)
{
	return (levtab_bytes(t) - sizeof(*t)) / sizeof(struct levtab_page);
}

/*
 * late: the samples a hot page of the second phase may leave out of its
 * sites and level mix.  With the phases in two intervals, the first
 * phase's pages are quiet in the second, and the new pages take their
 * places at the bar (STEST_LATE); in one interval they are as heavy as
 * ever, and the new pages wait until they outweigh them by more than
 * ADMIT_BAR_MAX.
 */
static void
stest_late_hot(const struct topo *topo, size_t max_pages, bool new_interval,
	       uint64_t late)
{
	struct aggr a;
	struct frame *f;
	uint64_t next = 1u << 20;	/* cold pages of the second phase */
	size_t found = 0;

	check_eq_i64(aggr_init(&a, topo, NULL, 12, max_pages), 0);
	check(sitetab_capacity(a.sides->sites) <= STEST_SITE_PAGES);
	for (int k = 0; k < STEST_OLD_N; k++)
		for (uint64_t p = 0; p < STEST_OLD; p++)
			stest_add(&a, p, 0x401000);
	if (new_interval) {
		aggr_flush(&a);
		aggr_next_interval(&a);
	}
	for (int r = 0; r < STEST_ROUNDS; r++) {
		for (uint64_t h = 0; h < STEST_HOT; h++)
			stest_add(&a, 0x80000 + h * 7, 0x402000 + h * 16);
		for (int c = 0; c < STEST_COLD; c++)
			stest_add(&a, next++, 0x403000);
	}
	f = stest_build(&a, STEST_HOT);
	check(f != NULL);
	if (!f) {
		aggr_fini(&a);
		return;
	}
	check_eq_u64(f->n_pages, STEST_HOT);
	for (size_t i = 0; i < f->n_pages; i++) {
		const struct frame_page *p = &f->pages[i];
		uint64_t h = ((p->addr >> 12) - 0x80000) / 7;

		check_eq_u64(p->samples, STEST_ROUNDS);
		if (p->sites_other > late)
			fprintf(stderr, "late hot page: %llu of %d samples "
				"without a site\n",
				(unsigned long long)p->sites_other,
				STEST_ROUNDS);
		check_eq_u64(p->n_sites, 1);
		if (p->n_sites != 1)
			continue;
		check_eq_u64(p->sites[0].ip, 0x402000 + h * 16);
		/* Exact from when the page passed the tables' admission
		 * bar (src/tables/admit.h): its first few samples count in
		 * sites_other. */
		check_eq_u64(p->sites[0].samples + p->sites_other,
			     STEST_ROUNDS);
		check(p->sites_other <= late);
		check(p->levels != NULL);
		if (!p->levels)
			continue;
		check(p->levels[datasrc_level(STEST_SRC)] + late >=
		      STEST_ROUNDS);
		found++;
	}
	check_eq_u64(found, STEST_HOT);
	/* The old phase's pages and the cold ones did not all fit. */
	check(f->sites_evicted > 0);
	check(sitetab_slots(a.sides->sites) <= STEST_SITE_PAGES);
	check(f->levels_evicted > 0);
	/* Full sets raised both bars, within their cap. */
	check(a.sides->sites->admit.bar > ADMIT_BAR_MAX / 2);
	check(a.sides->sites->admit.bar <= ADMIT_BAR_MAX);
	check(a.sides->levels->admit.bar > ADMIT_BAR_MAX / 2);
	check(a.sides->levels->admit.bar <= ADMIT_BAR_MAX);
	check(levtab_count(a.sides->levels) <= STEST_SITE_PAGES);
	check(levtab_bytes(a.sides->levels) <=
	      sizeof(struct levtab) + STEST_SITE_PAGES * 64);
	frame_free(f);
	aggr_fini(&a);
}

/*
 * A --max-pages below the bound: a working set the page table holds
 * whole keeps its sites and level mixes, exact, for nearly every page
 * (the tables have room for 4 times --max-pages, rounded up to a power
 * of two, however few pages the page table tracks; with room for just
 * --max-pages, 4-way sets at full load displaced about half of them).
 * At 3000 pages, room for the 4 Ki records that so few tracked pages
 * earn displaced about a fifth.
 */
static void
stest_small_max_pages(const struct topo *topo, size_t pages)
{
	enum { N = 10 };
	struct aggr a;
	struct frame *f;
	size_t exact = 0;

	check_eq_i64(aggr_init(&a, topo, NULL, 12, pages), 0);
	for (int k = 0; k < N; k++)
		for (uint64_t p = 0; p < pages; p++)
			stest_add(&a, 0x90000 + p * 3, 0x405000 + p * 16);
	f = stest_build(&a, pages);
	if (!check(f != NULL)) {
		aggr_fini(&a);
		return;
	}
	check_eq_u64(f->n_pages, pages);
	for (size_t i = 0; i < f->n_pages; i++) {
		const struct frame_page *p = &f->pages[i];

		exact += p->n_sites == 1 && p->sites[0].samples == N &&
			 p->levels && p->levels[datasrc_level(STEST_SRC)] == N;
	}
	if (!check(exact * 100 >= pages * 99))
		fprintf(stderr, "small --max-pages: %zu of %zu pages exact\n",
			exact, pages);
	frame_free(f);
	aggr_fini(&a);
}

/* A --max-pages from 4 Ki pages on gives the tables their capacity
 * (16 Ki records) from the start, as before the room: 5000 pages, all
 * the page table may hold, earn only 4 Ki.  (Even at their capacity,
 * 4-way sets a third full leave about a quarter of such a working set
 * without exact sites, after the few pages displaced raise the bar.) */
static void
stest_max_pages_room(const struct topo *topo)
{
	enum { PAGES = 5000 };
	struct aggr a;

	check_eq_i64(aggr_init(&a, topo, NULL, 12, PAGES), 0);
	for (uint64_t p = 0; p < PAGES; p++)
		stest_add(&a, 0x90000 + p * 3, 0x405000 + p * 16);
	aggr_flush(&a);
	check_eq_u64(sitetab_slots(a.sides->sites), STEST_SITE_PAGES);
	check_eq_u64(stest_level_slots(a.sides->levels), STEST_SITE_PAGES);
	aggr_fini(&a);
}

/*
 * A uniform working set of 64 Ki pages (a refault over 256 MiB, say),
 * 4 times wider than the tables' capacity and 16 times their room at 64 Ki
 * tracked pages, pages in random order, 16 samples a page on average:
 * Space-Saving alone displaces a page at most samples (about 3/4 of
 * them), reading a whole set of each table each time; with the admission
 * bar the tables stop taking pages whose totals are below it, and the
 * displacements stay a small part of the samples (about 1/10 with the
 * bar alone; none since a newcomer must outweigh the page it displaces,
 * src/tables/admit.h), as do the pages that read a full set and are
 * refused.  Every sample still counts in its page's sites or
 * sites_other.
 */
static void
stest_wide_uniform(const struct topo *topo)
{
	enum { PAGES = 4 * STEST_SITE_PAGES, ROUNDS = 16 };
	struct aggr a;
	struct frame *f;
	uint64_t samples = (uint64_t)PAGES * ROUNDS, x = 7;

	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	for (uint64_t i = 0; i < samples; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		stest_add(&a, 0x100000 + (x >> 33) % PAGES * 5, 0x406000);
	}
	f = stest_build(&a, 100);
	if (!check(f != NULL)) {
		aggr_fini(&a);
		return;
	}
	for (size_t i = 0; i < f->n_pages; i++) {
		const struct frame_page *p = &f->pages[i];

		check_eq_u64((p->n_sites ? p->sites[0].samples : 0) +
			     p->sites_other, p->samples);
	}
	/* The frame's level counts keep every sample, tables or not. */
	check_eq_u64(f->levels[datasrc_level(STEST_SRC)], samples);
	/* Nor do the pages below the bar read a full set only to be
	 * refused (without the bar: 979 125 of the million; with: 11). */
	if (!check(f->sites_evicted * 4 < samples) ||
	    !check(f->levels_evicted * 4 < samples) ||
	    !check(a.sides->sites->admit.refused * 4 < samples) ||
	    !check(a.sides->levels->admit.refused * 4 < samples))
		fprintf(stderr, "wide uniform: %llu samples, %llu and %llu "
			"pages displaced, %llu and %llu refused\n",
			(unsigned long long)samples,
			(unsigned long long)f->sites_evicted,
			(unsigned long long)f->levels_evicted,
			(unsigned long long)a.sides->sites->admit.refused,
			(unsigned long long)a.sides->levels->admit.refused);
	frame_free(f);
	aggr_fini(&a);
}

/*
 * A uniform refault of as many pages as the tables' room holds (4 Ki
 * pages, SIDES_RECORDS_MIN records in 4-way sets), every page once a
 * round for four times the admission bar's cap: about a fifth of the
 * pages find their set full of pages as heavy as they are.  Space-Saving
 * with the bar alone displaced at each of their samples once past the
 * cap (a set read, a record rewritten, a page's sites lost: 15 % of a
 * real refault capture's samples), so few pages kept exact sites; a page
 * now takes a heavier one's place only every ADMIT_RETRY-th sample
 * (src/tables/admit.h), so the pages that hold a record keep it.  The
 * oracle: the test's own count of each page's samples, all at one site.
 */
static void
stest_uniform_refault(const struct topo *topo)
{
	enum { PAGES = SIDES_RECORDS_MIN, ROUNDS = 4 * ADMIT_BAR_MAX,
	       INTERVAL = 7 };
	uint64_t samples = (uint64_t)PAGES * ROUNDS;
	size_t exact = 0, fair = 0;
	struct aggr a;
	struct frame *f;

	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	for (int r = 0; r < ROUNDS; r++) {
		/* An interval every INTERVAL rounds: in each, every page
		 * is quiet until its first sample. */
		if (r && r % INTERVAL == 0) {
			aggr_flush(&a);
			aggr_next_interval(&a);
		}
		for (uint64_t p = 0; p < PAGES; p++)
			stest_add(&a, 0x600000 + p * 3, 0x40c000 + p * 16);
	}
	f = stest_build(&a, PAGES);
	if (!check(f != NULL)) {
		aggr_fini(&a);
		return;
	}
	check_eq_u64(f->n_pages, PAGES);
	for (size_t i = 0; i < f->n_pages; i++) {
		const struct frame_page *p = &f->pages[i];
		uint64_t in_site = p->n_sites ? p->sites[0].samples : 0;

		check_eq_u64(in_site + p->sites_other, p->total);
		check_eq_u64(p->total, ROUNDS);
		/* Its record since the bar let it in, kept to the end. */
		exact += in_site + ADMIT_BAR_MAX + ADMIT_RETRY >= ROUNDS;
		fair += in_site * 2 >= ROUNDS;
	}
	if (!check(exact * 4 >= PAGES * 3) || !check(fair * 4 >= PAGES * 3) ||
	    !check(f->sites_evicted * 32 < samples) ||
	    !check(f->levels_evicted * 32 < samples))
		fprintf(stderr, "uniform refault: %zu exact, %zu half of %d "
			"pages; %llu samples, %llu and %llu displaced\n",
			exact, fair, PAGES, (unsigned long long)samples,
			(unsigned long long)f->sites_evicted,
			(unsigned long long)f->levels_evicted);
	frame_free(f);
	aggr_fini(&a);
}

/*
 * The tables' room follows the pages the page table tracks: 32 Ki pages
 * (two samples each, so the admission bar rises past 1) keep both tables
 * at SIDES_RECORDS_MIN records, full; 512 Ki pages (and a few
 * batches more) let them grow to 8 Ki records, a byte a tracked page,
 * though the bar had stopped new pages of one sample (room to grow drops
 * it).
 */
static void
stest_room_follows_pages(const struct topo *topo)
{
	enum { FEW = 1 << 15, MANY = 1 << 19 };
	struct aggr a;

	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	for (int k = 0; k < 2; k++)
		for (uint64_t p = 0; p < FEW; p++)
			stest_add(&a, 0x200000 + p, 0x407000);
	aggr_flush(&a);
	check_eq_u64(sitetab_slots(a.sides->sites), SIDES_RECORDS_MIN);
	/* Full: the pages past the room found their sets full. */
	check(sitetab_used(a.sides->sites) * 4 >= SIDES_RECORDS_MIN * 3);
	check_eq_u64(stest_level_slots(a.sides->levels), SIDES_RECORDS_MIN);
	/* Pages that could not get in raised the bar toward what a
	 * newcomer needs (src/tables/admit.h), past their own two samples,
	 * so the next ones like them do not read a set (the bar stops
	 * rising once no page reaches it). */
	check(a.sides->sites->admit.bar > 2);
	for (uint64_t p = FEW; p < MANY + 4 * AGGR_BATCH; p++)
		stest_add(&a, 0x200000 + p, 0x407000);
	aggr_flush(&a);
	check_eq_u64(sitetab_slots(a.sides->sites),
		     MANY / SIDES_TRACKED_A_RECORD);
	check_eq_u64(stest_level_slots(a.sides->levels),
		     MANY / SIDES_TRACKED_A_RECORD);
	aggr_fini(&a);
}

/* A shard's merge gives the collector's tables the room of the pages
 * the collector then tracks, not their capacity. */
static void
stest_room_after_merge(const struct topo *topo)
{
	enum { PAGES = 1 << 15 };
	struct aggr dst, shard;

	check_eq_i64(aggr_init(&dst, topo, NULL, 12, 0), 0);
	if (!check_eq_i64(aggr_shard_init(&shard, &dst, NULL), 0)) {
		aggr_fini(&dst);
		return;
	}
	for (uint64_t p = 0; p < PAGES; p++)
		stest_add(&shard, 0x300000 + p, 0x408000);
	check_eq_i64(aggr_merge(&dst, &shard), 0);
	check(sitetab_used(dst.sides->sites) > SIDES_RECORDS_MIN / 4);
	check(sitetab_slots(dst.sides->sites) <= SIDES_RECORDS_MIN);
	check(stest_level_slots(dst.sides->levels) <= SIDES_RECORDS_MIN);
	aggr_fini(&shard);
	aggr_fini(&dst);
}

/* A shard of a collector that tracks 512 Ki pages takes the collector's
 * room (8 Ki records) from its first merge on, though it tracks only the
 * 8 Ki pages it then sees (which earn SIDES_RECORDS_MIN records). */
static void
stest_room_of_shard(const struct topo *topo)
{
	enum { MANY = 1 << 19, FEW = 1 << 13 };
	struct aggr dst, shard;

	check_eq_i64(aggr_init(&dst, topo, NULL, 12, 0), 0);
	if (!check_eq_i64(aggr_shard_init(&shard, &dst, NULL), 0)) {
		aggr_fini(&dst);
		return;
	}
	for (uint64_t p = 0; p < MANY + 4 * AGGR_BATCH; p++)
		stest_add(&dst, 0x400000 + p, 0x409000);
	aggr_flush(&dst);
	check_eq_u64(sitetab_slots(dst.sides->sites),
		     MANY / SIDES_TRACKED_A_RECORD);
	check_eq_i64(aggr_merge(&dst, &shard), 0);
	for (uint64_t p = 0; p < FEW; p++)
		stest_add(&shard, 0x500000 + p, 0x40a000);
	aggr_flush(&shard);
	check_eq_u64(sitetab_slots(shard.sides->sites),
		     MANY / SIDES_TRACKED_A_RECORD);
	aggr_fini(&shard);
	aggr_fini(&dst);
}

/* A change to 2 MiB pages folds the code sites into a table given the
 * room of the folded page count first: 512 Ki pages (room for 8 Ki
 * records) in 4 Ki regions of 2 MiB fold into 4 Ki pages, which earn
 * SIDES_RECORDS_MIN records, and the folded table stays within that. */
static void
stest_room_after_fold(const struct topo *topo)
{
	enum { PAGES = (1 << 19) + 4 * AGGR_BATCH, REGIONS = 1 << 12 };
	struct aggr a;

	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	for (uint64_t p = 0; p < PAGES; p++)
		stest_add(&a, 0x100000 + p % REGIONS * 512 + p / REGIONS,
			  0x40b000);
	aggr_flush(&a);
	check_eq_u64(sitetab_slots(a.sides->sites), 2 * SIDES_RECORDS_MIN);
	check_eq_i64(aggr_granularity_apply(&a, 21, 0), 0);
	check_eq_u64(pagetab_count(a.pages), REGIONS);
	/* The folded tables ask the new page table which pages are quiet. */
	check(a.sides->sites->admit.pages == a.pages);
	check(a.sides->levels->admit.pages == a.pages);
	check(sitetab_used(a.sides->sites) > SIDES_RECORDS_MIN / 4);
	check(sitetab_slots(a.sides->sites) <= SIDES_RECORDS_MIN);
	aggr_fini(&a);
}

int
main(void)
{
	static const int cpu_node[2] = { 0, 0 };
	struct topo *topo = topo_new_fake(2, cpu_node);

	/* No --max-pages, then a large one. */
	stest_late_hot(topo, 0, true, STEST_LATE);
	stest_late_hot(topo, 1u << 22, true, STEST_LATE);
	stest_late_hot(topo, 0, false, STEST_OLD_N + ADMIT_BAR_MAX);
	stest_small_max_pages(topo, 1000);
	stest_small_max_pages(topo, 3000);
	stest_max_pages_room(topo);
	stest_wide_uniform(topo);
	stest_uniform_refault(topo);
	stest_room_follows_pages(topo);
	stest_room_after_merge(topo);
	stest_room_of_shard(topo);
	stest_room_after_fold(topo);
	topo_free(topo);
	return test_result();
}
