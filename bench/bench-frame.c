/*
 * Frame benchmark: frame_build() (top K pages, per-node, per-CPU, per-
 * thread, matrix, names of the listed pages) with 1 Mi and 10 Mi tracked
 * pages, on a fake 8-CPU, 2-node topology without move_pages.
 *
 * Every page is inserted once, then a Zipf(0.99) stream of 2 M samples
 * (fixed seed) gives the pages their history; each measured frame covers
 * an interval of another 1 M samples, so about a tenth of the table is
 * current and the rest is history, as in a long live session.  Frames
 * are built by samples (the default sort) and by total, with K = 1000
 * and K = 20 (batch default), five times each; the median and the worst
 * are printed.  A third table of 256 Ki pages takes one sample on every
 * page in the measured interval, as a uniform refault does live: every
 * key ties at 1, the top-K scan's worst case; its pages lie in 16 mapping
 * objects a process, so the frame's objects view walks them too.
 * --quick: sizes / 100; --uniform: that table alone.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "benchlib.h"
#include "frame.h"
#include "objtab.h"
#include "framebuild.h"
#include "pagetab.h"
#include "topo.h"

#define BENCH_CPUS		8
#define BENCH_PIDS		4
#define BENCH_THREADS		4
#define BENCH_PID0		4000000	/* no such processes: see bench-ingest */
#define BENCH_PAGE0		0x7f0000000ull
#define BENCH_SEED		0x6672616d65ull
#define BENCH_HISTORY		(2u << 20)
#define BENCH_INTERVAL		(1u << 20)
#define BENCH_REPS		5
#define BENCH_OBJECTS		16	/* a process, uniform case */

static void
bench_add(struct aggr *a, size_t p, uint64_t h)
{
	struct sample s = { .period = 1, .ip = 0x400000 + (h % 512) * 16 };

	s.pid = BENCH_PID0 + 8 * (int32_t)(p % BENCH_PIDS);
	s.tid = s.pid + (int32_t)((h >> 16) % BENCH_THREADS);
	s.cpu = (int32_t)((h >> 8) % BENCH_CPUS);
	s.kind = (h >> 24) % 10 < 3 ? SAMPLE_STORE : SAMPLE_LOAD;
	s.addr = (BENCH_PAGE0 + p / BENCH_PIDS) << 12 | ((h >> 32) & 0xfc0);
	aggr_add(a, &s);
}

static void
bench_stream(struct aggr *a, const uint32_t *perm, size_t pages, size_t len,
	     struct benchlib_rng *r)
{
	struct benchlib_zipf z;

	benchlib_zipf_init(&z, 0.99, pages);
	for (size_t i = 0; i < len; i++)
		bench_add(a, perm[benchlib_zipf_draw(&z, r)], benchlib_rand(r));
	aggr_flush(a);
}

static int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Builds BENCH_REPS frames; prints the median and worst wall time. */
static int
bench_frames(struct aggr *a, enum sort_key sort, size_t k, double target_ms)
{
	static const char *const events[] = { "page-faults" };
	struct frame_meta m = {
		.time = 1.0, .interval = 1.0, .source = "faults",
		.events = events, .n_events = 1, .period = 1, .sort = sort,
		.top_k = k, .exit_status = -1,
	};
	double ms[BENCH_REPS], cpu_ms[BENCH_REPS];
	size_t n_pages = 0;

	for (int rep = 0; rep < BENCH_REPS; rep++) {
		struct frame *f;
		uint64_t c0 = benchlib_thread_cpu_ns();
		double t0 = benchlib_now();

		m.seq = (uint64_t)rep + 1;
		f = frame_build(a, &m);
		ms[rep] = (benchlib_now() - t0) * 1e3;
		cpu_ms[rep] = (double)(benchlib_thread_cpu_ns() - c0) / 1e6;
		if (!f)
			return -1;
		n_pages = f->n_pages;
		frame_free(f);
	}
	qsort(ms, BENCH_REPS, sizeof(ms[0]), bench_cmp_double);
	qsort(cpu_ms, BENCH_REPS, sizeof(cpu_ms[0]), bench_cmp_double);
	printf("  K=%-4zu by %-7s %8.2f ms median (cpu %.2f), worst %.2f ms",
	       k, sort == SORT_TOTAL ? "total" : "samples", ms[BENCH_REPS / 2],
	       cpu_ms[BENCH_REPS / 2], ms[BENCH_REPS - 1]);
	if (target_ms > 0)
		printf("  target <= %.0f ms", target_ms);
	printf("  (%zu pages listed)\n", n_pages);
	return n_pages == k ? 0 : -1;
}

