/*
 * Naming bounded by what a frame shows (issue 12, "Bounded naming work at
 * machine scale"): with a thousand processes sampled, one frame opens
 * /proc/PID/maps only for the processes of its top pages and of the
 * functions its code view can show, and the code view is still exactly
 * the one an unbounded walk gives (the oracle: the test's own sums of
 * what it added).  A pid whose maps could not be read is not opened again
 * while it is remembered, even once the name cache (NAMES_MAX_PROCS) has
 * let it go.  The pids lie above 2^22, where no process can be, so every
 * open fails and counts in names_stats.maps_failures (or, remembered,
 * in maps_skipped).  Between frames (the flushes' reads, for processes
 * gone before the frame) a process is read only when it has samples
 * enough to show a page or a code view function (aggr_proc_worth_naming).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "frame.h"
#include "framebuild.h"
#include "names.h"
#include "sides.h"
#include "testlib.h"
#include "topo.h"

#define BTEST_PID0	0x400010	/* above pid_max's ceiling, 2^22 */
#define BTEST_PROCS	1000
#define BTEST_TOP_K	10

static uint64_t
btest_failures(struct aggr *a)
{
	struct names_stats st;

	names_stats(sides_names(a->sides), &st);
	return st.maps_failures;
}

static uint64_t
btest_opens(struct aggr *a)
{
	struct names_stats st;

	names_stats(sides_names(a->sides), &st);
	/* A read skipped because the pid failed lately counts too: the
	 * pages' flushes before the frame have read (and failed) most. */
	return st.maps_reads + st.maps_failures + st.maps_skipped;
}

/* Process i's samples: two ips, (i % 37) + 1 samples in all. */
static uint64_t
btest_samples(int i)
{
	return (uint64_t)(i % 37) + 1;
}

static void
btest_fill(struct aggr *a)
{
	for (int i = 0; i < BTEST_PROCS; i++) {
		int32_t pid = BTEST_PID0 + i;

		for (uint64_t k = 0; k < btest_samples(i); k++) {
			struct sample s = { .period = 1, .pid = pid,
					    .tid = pid, .cpu = 0,
					    .kind = SAMPLE_LOAD };

			s.ip = 0x401000 + 0x1000 * (k & 1);
			s.addr = (0x7f0000000ull + (uint64_t)i) << 12;
			aggr_add(a, &s);
		}
	}
	/* Flushes read the pids that new pages marked (a bounded number
	 * a call) until none is due: what follows is the frame's own. */
	for (int i = 0; i < 16; i++)
		aggr_flush(a);
}

static int
btest_cmp(const void *pa, const void *pb)
{
	int x = *(const int *)pa, y = *(const int *)pb;
	uint64_t sx = btest_samples(x), sy = btest_samples(y);

	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x - y;
}

/* A frame of the top BTEST_TOP_K pages by samples. */
static struct frame_meta
btest_meta(void)
{
	static const char *const events[] = { "mem-loads" };
	struct frame_meta m = {
		.seq = 1, .time = 1.0, .interval = 1.0, .source = "pebs",
		.events = events, .n_events = 1, .period = 1,
		.sort = SORT_SAMPLES, .top_k = BTEST_TOP_K, .exit_status = -1,
	};

	return m;
}

static void
btest_code_view(const struct topo *topo)
{
	struct frame_meta m = btest_meta();
	int order[BTEST_PROCS];
	uint64_t before;
	struct frame *f;
	struct aggr a;

	if (!check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0) ||
	    !check_eq_i64(aggr_procs_config(&a, 2 * BTEST_PROCS, false), 0))
		return;
	btest_fill(&a);
	before = btest_opens(&a);
	f = frame_build(&a, &m);
	if (!check(f != NULL)) {
		aggr_fini(&a);
		return;
	}
	/* Each shown page's pid, each shown function's: no other. */
	check(btest_opens(&a) - before <= BTEST_TOP_K + FRAME_CODE_SITES);
	/* No such pids: every read tried failed, and the frame says so. */
	check(f->names_maps_failed > 0);
	check_eq_u64(f->names_maps_failed, btest_failures(&a));
	printf("# %llu reads tried for %d processes\n",
		  (unsigned long long)(btest_opens(&a) - before), BTEST_PROCS);
	for (int i = 0; i < BTEST_PROCS; i++)
		order[i] = i;
	qsort(order, BTEST_PROCS, sizeof(order[0]), btest_cmp);
	check_eq_u64(f->n_code_sites, FRAME_CODE_SITES);
	for (size_t i = 0; i < f->n_code_sites; i++) {
		const struct frame_code_site *cs = &f->code_sites[i];

		check_eq_i64(cs->pid, BTEST_PID0 + order[i]);
		check_eq_u64(cs->samples, btest_samples(order[i]));
		check(cs->function == NULL);
		check(cs->module && strcmp(cs->module, "[unknown]") == 0);
	}
	frame_free(f);
	aggr_fini(&a);
}

/* n samples of pid on its page k (k < 16). */
static void
btest_add(struct aggr *a, int32_t pid, int k, int n)
{
	for (int i = 0; i < n; i++) {
		struct sample s = { .period = 1, .pid = pid, .tid = pid,
				    .cpu = 0, .kind = SAMPLE_LOAD };

		s.ip = 0x401000;
		s.addr = (0x7f0000000ull + (uint64_t)k) << 12;
		aggr_add(a, &s);
	}
}

/*
 * Between frames, maps are read only for processes that can show a page
 * or a code view function.  procs processes with 50, 51, ... samples on
 * a page of their own and one function each: with FRAME_CODE_SITES of
 * them, the frame's pages have 60 to 69 samples but its code view (full
 * at FRAME_CODE_SITES) reaches down to 50, so a process with fewer than
 * 50 samples this interval is not read, one with 50 is (not yet a page,
 * but a function).  With fewer processes, or a longer page list
 * (top_k), the page list or the code view is not full and any process
 * can show: one with 1 sample is read.
 */
