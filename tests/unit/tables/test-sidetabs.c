/*
 * The side tables beside the page table: samples per code address
 * (epochs, unknown, a full table, exact counts against a model), per-page
 * level mixes (exact counts against a model through table growth, with
 * more distinct data_src values than the level memo has entries, the page
 * cap, reset, spread of home slots) and the u64 map the name caches use.
 * The per-page code sites are in test-sitetab.c, line heat in
 * test-linetab.c.
 */
#include "config.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codetab.h"
#include "datasrc.h"
#include "levtab.h"
#include "sidetab-test.h"
#include "testlib.h"
#include "u64map.h"

struct code_want {
	int32_t pid;
	uint64_t ip, samples, total;
	int seen;
};

static void
stest_code_entry(const struct codetab_entry *e, uint64_t samples, void *ctx)
{
	struct code_want *w = ctx;

	if (e->pid != w->pid || e->ip != w->ip)
		return;
	w->seen++;
	w->samples = samples;
	w->total = e->total;
}

/* The interval and total counts of (pid, ip). */
static void
stest_code_check(const struct codetab *t, int32_t pid, uint64_t ip,
		 uint64_t samples, uint64_t total)
{
	struct code_want w = { .pid = pid, .ip = ip };

	codetab_foreach(t, stest_code_entry, &w);
	check_eq_u64(w.seen, 1);
	check_eq_u64(w.samples, samples);
	check_eq_u64(w.total, total);
}

static void
stest_code(void)
{
	struct codetab *t = codetab_new();
	struct codetab_counts in, cum;

	codetab_add(t, 1, 0x400);
	codetab_add(t, 1, 0x400);
	codetab_add(t, 2, 0x400);
	codetab_add(t, 1, 0);
	check_eq_u64(codetab_count(t), 2);
	codetab_counts(t, &in, &cum);
	check_eq_u64(in.unknown, 1);
	codetab_next_interval(t);
	codetab_add(t, 1, 0x400);
	codetab_counts(t, &in, &cum);
	check_eq_u64(in.unknown, 0);
	check_eq_u64(cum.unknown, 1);
	stest_code_check(t, 1, 0x400, 1, 3);
	stest_code_check(t, 2, 0x400, 0, 1);
	/* A run at one ip (the entry counted last) across an interval. */
	codetab_add(t, 1, 0x400);
	stest_code_check(t, 1, 0x400, 2, 4);
	codetab_next_interval(t);
	codetab_add(t, 1, 0x400);
	stest_code_check(t, 1, 0x400, 1, 5);
	codetab_add(t, 2, 0x400);
	codetab_add(t, 1, 0);
	codetab_add(t, 1, 0x400);
	stest_code_check(t, 1, 0x400, 2, 6);
	stest_code_check(t, 2, 0x400, 1, 2);
	/* Fill the table: the rest count as untracked. */
	for (uint64_t ip = 1; codetab_count(t) < CODETAB_CAPACITY; ip++)
		codetab_add(t, 9, 0x100000 + ip);
	codetab_add(t, 9, 0x1);
	codetab_add(t, 1, 0x400);		/* known ips still count */
	codetab_counts(t, &in, &cum);
	check_eq_u64(in.untracked, 1);
	check_eq_u64(codetab_count(t), CODETAB_CAPACITY);
	codetab_reset(t);
	check_eq_u64(codetab_count(t), 0);
	codetab_counts(t, &in, &cum);
	check_eq_u64(cum.untracked, 0);
	codetab_free(t);
	codetab_free(NULL);
}

struct code_ref {
	int32_t pid;
	uint64_t ip, samples, total;
	uint32_t epoch;
};

#define CM_KEYS 6000

/* Finds (pid, ip) in the model of stest_code_model (linear: it is a
 * test). */
static struct code_ref *
code_ref_find(struct code_ref *ref, size_t *n, int32_t pid, uint64_t ip)
{
	for (size_t i = 0; i < *n; i++)
		if (ref[i].pid == pid && ref[i].ip == ip)
			return &ref[i];
	if (*n == CM_KEYS)
		return NULL;
	ref[*n].pid = pid;
	ref[*n].ip = ip;
	return &ref[(*n)++];
}