/* The measured interval: one sample a page (uniform) or a Zipf stream. */
static void
bench_interval(struct aggr *a, const uint32_t *perm, size_t pages,
	       size_t divisor, bool uniform, struct benchlib_rng *r)
{
	if (!uniform) {
		bench_stream(a, perm, pages, BENCH_INTERVAL / divisor, r);
		return;
	}
	for (size_t i = 0; i < pages; i++)
		bench_add(a, perm[i], benchlib_rand(r));
	aggr_flush(a);
}

/* BENCH_OBJECTS mappings a process tiling its pages, one site each. */
static struct objtab *
bench_objects(size_t pages)
{
	struct objtab *t = objtab_new(0);
	uint64_t span = (pages / BENCH_PIDS + BENCH_OBJECTS) / BENCH_OBJECTS;

	for (int p = 0; t && p < BENCH_PIDS; p++)
		for (uint64_t j = 0; j < BENCH_OBJECTS; j++) {
			struct obj o = {
				.base = (BENCH_PAGE0 + j * span) << 12,
				.size = span << 12, .tid = 1,
				.alloc_size = span << 12,
			};
			int64_t site = objtab_site_intern(t, "bench_map+0x10",
							  NULL, 0);

			if (site < 0 || (o.site = (uint32_t)site,
					 objtab_map(t, BENCH_PID0 + 8 * p,
						    &o) < 0)) {
				objtab_free(t);
				return NULL;
			}
		}
	return t;
}

static int
bench_size(const struct topo *topo, size_t pages, size_t divisor,
	   bool uniform, double target_ms)
{
	struct benchlib_rng rng = { BENCH_SEED ^ pages };
	uint32_t *perm = benchlib_permutation(pages, &rng);
	struct aggr a;
	double t0;
	int rc = -1;

	if (!perm || aggr_init(&a, topo, NULL, 12, 0) < 0) {
		free(perm);
		return -1;
	}
	if (uniform && !(a.objects = bench_objects(pages))) {
		aggr_fini(&a);
		free(perm);
		return -1;
	}
	t0 = benchlib_now();
	for (size_t i = 0; i < pages; i++)
		bench_add(&a, perm[i], benchlib_rand(&rng));
	bench_stream(&a, perm, pages, BENCH_HISTORY / divisor, &rng);
	aggr_next_interval(&a);
	bench_interval(&a, perm, pages, divisor, uniform, &rng);
	printf("\n== %zu tracked pages (%zu B of page table), %zu samples "
	       "this interval%s, set up in %.1f s ==\n",
	       pagetab_count(a.pages), pagetab_bytes(a.pages),
	       uniform ? pages : BENCH_INTERVAL / divisor,
	       uniform ? " (one a page)" : "", benchlib_now() - t0);
	if (bench_frames(&a, SORT_SAMPLES, 1000, target_ms) == 0 &&
	    bench_frames(&a, SORT_TOTAL, 1000, target_ms) == 0 &&
	    bench_frames(&a, SORT_SAMPLES, 20, 0) == 0)
		rc = 0;
	else
		fprintf(stderr, "bench-frame: frame_build failed or listed "
			"too few pages\n");
	objtab_free(a.objects);
	a.objects = NULL;
	aggr_fini(&a);
	free(perm);
	return rc;
}

int
main(int argc, char **argv)
{
	static const int cpu_node[BENCH_CPUS] = { 0, 0, 0, 0, 1, 1, 1, 1 };
	const struct { size_t pages; bool uniform; double target_ms; }
	sizes[] = {
		{ 1u << 20, false, 10 }, { 10u << 20, false, 100 },
		{ 256u << 10, true, 0 },
	};
	bool uniform_only = argc == 2 && strcmp(argv[1], "--uniform") == 0;
	size_t divisor;
	struct topo *topo;
	int rc = 0;

	divisor = uniform_only ? 1 : benchlib_quick_divisor(argc, argv);
	if (divisor == 0)
		return 2;
	topo = topo_new_fake(BENCH_CPUS, cpu_node);
	if (!topo)
		return 1;
	printf("memtop frame benchmark%s\n", divisor > 1 ?
	       " (--quick: sizes / 100; targets apply to the full run)" : "");
	benchlib_print_machine();
	for (size_t i = uniform_only ? 2 : 0;
	     i < sizeof(sizes) / sizeof(sizes[0]) && rc == 0; i++)
		if (bench_size(topo, sizes[i].pages / divisor, divisor,
			       sizes[i].uniform, sizes[i].target_ms) < 0)
			rc = 1;
	topo_free(topo);
	return rc;
}