static void
btest_background_bar(const struct topo *topo, int procs, size_t top_k)
{
	struct frame_meta m = btest_meta();
	const int32_t cold0 = BTEST_PID0 + 5000, hot = BTEST_PID0 + 9000;
	uint64_t before;
	struct frame *f;
	struct aggr a;

	m.top_k = top_k;
	if (!check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0))
		return;
	for (int i = 0; i < procs; i++)
		btest_add(&a, BTEST_PID0 + 3000 + i, 0, 50 + i);
	aggr_flush(&a);
	f = frame_build(&a, &m);
	check(f && f->n_pages == ((size_t)procs < top_k ? (size_t)procs :
							     top_k));
	check(f && f->n_code_sites ==
		   (size_t)(procs < FRAME_CODE_SITES ? procs :
						       FRAME_CODE_SITES));
	frame_free(f);
	aggr_next_interval(&a);
	before = btest_opens(&a);
	if (procs < FRAME_CODE_SITES || (size_t)procs < top_k) {
		btest_add(&a, cold0, 1, 1);
		aggr_flush(&a);
		check_eq_u64(btest_opens(&a) - before, 1);
		aggr_fini(&a);
		return;
	}
	for (int i = 0; i < BTEST_PROCS; i++)
		btest_add(&a, cold0 + i, 1, 1 + i % 49);
	for (int i = 0; i < 16; i++)
		aggr_flush(&a);
	check_eq_u64(btest_opens(&a) - before, 0);
	btest_add(&a, hot, 1, 50);
	for (int i = 0; i < 16; i++)
		aggr_flush(&a);
	check_eq_u64(btest_opens(&a) - before, 1);
	aggr_fini(&a);
}

/*
 * The page list's bar below the code view's: FRAME_CODE_SITES processes
 * with 100, 101, ... samples on one page each, and one with 15 pages of
 * 40 samples.  The 30-page list ends with 10 of those 40-sample pages,
 * while the code view's least function has 101 samples: a process with
 * 40 samples is read between frames (it can show a page), one with 39
 * is not.
 */
static void
btest_page_bar(const struct topo *topo)
{
	struct frame_meta m = btest_meta();
	const int32_t wide = BTEST_PID0 + 4000, cold0 = BTEST_PID0 + 5000;
	uint64_t before;
	struct frame *f;
	struct aggr a;

	m.top_k = FRAME_CODE_SITES + 10;
	if (!check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0))
		return;
	for (int i = 0; i < FRAME_CODE_SITES; i++)
		btest_add(&a, BTEST_PID0 + 3000 + i, 0, 100 + i);
	for (int k = 0; k < 15; k++)
		btest_add(&a, wide, k, 40);
	aggr_flush(&a);
	f = frame_build(&a, &m);
	check(f && f->n_pages == m.top_k &&
	      f->pages[m.top_k - 1].samples == 40);
	check(f && f->n_code_sites == FRAME_CODE_SITES &&
	      f->code_sites[FRAME_CODE_SITES - 1].samples == 101);
	frame_free(f);
	aggr_next_interval(&a);
	before = btest_opens(&a);
	for (int i = 0; i < BTEST_PROCS; i++)
		btest_add(&a, cold0 + i, 1, 1 + i % 39);
	for (int i = 0; i < 16; i++)
		aggr_flush(&a);
	check_eq_u64(btest_opens(&a) - before, 0);
	btest_add(&a, cold0 + BTEST_PROCS, 1, 40);
	for (int i = 0; i < 16; i++)
		aggr_flush(&a);
	check_eq_u64(btest_opens(&a) - before, 1);
	aggr_fini(&a);
}

/* Past the cache: every pid's failed read is remembered, not retried. */
static void
btest_failed_remembered(const struct topo *topo)
{
	const int n_pids = 3 * NAMES_MAX_PROCS;
	struct names_stats st0, st1, st2;
	struct names *n;
	struct aggr a;

	if (!check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0))
		return;
	n = sides_names(a.sides);
	names_stats(n, &st0);
	for (int i = 0; i < n_pids; i++)
		names_prepare(n, BTEST_PID0 + i);
	names_stats(n, &st1);
	check_eq_u64(st1.maps_failures - st0.maps_failures, (uint64_t)n_pids);
	for (int i = 0; i < n_pids; i++)
		names_prepare(n, BTEST_PID0 + i);
	names_stats(n, &st2);
	check_eq_u64(st2.maps_failures, st1.maps_failures);
	check_eq_u64(st2.maps_reads, st1.maps_reads);
	/* The evicted ones come back remembered (the cached ones are
	 * known gone and never ask). */
	check(st2.maps_skipped - st1.maps_skipped >=
	      (uint64_t)(n_pids - NAMES_MAX_PROCS));
	aggr_fini(&a);
}

int
main(void)
{
	static const int cpu_node[2] = { 0, 0 };
	struct topo *topo = topo_new_fake(2, cpu_node);

	if (!check(topo != NULL))
		return test_result();
	btest_code_view(topo);
	btest_failed_remembered(topo);
	btest_background_bar(topo, FRAME_CODE_SITES, BTEST_TOP_K);
	btest_background_bar(topo, FRAME_CODE_SITES - 1, BTEST_TOP_K);
	btest_background_bar(topo, BTEST_TOP_K - 1, BTEST_TOP_K);
	btest_background_bar(topo, FRAME_CODE_SITES, FRAME_CODE_SITES + 1);
	btest_page_bar(topo);
	topo_free(topo);
	return test_result();
}