static void
code_model_entry(const struct codetab_entry *e, uint64_t samples, void *ctx)
{
	struct code_want *w = ctx;

	w->seen++;
	w->samples += samples;
	w->total += e->total;
}

/* Exact counts against a plain model through the table's doublings (up
 * to 6000 code addresses, runs at one ip, intervals), then again after a
 * reset. */
static void
stest_code_model(void)
{
	static struct code_ref ref[CM_KEYS];
	struct codetab *t = codetab_new();
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint32_t epoch = 0;

	for (int round = 0; round < 2; round++) {
		size_t n = 0;
		bool ok = true;

		for (int i = 0; i < 120000; i++) {
			int32_t pid;
			uint64_t ip;
			struct code_ref *r;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (i % 20000 == 19999) {
				codetab_next_interval(t);
				epoch++;
			}
			pid = (int32_t)(x % 7);
			/* Code a fixed stride apart, as functions are. */
			ip = 0x400000 + (x >> 8) % (CM_KEYS / 7) * 64;
			r = code_ref_find(ref, &n, pid, ip);
			for (unsigned k = 0; k <= (x >> 40) % 3; k++) {
				codetab_add(t, pid, ip);
				if (r->epoch != epoch)
					r->samples = 0;
				r->epoch = epoch;
				r->samples++;
				r->total++;
			}
		}
		check_eq_u64(codetab_count(t), n);
		for (size_t i = 0; i < n && ok; i++) {
			struct code_want w = { .pid = ref[i].pid,
					       .ip = ref[i].ip };

			codetab_foreach(t, stest_code_entry, &w);
			ok &= check_eq_u64(w.seen, 1);
			ok = ok && check_eq_u64(w.total, ref[i].total);
			ok = ok && check_eq_u64(w.samples,
						ref[i].epoch == epoch ?
						ref[i].samples : 0);
		}
		{
			struct code_want all = { 0 };

			codetab_foreach(t, code_model_entry, &all);
			check_eq_u64(all.seen, n);
		}
		codetab_reset(t);
		memset(ref, 0, sizeof(ref));
		epoch = 0;
		check_eq_u64(codetab_count(t), 0);
	}
	codetab_free(t);
}

#define DS(a, s) PERF_MEM_S(a, s)
#define LT_PAGES 5000
#define LT_SRCS 40

/*
 * A capacity of 2 pages is one set of LEVTAB_WAYS: the fifth page takes
 * the place of the lightest, which loses its mix (counted evicted), and
 * inherits its weight; the frame's interval counts stay whole.
 */
static void
stest_levels_cap(uint64_t src)
{
	uint64_t got[DATASRC_LVL__COUNT];
	struct levtab *t = levtab_new(2);
	enum datasrc_level l = datasrc_level(src);

	for (uint64_t p = 10; p < 10 + LEVTAB_WAYS; p++)
		for (uint64_t j = 0; j < p - 8; j++)	/* 2, 3, 4, 5 samples */
			levtab_add(t, 1, p, src);
	check_eq_u64(levtab_count(t), LEVTAB_WAYS);
	check_eq_u64(levtab_evicted(t), 0);
	levtab_add(t, 1, 20, src);
	check_eq_u64(levtab_count(t), LEVTAB_WAYS);
	check_eq_u64(levtab_evicted(t), 1);
	check_eq_u64(levtab_untracked(t), 0);
	check(!levtab_page(t, 1, 10, got));	/* the lightest, 2 samples */
	check(levtab_page(t, 1, 11, got));
	check_eq_u64(got[l], 3);
	check(levtab_page(t, 1, 20, got));	/* its own sample only */
	check_eq_u64(got[l], 1);
	check_eq_u64(got[DATASRC_LVL_NA], 0);
	/* Page 20 weighs 2 + 1 (inherited): page 11 (3) or 20 goes next,
	 * not 13 (5); without the inheritance 20 (1) would. */
	levtab_add(t, 1, 21, src);
	check(levtab_page(t, 1, 13, got));
	check(levtab_page(t, 1, 12, got));
	check(!levtab_page(t, 1, 11, got) || !levtab_page(t, 1, 20, got));
	levtab_add(t, 1, 20, src);
	levtab_add(t, 1, 20, src);
	levtab_add(t, 1, 22, src);
	check(levtab_page(t, 1, 20, got));	/* now 5: it stays */
	levtab_interval(t, got);
	check_eq_u64(got[l], 2 + 3 + 4 + 5 + 5);
	check(levtab_bytes(t) <= sizeof(*t) + LEVTAB_WAYS * 64);
	levtab_clear(t);
	check_eq_u64(levtab_evicted(t), 0);
	check(!levtab_page(t, 1, 20, got));
	levtab_free(t);
	levtab_free(NULL);
}

