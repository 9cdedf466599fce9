/*
 * The cost of naming objects (issue 18), two sides:
 *
 *   target: CPU ns per mmap + munmap pair of 64 KiB, alone and with the
 *     allocation event of collector/sources/source_alloc.c open on the
 *     calling thread (the kernel copies 4 KiB of stack, the registers and
 *     the call chain at each exit);
 *   collector: CPU us per record through allocs_record() (decode, the
 *     request to the unwind helper, site, object table), on a real
 *     sys_exit_mmap record of this process read back from its ring, and
 *     per munmap record; the unwind helper's CPU us per record (the DWARF
 *     walk with libdwfl, names) and the wall time per record.
 *
 * Needs the tracepoints (root): prints why and exits 0 without them.
 * --quick: 1/100 of the pairs and records.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "allocs_live.h"
#include "base.h"
#include "benchlib.h"
#include "ring.h"
#include "source.h"
#include "unwind.h"

#define BENCH_PAGES 32
#define BENCH_SIZE (64u << 10)

__attribute__((noinline)) static void *
bench_make(void)
{
	void *p = mmap(NULL, BENCH_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* CPU ns per pair (the thread's CPU time: the machine may be busy). */
static double
bench_pairs(size_t n)
{
	uint64_t t0 = benchlib_thread_cpu_ns();

	for (size_t i = 0; i < n; i++) {
		void *p = bench_make();

		if (p)
			munmap(p, BENCH_SIZE);
	}
	return (double)(benchlib_thread_cpu_ns() - t0) / (double)n;
}

struct bench_grab {
	unsigned char mmap_rec[SOURCE_ALLOC_STACK + 1024];
	unsigned char munmap_rec[SOURCE_ALLOC_STACK + 1024];
	uint64_t ids[SOURCE_ALLOC_EVENTS];
	bool have_mmap, have_munmap;
};

static int
bench_on_record(const struct perf_event_header *h, void *arg)
{
	struct bench_grab *g = arg;
	uint64_t id;

	if (h->type != PERF_RECORD_SAMPLE || h->size < 16)
		return 0;
	memcpy(&id, h + 1, sizeof(id));
	/* bench_pairs(1): its mmap's record, then its munmap's. */
	if (id == g->ids[0] && !g->have_mmap &&
	    h->size <= sizeof(g->mmap_rec)) {
		memcpy(g->mmap_rec, h, h->size);
		g->have_mmap = true;
	} else if (id == g->ids[0] && !g->have_munmap &&
		   h->size <= sizeof(g->munmap_rec)) {
		memcpy(g->munmap_rec, h, h->size);
		g->have_munmap = true;
	}
	return 0;
}

/* Opens the events on this thread: fds[], a ring on fds[0]. */
static int
bench_open(struct source *src, int *fds, void **map, struct ring *r,
	   struct bench_grab *g)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct open_params op = { .pid = 0, .cpu = -1, .group_fd = -1,
				  .period = 1 };

	/* SET_OUTPUT needs the ring mapped first. */
	for (size_t i = 0; i < src->n_alloc; i++) {
		fds[i] = source_open_event(&src->alloc[i], &op);
		if (fds[i] < 0 ||
		    ioctl(fds[i], PERF_EVENT_IOC_ID, &g->ids[i]) < 0)
			return -1;
		if (i == 0) {
			*map = mmap(NULL, (1 + BENCH_PAGES) * page,
				    PROT_READ | PROT_WRITE, MAP_SHARED, fds[0],
				    0);
			if (*map == MAP_FAILED ||
			    ring_init(r, *map, (1 + BENCH_PAGES) * page,
				      page) < 0)
				return -1;
			if (ioctl(fds[0], PERF_EVENT_IOC_SET_FILTER,
				  source_alloc_filter()) < 0)
				return -1;
		} else if (ioctl(fds[i], PERF_EVENT_IOC_SET_OUTPUT,
				 fds[0]) < 0) {
			return -1;
		}
	}
	for (size_t i = 0; i < src->n_alloc; i++)
		ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0);
	return 0;
}

/* CPU ns of process pid (the unwind helper), 0 when unreadable. */
static uint64_t
bench_proc_cpu_ns(int32_t pid)
{
	clockid_t clk;

	if (pid <= 0 || clock_getcpuclockid(pid, &clk) != 0)
		return 0;
	return base_clock_ns(clk);
}

