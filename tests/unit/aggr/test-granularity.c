/*
 * Granularity: names and cycling, and the page table rebuilt at 2 MiB and
 * 1 GiB with counters folded (interval ones only when current), code
 * sites folded, line heat restarted, and a finer granularity starting
 * empty while frame totals stay.  Fake topology, a pid that does not
 * exist (so names stay NULL without touching /proc of a real process).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "aggr.h"
#include "aggr-test.h"
#include "aggr_granularity.h"
#include "frame.h"
#include "framebuild.h"
#include "granularity.h"
#include "pagetab.h"
#include "sides.h"
#include "testlib.h"
#include "topo.h"

/* No process has it (pids stay below 2^22), and the page table can key
 * it (below 2^23). */
#define GTEST_PID 0x7ffff0

/* The pages of the scenario: A's 4 KiB pages fold into one 2 MiB page. */
static const uint64_t A = 0x40200000, B = 0x40400000;

static void
gtest_add(struct aggr *a, uint64_t addr, uint64_t ip, uint8_t kind)
{
	struct sample s = { .addr = addr, .ip = ip, .pid = GTEST_PID,
			    .tid = GTEST_PID, .cpu = 0, .kind = kind,
			    .period = 1 };

	aggr_add(a, &s);
}

static struct frame *
gtest_build(struct aggr *a, uint64_t seq)
{
	struct frame_meta m = ftest_meta("faults", seq, SORT_TOTAL, 10);
	struct frame *f = frame_build(a, &m);

	aggr_next_interval(a);
	return f;
}

static void
gtest_names(void)
{
	unsigned s = 0;

	check_eq_i64(granularity_parse("4k", &s), 0);
	check_eq_u64(s, 12);
	check_eq_i64(granularity_parse("2M", &s), 0);
	check_eq_u64(s, 21);
	check_eq_i64(granularity_parse("1GiB", &s), 0);
	check_eq_u64(s, 30);
	check_eq_i64(granularity_parse("4096", &s), 0);
	check_eq_u64(s, 12);
	check_eq_i64(granularity_parse("3m", &s), -EINVAL);
	check_eq_i64(granularity_parse("", &s), -EINVAL);
	check_eq_u64(granularity_next(12), 21);
	check_eq_u64(granularity_next(21), 30);
	check_eq_u64(granularity_next(30), 12);
	check_eq_u64(granularity_next(16), 12);
	check_eq_str(granularity_name(21), "2 MiB");
	check_eq_str(granularity_name(13), "?");
}

/* Interval 1 at 4 KiB: sites, line heat, the code view. */
static void
gtest_4k(struct aggr *a)
{
	struct frame *f;

	for (int i = 0; i < 3; i++)
		gtest_add(a, A + 0x10, 0x1111, SAMPLE_LOAD);
	gtest_add(a, A + 0x1000, 0x2222, SAMPLE_STORE);
	gtest_add(a, A + 0x1040, 0x2222, SAMPLE_STORE);
	gtest_add(a, B, 0, SAMPLE_OTHER);
	f = gtest_build(a, 1);
	check_eq_u64(f->granularity, 4096);
	check_eq_u64(f->n_pages, 3);
	check_eq_u64(f->pages[0].addr, A);
	check_eq_u64(f->pages[0].n_sites, 1);
	check_eq_u64(f->pages[0].sites[0].ip, 0x1111);
	check_eq_u64(f->pages[0].sites[0].samples, 3);
	check_eq_u64(f->pages[0].sites_other, 0);
	check(f->pages[0].lines && f->pages[0].lines[0] == 3);
	check(f->pages[0].region == NULL && f->pages[0].symbol == NULL);
	check_eq_u64(f->pages[2].addr, B);
	check_eq_u64(f->pages[2].n_sites, 0);	/* no ip */
	check_eq_u64(f->pages[2].sites_other, 1);
	check_eq_u64(f->code_unknown, 1);
	/* The process never existed: its ips have no region either, and
	 * add up under one unknown function. */
	check_eq_u64(f->n_code_sites, 1);
	check_eq_u64(f->code_sites[0].total, 5);
	check(f->code_sites[0].function == NULL);
	check_eq_str(f->code_sites[0].module, "[unknown]");
	frame_free(f);
}