/*
 * At its capacity over a skewed stream much wider than the table, the
 * pages with the most samples keep their mix, exact from when they got
 * their record, and the table stays at the capacity's bytes.  The
 * oracle is the stream's own per-page counts.
 */
static void
stest_levels_bound(uint64_t src)
{
	/* CAP above the first sets' 1024 pages: growth, then evictions. */
	enum { PAGES = 1 << 16, CAP = 1 << 12, HOT = 64, ROUNDS = 40 };
	static uint32_t want[PAGES];
	uint64_t got[DATASRC_LVL__COUNT];
	struct levtab *t = levtab_new(CAP);
	enum datasrc_level l = datasrc_level(src);
	uint64_t x = 1, sum = 0;
	bool ok = true;

	if (!check(t != NULL))
		return;
	/* Cold pages once each, in rounds, with the hot pages 8 times each
	 * round after the first (they come late, behind cold pages that
	 * filled every set). */
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < PAGES / ROUNDS; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t p = HOT + (x >> 33) % (PAGES - HOT);

			levtab_add(t, 7, p, src);
			want[p]++;
			sum++;
		}
		for (uint64_t p = 0; r > 0 && p < HOT; p++)
			for (int j = 0; j < 8; j++, sum++, want[p]++)
				levtab_add(t, 7, p, src);
	}
	check(levtab_evicted(t) > 0);
	check(levtab_count(t) <= CAP);
	check(levtab_bytes(t) <= sizeof(*t) + CAP * 64);
	for (uint64_t p = 0; p < HOT && ok; p++) {
		ok &= check(levtab_page(t, 7, p, got));
		/* Exact: it got a record at its first sample and never
		 * lost it. */
		ok &= check_eq_u64(got[l], want[p]);
	}
	levtab_interval(t, got);
	check_eq_u64(got[l], sum);
	/* The displacements raised the admission bar (src/tables/admit.h);
	 * a clear or reset starts it again. */
	check(t->admit.bar > 0);
	levtab_clear(t);
	check_eq_u64(t->admit.bar, 0);
	for (uint64_t p = 0; p < 2 * CAP; p++)
		levtab_add(t, 7, p, src);
	check(t->admit.bar > 0);
	levtab_reset(t);
	check_eq_u64(levtab_evicted(t), 0);
	check_eq_u64(t->admit.bar, 0);
	levtab_free(t);
}

/*
 * A shard's merge (the parallel drain): its mixes, its evictions and
 * the weight of its samples reach the collector's table, not what its
 * pages inherited there.  Merged pages keep their weight: newcomers to
 * the collector's full table displace its light pages, not them.
 */
