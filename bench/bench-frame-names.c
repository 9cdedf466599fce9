/*
 * Frame building with names on and off at 1 Mi tracked pages (10 Ki with
 * --quick, which `meson test --benchmark` uses): ingest cost per sample
 * (page table alone vs page table plus code sites, line heat and code
 * table), and milliseconds per frame for the top 20 and top 500 pages,
 * first frame (maps read, ELF files opened and indexed) and later frames
 * (cached names).  The first frame after the ingest also pays for the
 * page table's incremental growth, with names or without.
 *
 * The pages are this process's own: most in a 4 GiB PROT_NONE reservation
 * ([anon], no memory behind it), the hottest ones in a .bss array with a
 * symbol, so naming does real maps and symbol work.  Each sample carries
 * an ip inside one of this program's functions or libc's.
 *
 * Budget: a frame should take at most 10 % of the default 1 s interval,
 * 100 ms, names included.  The figures are printed beside it; the exit
 * status is 1 when a full-size frame with names exceeds it.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "aggr.h"
#include "base.h"
#include "frame.h"
#include "framebuild.h"
#include "sides.h"
#include "topo.h"

#define BENCH_BUDGET_MS		100.0
#define BENCH_HOT_PAGES		64
#define BENCH_RESERVE		(4ull << 30)
#define BENCH_FRAMES		5

/* The hot pages: named "bench_hot_table+0x...". */
__attribute__((aligned(4096))) char bench_hot_table[BENCH_HOT_PAGES * 4096];

struct bench_run {
	double ingest_ns;	/* per sample */
	double first_ms[2];	/* top 20, top 500 */
	double later_ms[2];
	uint64_t named;		/* pages of the last frame with a region */
	uint64_t symbols;	/* ... with a symbol */
};

static double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t
bench_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static struct frame *
bench_frame(struct aggr *a, size_t k, uint64_t seq)
{
	static const char *const events[] = { "page-faults" };
	struct frame_meta m = {
		.seq = seq, .time = (double)seq, .interval = 1.0,
		.source = "faults", .events = events, .n_events = 1,
		.period = 1, .sort = SORT_TOTAL, .top_k = k,
		.exit_status = -1,
	};

	return frame_build(a, &m);
}

static void
bench_one(const struct topo *topo, size_t pages, char *reserve,
	  const uint64_t *ips, size_t n_ips, bool names,
	  struct bench_run *r)
{
	static const size_t ks[2] = { 20, 500 };
	struct aggr a;
	uint64_t seed = 42, n = 0, seq = 0;
	int32_t pid = (int32_t)getpid();
	double t0;

	if (aggr_init(&a, topo, NULL, 12, 0) < 0) {
		fprintf(stderr, "bench-frame-names: out of memory\n");
		exit(1);
	}
	if (!names) {
		sides_free(a.sides);
		a.sides = NULL;
	}
	t0 = bench_now();
	for (size_t i = 0; i < pages; i++) {
		struct sample s = { .pid = pid, .tid = pid, .cpu = 0,
				    .kind = SAMPLE_LOAD, .period = 1 };
		uint64_t rnd = bench_rand(&seed);
		/* The first pages are the hot ones (1 to 64 samples each,
		 * in the .bss table); every other page gets one sample. */
		int reps = i < BENCH_HOT_PAGES ? 1 + (int)(rnd % 64) : 1;

		for (int k = 0; k < reps; k++) {
			s.addr = i < BENCH_HOT_PAGES ?
				 (uintptr_t)bench_hot_table + i * 4096 +
				 (rnd >> 20) % 4096 :
				 (uintptr_t)reserve +
				 (i % (BENCH_RESERVE >> 12)) * 4096;
			s.ip = ips[(rnd >> 8) % n_ips];
			aggr_add(&a, &s);
			n++;
		}
	}
	aggr_flush(&a);
	r->ingest_ns = (bench_now() - t0) * 1e9 / (double)n;
	for (int f = 0; f < 2 * BENCH_FRAMES; f++) {
		size_t ki = (size_t)f / BENCH_FRAMES;
		struct frame *fr;
		double ms;

		t0 = bench_now();
		fr = bench_frame(&a, ks[ki], ++seq);
		ms = (bench_now() - t0) * 1e3;
		if (!fr) {
			fprintf(stderr, "bench-frame-names: out of memory\n");
			exit(1);
		}
		if (f % BENCH_FRAMES == 0)
			r->first_ms[ki] = ms;
		else
			r->later_ms[ki] += ms / (BENCH_FRAMES - 1);
		r->named = r->symbols = 0;
		for (size_t i = 0; i < fr->n_pages; i++) {
			r->named += fr->pages[i].region != NULL;
			r->symbols += fr->pages[i].symbol != NULL;
		}
		frame_free(fr);
		aggr_next_interval(&a);
	}
	aggr_fini(&a);
}

int
main(int argc, char **argv)
{
	static const int cpu_node[2] = { 0, 0 };
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	size_t pages = quick ? 10240 : 1u << 20;
	struct topo *topo = topo_new_fake(2, cpu_node);
	uint64_t ips[] = {
		(uintptr_t)bench_one + 16, (uintptr_t)bench_frame + 8,
		(uintptr_t)bench_rand + 4, (uintptr_t)main + 32,
		(uintptr_t)qsort + 8, (uintptr_t)memcpy + 8,
		(uintptr_t)frame_build + 24,
	};
	struct bench_run off = { 0 }, on = { 0 };
	char *reserve;
	bool over;

	reserve = mmap(NULL, BENCH_RESERVE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (reserve == MAP_FAILED || !topo) {
		fprintf(stderr, "bench-frame-names: cannot reserve 4 GiB of "
			"address space\n");
		return 1;
	}
	memset(bench_hot_table, 1, sizeof(bench_hot_table));
	bench_one(topo, pages, reserve, ips, ARRAY_SIZE(ips),
		  false, &off);
	bench_one(topo, pages, reserve, ips, ARRAY_SIZE(ips),
		  true, &on);
	printf("bench-frame-names: %zu tracked pages%s, budget %.0f ms per "
	       "frame\n", pages, quick ? " (--quick)" : "",
	       BENCH_BUDGET_MS);
	printf("  ingest            %7.1f ns/sample without names, %7.1f "
	       "with (sites, lines, code table)\n", off.ingest_ns,
	       on.ingest_ns);
	for (int k = 0; k < 2; k++)
		printf("  frame top %-4d    first %7.2f ms, later %7.2f ms "
		       "without names; first %7.2f ms, later %7.2f ms with\n",
		       k ? 500 : 20, off.first_ms[k], off.later_ms[k],
		       on.first_ms[k], on.later_ms[k]);
	printf("  last frame: %" PRIu64 " pages with a region, %" PRIu64
	       " with a symbol\n", on.named, on.symbols);
	over = on.first_ms[1] > BENCH_BUDGET_MS ||
	       on.later_ms[1] > BENCH_BUDGET_MS;
	printf("  within budget: %s\n", over ? "NO" : "yes");
	munmap(reserve, BENCH_RESERVE);
	topo_free(topo);
	return over && !quick ? 1 : 0;
}