/* Interval 2: one more sample on A's second page, then 2 MiB. */
static void
gtest_2m(struct aggr *a)
{
	char why[256] = "";
	struct frame *f;

	gtest_add(a, A + 0x1080, 0x2222, SAMPLE_STORE);
	check_eq_i64(aggr_granularity_apply(a, 21, 0), 0);
	check_eq_u64(pagetab_page_shift(a->pages), 21);
	check_eq_u64(pagetab_count(a->pages), 2);
	gtest_add(a, A + 0x48000, 0x3333, SAMPLE_LOAD);
	f = gtest_build(a, 2);
	check_eq_i64(frame_check(f, why, sizeof(why)), 0);
	check_eq_u64(f->granularity, 2u << 20);
	check_eq_u64(f->n_pages, 2);
	check_eq_u64(f->pages[0].addr, 0x40200000);
	check_eq_u64(f->pages[0].size, 2u << 20);
	check_eq_u64(f->pages[0].total, 7);
	/* This interval: the store before the switch and the load after. */
	check_eq_u64(f->pages[0].stores, 1);
	check_eq_u64(f->pages[0].loads, 1);
	check_eq_u64(f->pages[0].n_sites, 3);
	check_eq_u64(f->pages[0].sites[0].ip, 0x1111);
	check_eq_u64(f->pages[0].sites[0].samples, 3);
	check_eq_u64(f->pages[0].sites[1].ip, 0x2222);
	check_eq_u64(f->pages[0].sites[1].samples, 3);
	check_eq_u64(f->pages[0].sites_other, 0);
	/* Line heat restarted: only the load at +0x48000 (line 9). */
	check(f->pages[0].lines && f->pages[0].lines[9] == 1 &&
	      f->pages[0].lines[0] == 0);
	frame_free(f);
}

/* 1 GiB: everything in one page; the same shift again is a no-op. */
static void
gtest_1g(struct aggr *a)
{
	struct frame *f;

	check_eq_i64(aggr_granularity_apply(a, 30, 0), 0);
	check_eq_i64(aggr_granularity_apply(a, 30, 0), 0);
	check_eq_i64(aggr_granularity_apply(a, 13, 0), -EINVAL);
	f = gtest_build(a, 3);
	check_eq_u64(f->n_pages, 1);
	check_eq_u64(f->pages[0].addr, 0x40000000);
	check_eq_u64(f->pages[0].total, 8);
	check_eq_u64(f->pages[0].samples, 0);
	check_eq_u64(f->cumulative.samples, 8);
	frame_free(f);
}

/* Back to 4 KiB: counts cannot be split; the table starts empty,
 * cumulative totals stay. */
static void
gtest_back_4k(struct aggr *a)
{
	char why[256] = "";
	struct frame *f;

	check_eq_i64(aggr_granularity_apply(a, 12, 0), 0);
	gtest_add(a, B + 0x2000, 0x4444, SAMPLE_LOAD);
	f = gtest_build(a, 4);
	check_eq_u64(f->granularity, 4096);
	check_eq_u64(f->n_pages, 1);
	check_eq_u64(f->pages[0].addr, B + 0x2000);
	check_eq_u64(f->pages[0].total, 1);
	check_eq_u64(f->cumulative.samples, 9);
	check_eq_i64(frame_check(f, why, sizeof(why)), 0);
	frame_free(f);
}

/* Names off (replay): sites keep their ips, nothing is named, the code
 * view is empty. */
static void
gtest_names_off(const struct topo *topo)
{
	struct aggr a;
	struct frame *f;

	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	sides_names_off(a.sides);
	sides_names_off(a.sides);
	gtest_add(&a, A, 0x1111, SAMPLE_LOAD);
	f = gtest_build(&a, 1);
	check_eq_u64(f->n_pages, 1);
	check_eq_u64(f->pages[0].n_sites, 1);
	check(f->pages[0].sites[0].symbol == NULL);
	check(f->pages[0].region == NULL && f->pages[0].symbol == NULL);
	check(f->pages[0].lines != NULL);
	check_eq_u64(f->n_code_sites, 0);
	frame_free(f);
	aggr_fini(&a);
}

int
main(void)
{
	static const int cpu_node[2] = { 0, 0 };
	struct topo *topo = topo_new_fake(2, cpu_node);
	struct aggr a;

	gtest_names();
	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	gtest_4k(&a);
	gtest_2m(&a);
	gtest_1g(&a);
	gtest_back_4k(&a);
	aggr_fini(&a);
	gtest_names_off(topo);
	topo_free(topo);
	return test_result();
}