static void
stest_levels_merge(uint64_t src)
{
	uint64_t got[DATASRC_LVL__COUNT];
	struct levtab *dst = levtab_new(LEVTAB_WAYS);
	struct levtab *shard = levtab_new(LEVTAB_WAYS);
	enum datasrc_level l = datasrc_level(src);

	if (!check(dst && shard))
		goto out;
	/* The shard: pages 1..4 heavy (100 each), then page 5 displaces
	 * one of them (evicted 1). */
	for (uint64_t p = 1; p <= LEVTAB_WAYS; p++)
		for (int j = 0; j < 100; j++)
			levtab_add(shard, 3, p, src);
	levtab_add(shard, 3, 5, src);
	check_eq_u64(levtab_evicted(shard), 1);
	levtab_merge(dst, shard);
	check_eq_u64(levtab_evicted(dst), 1);
	check_eq_u64(levtab_count(dst), LEVTAB_WAYS);
	/* Page 5 (1 sample, 101 inherited in the shard) merges as 1. */
	check(levtab_page(dst, 3, 5, got));
	check_eq_u64(got[l], 1);
	/* A newcomer to dst's one full set displaces page 5 (weight 1),
	 * not a page of weight 100; so does the next (weight 1 + 1). */
	levtab_add(dst, 3, 6, src);
	check(!levtab_page(dst, 3, 5, got));
	levtab_add(dst, 3, 7, src);
	check(!levtab_page(dst, 3, 6, got));
	check_eq_u64(levtab_evicted(dst), 3);
	levtab_interval(dst, got);
	check_eq_u64(got[l], 4 * 100 + 1 + 2);
out:
	levtab_free(dst);
	levtab_free(shard);
}

static void
stest_levels(void)
{
	static const uint64_t base[] = {
		DS(OP, LOAD) | DS(LVL, L1) | DS(LVL, HIT) | DS(LVLNUM, L1),
		DS(OP, LOAD) | DS(LVL, LFB) | DS(LVL, HIT) | DS(LVLNUM, LFB),
		DS(OP, LOAD) | DS(LVL, L3) | DS(LVL, HIT) | DS(SNOOP, HITM),
		DS(OP, LOAD) | DS(LVLNUM, RAM) | DS(LVL, HIT),
		DS(OP, LOAD) | DS(LVL, REM_RAM1) | DS(LVL, HIT),
		DS(OP, LOAD) | DS(LVLNUM, PMEM),
		DS(OP, LOAD) | DS(LVLNUM, CXL) | DS(REMOTE, REMOTE),
		DS(OP, STORE) | DS(LVL, L1) | DS(LVL, MISS),
	};
	/* faults' data_src: every field NA, so no level. */
	const uint64_t na = 0x1e05080021ull;
	static uint64_t want[LT_PAGES][DATASRC_LVL__COUNT];
	uint64_t src[LT_SRCS], sum[DATASRC_LVL__COUNT] = { 0 };
	uint64_t got[DATASRC_LVL__COUNT];
	struct levtab *t = levtab_new(0);
	size_t pages = 0;
	bool ok = true;

	check(t != NULL);
	/* Values that differ in bits the level ignores (TLB), so they share
	 * levels but not memo entries, and outnumber the memo. */
	for (int i = 0; i < LT_SRCS; i++) {
		src[i] = base[i % 8] |
			 ((uint64_t)(i / 8 + 1) << PERF_MEM_TLB_SHIFT);
		ok &= check(datasrc_level(src[i]) != DATASRC_LVL_NA);
	}
	check(LT_SRCS > (1 << LEVTAB_MEMO_BITS));
	check(datasrc_level(na) == DATASRC_LVL_NA);
	for (uint64_t p = 0; p < LT_PAGES; p++) {
		int32_t pid = 1 + (int32_t)(p % 3);

		levtab_add(t, pid, p, 0);		/* no data_src */
		levtab_add(t, pid, p, na);		/* nothing known */
		for (uint64_t j = 0; j < p % 5; j++) {
			uint64_t v = src[(p * 7 + j * 13) % LT_SRCS];
			enum datasrc_level l = datasrc_level(v);

			levtab_add(t, pid, p, v);
			want[p][l]++;
			sum[l]++;
		}
		pages += p % 5 != 0;
	}
	/* Every page through the table's growth (1024 slots at first). */
	check_eq_u64(levtab_count(t), pages);
	for (uint64_t p = 0; p < LT_PAGES && ok; p++) {
		int32_t pid = 1 + (int32_t)(p % 3);

		if (p % 5 == 0) {
			ok &= check(!levtab_page(t, pid, p, got));
			continue;
		}
		ok &= check(levtab_page(t, pid, p, got));
		for (int l = 0; l < DATASRC_LVL__COUNT && ok; l++)
			ok &= check_eq_u64(got[l], want[p][l]);
	}
	check(!levtab_page(t, 9, 1, got));	/* another pid */
	levtab_interval(t, got);
	for (int l = 0; l < DATASRC_LVL__COUNT; l++)
		check_eq_u64(got[l], sum[l]);
	check_eq_u64(levtab_untracked(t), 0);
	levtab_next_interval(t);
	levtab_interval(t, got);
	check_eq_u64(got[DATASRC_LVL_L1], 0);
	check(levtab_page(t, 2, 1, got));	/* per page: since reset */
	check_eq_u64(got[datasrc_level(src[7 % LT_SRCS])], 1);
	levtab_reset(t);
	check_eq_u64(levtab_count(t), 0);
	check(!levtab_page(t, 2, 1, got));
	levtab_free(t);
	stest_levels_cap(src[0]);
	stest_levels_bound(src[0]);
	stest_levels_merge(src[0]);
}