static void
bench_collector(struct bench_grab *g, const struct source *src, size_t n)
{
	const struct perf_event_header *mm = (const void *)g->mmap_rec;
	const struct perf_event_header *mu = (const void *)g->munmap_rec;
	struct allocs_event ae = allocs_event_of(&src->alloc[0]);
	struct unwind_stats us;
	struct allocs a;
	uint64_t t0, t1, h0, h1;
	double w0, w1;

	if (allocs_init(&a, 0) < 0)
		return;
	allocs_record(&a, &ae, mm);	/* the first builds Dwfl */
	unwinder_stats(a.unw, &us);
	h0 = bench_proc_cpu_ns(us.pid);
	w0 = benchlib_now();
	t0 = benchlib_thread_cpu_ns();
	for (size_t i = 0; i < n; i++)
		allocs_record(&a, &ae, mm);
	t1 = benchlib_thread_cpu_ns();
	w1 = benchlib_now();
	h1 = bench_proc_cpu_ns(us.pid);
	unwinder_stats(a.unw, &us);
	printf("one at a time: collector %.1f CPU us per mmap record (decode, "
	       "request to the unwind helper, site, object table; %llu "
	       "unwound, %llu by call chain, %llu unknown)\n",
	       (double)(t1 - t0) / 1e3 / (double)n,
	       (unsigned long long)a.st.unwound,
	       (unsigned long long)a.st.chained,
	       (unsigned long long)a.st.unknown);
	printf("one at a time: unwind helper %.1f CPU us per mmap record "
	       "(DWARF walk, names); %.1f us wall per record, round trip "
	       "included; %llu helper starts, %llu failures, %llu fallback "
	       "frames\n",
	       (double)(h1 - h0) / 1e3 / (double)n,
	       (w1 - w0) * 1e6 / (double)n, (unsigned long long)us.starts,
	       (unsigned long long)us.failures,
	       (unsigned long long)us.fallbacks);
	/* A drain's burst: the walks in the helper together. */
	h0 = bench_proc_cpu_ns(us.pid);
	w0 = benchlib_now();
	t0 = benchlib_thread_cpu_ns();
	for (size_t i = 0; i < n; i++)
		allocs_queue(&a, &ae, mm);
	allocs_flush(&a);
	t1 = benchlib_thread_cpu_ns();
	w1 = benchlib_now();
	h1 = bench_proc_cpu_ns(us.pid);
	printf("in bursts (a drain): collector %.1f CPU us, helper %.1f CPU "
	       "us, %.1f us wall per mmap record\n",
	       (double)(t1 - t0) / 1e3 / (double)n,
	       (double)(h1 - h0) / 1e3 / (double)n,
	       (w1 - w0) * 1e6 / (double)n);
	t0 = benchlib_thread_cpu_ns();
	for (size_t i = 0; i < 100 * n; i++)
		allocs_record(&a, &ae, mu);
	t1 = benchlib_thread_cpu_ns();
	printf("collector: %.2f CPU us per munmap record\n",
	       (double)(t1 - t0) / 1e3 / (double)(100 * n));
	allocs_fini(&a);
}

int
main(int argc, char **argv)
{
	size_t div = benchlib_quick_divisor(argc, argv), pairs;
	int fds[SOURCE_ALLOC_EVENTS];
	struct bench_grab *g = calloc(1, sizeof(*g));
	struct ring_stats st = { 0 };
	struct source src;
	double alone, watched;
	void *map = NULL;
	struct ring r;

	if (div == 0 || !g)
		return 2;
	for (size_t i = 0; i < SOURCE_ALLOC_EVENTS; i++)
		fds[i] = -1;
	pairs = 200000 / div;
	benchlib_print_machine();
	memset(&src, 0, sizeof(src));
	if (source_alloc_init(&src) < 0) {
		printf("SKIP: %s\n", src.alloc_note);
		return 0;
	}
	alone = bench_pairs(pairs);
	if (bench_open(&src, fds, &map, &r, g) < 0) {
		printf("SKIP: cannot open the allocation events: %s\n",
		       strerror(errno));
		return 0;
	}
	bench_pairs(1);
	ring_drain(&r, bench_on_record, g, &st);
	watched = bench_pairs(pairs);
	printf("target: %.0f CPU ns per 64 KiB mmap+munmap alone, %.0f ns "
	       "watched: +%.0f ns (%zu pairs)\n", alone, watched,
	       watched - alone, pairs);
	if (g->have_mmap && g->have_munmap)
		bench_collector(g, &src, 20000 / div);
	else
		printf("collector: no record read back\n");
	for (size_t i = 0; i < SOURCE_ALLOC_EVENTS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(g);
	return 0;
}
