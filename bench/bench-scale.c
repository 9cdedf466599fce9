/*
 * Machine-scale figures (issue 12, "Scale"):
 *
 *   channels   512 CPUs x 2 events (a load and a store event, the PEBS
 *              layout), each channel a synthetic ring in ordinary memory
 *              (benchlib_ring, laid out as the kernel's): opening them
 *              (ring and mapping set up), one drain of every ring through
 *              ingest_drain into the aggregation after the rings were
 *              filled, and closing them.  This machine opens 2 for real.
 *              Sums: samples written == samples queued == the frame's.
 *   processes  one frame (frame_build) with 10 000 live processes, two
 *              threads and a few pages each: milliseconds per frame
 *              against the 20 ms budget, and the bytes a process row
 *              costs: in the process table (heap growth per row, malloc's
 *              own accounting) and in the frame (struct frame_process and
 *              its node counts).  Budget 256 bytes each.  Twice: side
 *              tables off (the process rows alone), then on (names and
 *              the code view, which name only the processes whose
 *              samples can place a function in the view, or a page in
 *              the top: here pids that do not exist, so each is one
 *              failed open of /proc/PID/maps, not retried for a while).
 *              With names on, the /proc/PID/maps opens are counted: those
 *              of the ingest's flushes (a pid whose new page lies outside
 *              its known regions) and those of the frames; then those
 *              of as many new processes with one sample each, too few to
 *              show a page in the next frame (none should be read).
 *              Wall time and the thread's CPU time, median of 9.
 *
 * Exit status 1 when a sum does not hold; budgets are printed, not
 * enforced.  --quick: 64 CPUs and 1 000 processes.
 */
#include "config.h"

#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "benchlib.h"
#include "frame.h"
#include "framebuild.h"
#include "ingest-build.h"
#include "ingest.h"
#include "names.h"
#include "proctab.h"
#include "sides.h"
#include "topo.h"

#define BENCH_CPUS_FULL		512
#define BENCH_EVENTS		2
#define BENCH_RING_PAGES	8	/* 32 KiB: room for the batch below */
#define BENCH_PER_RING		256	/* samples written to each ring */
#define BENCH_PROCS_FULL	10000
#define BENCH_PID0		4000000	/* no such processes */
#define BENCH_PAGES_PER_PROC	4
#define BENCH_REPS		9
#define BENCH_FRAME_BUDGET_MS	20.0
#define BENCH_ROW_BUDGET	256