static void
stest_u64map(void)
{
	struct u64map m = { 0 };
	static int vals[3000];

	check(u64map_get(&m, 5) == NULL);
	for (int i = 0; i < 3000; i++)
		check(u64map_put(&m, (uint64_t)i * 4096, &vals[i]) == NULL);
	check_eq_u64(u64map_count(&m), 3000);
	check(u64map_get(&m, 4096 * 1234) == &vals[1234]);
	check(u64map_put(&m, 0, &vals[7]) == &vals[0]);
	check(u64map_get(&m, 0) == &vals[7]);
	check(u64map_get(&m, 1) == NULL);
	u64map_clear(&m, NULL);
	check_eq_u64(u64map_count(&m), 0);
	check(u64map_get(&m, 0) == NULL);
	u64map_clear(&m, NULL);
}

/*
 * The level table's sets: a heap's consecutive pages, and the same few
 * pages of many pids, must spread as at random, or full sets double the
 * table early (bits 32 up of the product, masked, crowded them: runs of
 * 2.8 and 38 slots in the linear-probing table before).  An unbounded
 * table grows when a new page finds its set full: at random 4-way sets
 * fill first at about 1/8 of the ways used, so the table must hold at
 * least 1/16 used here, and every page found at home or in its set.
 */
static void
stest_levels_spread(void)
{
	const struct spread_set *sets = spread_sets;
	const uint64_t src = DS(OP, LOAD) | DS(LVL, L1) | DS(LVL, HIT) |
			     DS(LVLNUM, L1);

	for (size_t k = 0; k < SPREAD_SETS; k++) {
		struct levtab *t = levtab_new(0);
		uint64_t used = 0, ways;

		if (!check(t != NULL))
			return;
		for (uint32_t p = 0; p < sets[k].pids; p++)
			for (uint64_t i = 0; i < sets[k].pages; i++)
				levtab_add(t, (int32_t)(300 + p),
					   sets[k].first + i, src);
		ways = t->n_sets * LEVTAB_WAYS;
		for (size_t i = 0; i < ways; i++) {
			const struct levtab_page *e = &t->slots[i];

			if (!e->key)
				continue;
			used++;
			check(((i ^ levtab_home(e->key, t->n_sets)) &
			       ~(size_t)(LEVTAB_WAYS - 1)) == 0);
		}
		check_eq_u64(used, (uint64_t)sets[k].pids * sets[k].pages);
		check_eq_u64(levtab_evicted(t), 0);
		if (!check(used * 16 >= ways))
			fprintf(stderr, "levtab spread: set %zu: %llu of %llu "
				"ways used\n", k, (unsigned long long)used,
				(unsigned long long)ways);
		levtab_free(t);
	}
}

int
main(void)
{
	stest_code();
	stest_code_model();
	stest_levels();
	stest_levels_spread();
	stest_u64map();
	return test_result();
}