static int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static size_t
bench_heap(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static int
bench_channels(const struct topo *topo, int cpus)
{
	size_t n = (size_t)cpus * BENCH_EVENTS;
	struct benchlib_ring *rings = calloc(n, sizeof(*rings));
	struct source src;
	struct channel_events ch;
	struct ingest in;
	struct aggr a;
	struct rec r;
	uint64_t written = 0;
	double t0, t_open, t_fill, t_drain, t_close;
	int rc = 0;

	if (!rings || aggr_init(&a, topo, NULL, 12, 0) < 0) {
		free(rings);
		return -1;
	}
	rec_setup(&src, &ch, 2);
	ingest_init(&in, &a);
	t0 = benchlib_now();
	for (size_t i = 0; i < n; i++)
		if (benchlib_ring_init(&rings[i], BENCH_RING_PAGES) < 0)
			rc = -1;
	t_open = benchlib_now() - t0;
	t0 = benchlib_now();
	for (size_t i = 0; i < n && rc == 0; i++) {
		/* Ring i is CPU i / 2's load (even) or store (odd) event. */
		uint64_t id = i % 2 ? 12 : 11;

		for (unsigned k = 0; k < BENCH_PER_RING; k++) {
			const struct perf_event_header *h =
				rec_pebs(&r, id, (0x7f0000000ull + k) << 12, 30);

			benchlib_ring_put(&rings[i], h, h->size);
			written++;
		}
		benchlib_ring_publish(&rings[i]);
	}
	t_fill = benchlib_now() - t0;
	t0 = benchlib_now();
	for (size_t i = 0; i < n && rc == 0; i++)
		ingest_drain(&in, &ch, &rings[i].ring, 1, NULL, NULL, NULL);
	aggr_flush(&a);
	t_drain = benchlib_now() - t0;
	t0 = benchlib_now();
	for (size_t i = 0; i < n; i++)
		benchlib_ring_fini(&rings[i]);
	t_close = benchlib_now() - t0;
	printf("channels: %d CPUs x %d events = %zu synthetic rings of %d KiB\n",
	       cpus, BENCH_EVENTS, n, BENCH_RING_PAGES * 4);
	printf("  open   %8.2f ms (%.1f us a channel)\n", t_open * 1e3,
	       t_open * 1e6 / (double)n);
	printf("  fill   %8.2f ms (playing the kernel, not memtop's cost)\n",
	       t_fill * 1e3);
	printf("  drain  %8.2f ms for %llu samples (%.1f us a channel, "
	       "%.0f ns a sample)\n", t_drain * 1e3,
	       (unsigned long long)written, t_drain * 1e6 / (double)n,
	       t_drain * 1e9 / (double)written);
	printf("  close  %8.2f ms\n", t_close * 1e3);
	if (in.stats.samples != written || a.interval.samples != written) {
		printf("  SUMS BROKEN: written %llu, queued %llu, counted %llu\n",
		       (unsigned long long)written,
		       (unsigned long long)in.stats.samples,
		       (unsigned long long)a.interval.samples);
		rc = -1;
	} else {
		printf("  sums hold: %llu written, queued and counted\n",
		       (unsigned long long)written);
	}
	aggr_fini(&a);
	free(rings);
	return rc;
}

/* Bytes a process table row costs, by malloc's accounting. */
static double
bench_row_bytes(int n_nodes, int procs)
{
	size_t h0 = bench_heap(), h1;
	struct proctab *t = proctab_new(n_nodes, (size_t)procs);

	for (int i = 0; t && i < procs; i++)
		proctab_get(t, BENCH_PID0 + i, NULL);
	h1 = bench_heap();
	proctab_free(t);
	return t ? (double)(h1 - h0) / procs : -1;
}

static void
bench_fill_procs(struct aggr *a, int procs)
{
	for (int i = 0; i < procs; i++) {
		int32_t pid = BENCH_PID0 + 2 * i;

		aggr_proc_comm(a, pid, "worker", 1);
		for (int p = 0; p < BENCH_PAGES_PER_PROC * 2; p++) {
			struct sample s = { .period = 1, .ip = 0x401000 };

			s.pid = pid;
			s.tid = pid + (p & 1);
			s.cpu = p % 2;
			s.kind = p % 3 ? SAMPLE_LOAD : SAMPLE_STORE;
			s.addr = (0x7f0000000ull + (uint64_t)p / 2) << 12;
			aggr_add(a, &s);
		}
	}
	aggr_flush(a);
}

/* /proc/PID/maps opens tried so far (read, failed or skipped as failed
 * lately). */
static uint64_t
bench_maps_opens(struct aggr *a)
{
	struct names_stats st = { 0 };

	if (a->sides && sides_names(a->sides))
		names_stats(sides_names(a->sides), &st);
	return st.maps_reads + st.maps_failures + st.maps_skipped;
}

/* The next interval: procs new processes with one sample each, fewer
 * than the last frame's least shown page (2): the maps opens between
 * frames that they cost (aggr_proc_worth_naming: none). */
static uint64_t
bench_cold_opens(struct aggr *a, int procs)
{
	uint64_t before;

	aggr_next_interval(a);
	before = bench_maps_opens(a);
	for (int i = 0; i < procs; i++) {
		struct sample s = { .period = 1, .ip = 0x401000, .cpu = 0,
				    .kind = SAMPLE_LOAD };

		s.pid = s.tid = BENCH_PID0 + 2 * procs + i;
		s.addr = 0x7f0000000ull << 12;
		aggr_add(a, &s);
	}
	aggr_flush(a);
	return bench_maps_opens(a) - before;
}

static void
bench_print_opens(uint64_t fill, uint64_t frames, uint64_t cold, int procs)
{
	printf("  /proc/PID/maps opens: %llu in the background (the "
	       "ingest's flushes), %llu by %d frames, for %d processes\n",
	       (unsigned long long)fill, (unsigned long long)frames,
	       BENCH_REPS, procs);
	printf("  then %d new processes, 1 sample each (fewer than the "
	       "frame's least shown page): %llu opens between frames\n",
	       procs, (unsigned long long)cold);
}

static int
bench_processes(const struct topo *topo, int procs, bool names)
{
	static const char *const events[] = { "mem-loads", "mem-stores" };
	struct frame_meta m = {
		.time = 1.0, .interval = 1.0, .source = "pebs",
		.events = events, .n_events = 2, .period = 1,
		.sort = SORT_SAMPLES, .top_k = 20, .exit_status = -1,
	};
	double ms[BENCH_REPS], cpu[BENCH_REPS], row;
	size_t frame_row = sizeof(struct frame_process) +
			   (size_t)topo_n_nodes(topo) * sizeof(uint64_t);
	uint64_t sum = 0, want = (uint64_t)procs * BENCH_PAGES_PER_PROC * 2;
	size_t rows = 0;
	uint64_t opens_fill, opens_frames, opens_cold;
	struct aggr a;
	int rc = 0;

	if (aggr_init(&a, topo, NULL, 12, 0) < 0 ||
	    aggr_procs_config(&a, 2 * (size_t)procs + 16, false) < 0)
		return -1;
	if (!names) {
		/* Side tables off: names, code view, line heat. */
		sides_free(a.sides);
		a.sides = NULL;
	}
	bench_fill_procs(&a, procs);
	/* The flushes' reads (names_refresh_due): a pid with a new page
	 * outside its known regions, at most NAMES_DUE_READS a flush. */
	opens_fill = bench_maps_opens(&a);
	for (int rep = 0; rep < BENCH_REPS; rep++) {
		double t0 = benchlib_now();
		uint64_t c0 = benchlib_thread_cpu_ns();
		struct frame *f;

		m.seq = (uint64_t)rep + 1;
		f = frame_build(&a, &m);
		ms[rep] = (benchlib_now() - t0) * 1e3;
		cpu[rep] = (double)(benchlib_thread_cpu_ns() - c0) / 1e6;
		if (!f) {
			rc = -1;
			break;
		}
		if (rep == 0) {
			rows = f->n_processes;
			for (size_t i = 0; i < f->n_processes; i++)
				sum += f->processes[i].samples;
		}
		frame_free(f);
	}
	opens_frames = bench_maps_opens(&a) - opens_fill;
	opens_cold = names ? bench_cold_opens(&a, procs) : 0;
	aggr_fini(&a);
	if (rc < 0)
		return rc;
	qsort(ms, BENCH_REPS, sizeof(ms[0]), bench_cmp_double);
	qsort(cpu, BENCH_REPS, sizeof(cpu[0]), bench_cmp_double);
	row = bench_row_bytes(topo_n_nodes(topo), procs);
	printf("processes: %d live, 2 threads and %d pages each, %d nodes, "
	       "%s\n", procs, BENCH_PAGES_PER_PROC, topo_n_nodes(topo),
	       names ? "names and code view on (pids that do not exist)" :
	       "side tables off (no names, no code view)");
	printf("  frame_build %8.2f ms median, worst %.2f ms  "
	       "(budget %.0f ms)\n", ms[BENCH_REPS / 2], ms[BENCH_REPS - 1],
	       BENCH_FRAME_BUDGET_MS);
	printf("  its CPU time %7.2f ms median, worst %.2f ms  (this thread's: "
	       "what a loaded machine does not inflate)\n",
	       cpu[BENCH_REPS / 2], cpu[BENCH_REPS - 1]);
	if (names)
		bench_print_opens(opens_fill, opens_frames, opens_cold, procs);
	printf("  process row %8.0f B in the table, %zu B in the frame  "
	       "(budget %d B)\n", row, frame_row, BENCH_ROW_BUDGET);
	if (rows != (size_t)procs || sum != want) {
		printf("  SUMS BROKEN: %zu rows (want %d), %llu samples "
		       "(want %llu)\n", rows, procs,
		       (unsigned long long)sum, (unsigned long long)want);
		return -1;
	}
	printf("  sums hold: %zu rows, %llu samples\n", rows,
	       (unsigned long long)sum);
	return 0;
}

int
main(int argc, char **argv)
{
	bool quick = benchlib_quick_divisor(argc, argv) > 1;
	static const int cpu_node[] = { 0, 1 };
	struct topo *topo = topo_new_fake(2, cpu_node);
	int rc = 0;

	benchlib_print_machine();
	if (!topo) {
		fprintf(stderr, "bench-scale: no topology\n");
		return 1;
	}
	if (bench_channels(topo, quick ? 64 : BENCH_CPUS_FULL) < 0)
		rc = 1;
	if (bench_processes(topo, quick ? 1000 : BENCH_PROCS_FULL, false) < 0 ||
	    bench_processes(topo, quick ? 1000 : BENCH_PROCS_FULL, true) < 0)
		rc = 1;
	topo_free(topo);
	return rc;
}
