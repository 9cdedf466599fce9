/*
 * Ingest benchmark: what one core of the collector does per sample.
 *
 *   decode + aggregate   a Zipf(0.99) stream over 64 Ki, 1 Mi and 10 Mi
 *                        distinct pages (4 pids, 16 threads, 8 CPUs on two
 *                        fake nodes, fixed seed), written as kernel-format
 *                        records into a 256 KiB ring (the default ring
 *                        size) in three layouts: the faults tracepoint
 *                        (RAW), the software page-fault event (ADDR) and
 *                        a PEBS-like pair of load/store events (ADDR,
 *                        PERIOD, WEIGHT_STRUCT, DATA_SRC).  Each ring-full
 *                        is drained through ingest_drain (ring walk, record
 *                        parse, source decode, aggr_add) and timed; writing
 *                        the records is not.  No move_pages.
 *   memory, stalls       every page inserted once into an empty table:
 *                        page-table bytes per tracked page (average and
 *                        worst while it grows), the process's resident
 *                        growth per page, and the slowest aggr_flush of a
 *                        256-sample batch (min of two identical runs, so
 *                        preemption on a shared VM does not count); with
 *                        one node (this VM) and two (entries then carry
 *                        the local/remote split).
 *
 * --quick (what `meson test --benchmark` runs) divides sizes and stream
 * by 100; targets apply to the full run and are printed, not enforced.
 * --pages N --layout L --samples N run one case (bench/callgrind.sh);
 * --no-sides leaves out the naming side tables (code sites, line heat,
 * code view), to tell their cost from the page table's.  --stream
 * uniform replaces the Zipf stream with rounds over every page in one
 * order, as memtop-workload's refault gives the live collector (issue
 * 15's working sets): past the side tables' room, each page has more
 * samples than their admission bar and competes for a record.
 *
 * Code addresses (--ips): a data page is touched from a handful of code
 * sites, one or two of them most of the time, and a function touches
 * many pages.  So by default (`sites`) each page has 1 to
 * BENCH_PAGE_SITES sites of its own, picked by a hash of the page from
 * its process's pool of BENCH_IPS ips and drawn with weights 1, 1/2,
 * 1/3, ...; pages with more sites than the side table keeps
 * (SITETAB_SITES) exercise its replacement.  `uniform` draws every
 * sample's ip from the whole pool, independent of the page: nearly every
 * sample then misses its page's site slots, the side tables' worst case,
 * printed by the full run beside the default.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "bench-ingest.h"
#include "benchlib.h"
#include "channel.h"
#include "ingest.h"
#include "pagetab.h"
#include "sides.h"
#include "source.h"
#include "topo.h"

#define BENCH_STREAM		(16u << 20)
/*
 * One pass of the stream through the ring into a.  Returns the seconds
 * spent draining (ingest_drain and the final aggr_flush), the only part
 * timed; *cpu_ns gets the thread CPU time of the same parts.
 */
static double
bench_pass(struct bench_case *bc, const struct bench_stream *st,
	   struct aggr *a, uint64_t *cpu_ns, uint64_t *bad)
{
	struct ingest in;
	unsigned char rec[256];
	double secs = 0, t0;
	uint64_t c0;
	size_t i = 0;

	ingest_init(&in, a);
	*cpu_ns = 0;
	while (i < st->len) {
		size_t size;

		/* Play the kernel: fill the ring, publish. */
		while (i < st->len) {
			size = bench_record(bc, st, i, rec);
			if (benchlib_ring_room(&bc->br) < size)
				break;
			benchlib_ring_put(&bc->br, rec, size);
			bc->ring_bytes += size;
			i++;
		}
		benchlib_ring_publish(&bc->br);
		t0 = benchlib_now();
		c0 = benchlib_thread_cpu_ns();
		/* As the collector: every record here is a SAMPLE. */
		ingest_drain(&in, &bc->ch, &bc->br.ring, 1, NULL, NULL, NULL);
		if (i == st->len)
			aggr_flush(a);
		*cpu_ns += benchlib_thread_cpu_ns() - c0;
		secs += benchlib_now() - t0;
	}
	*bad = in.stats.bad + in.stats.unattributed;
	return secs;
}

/* Decode + aggregate of one layout at one size: from an empty table,
 * then again with every page of the stream held. */
static int
bench_ingest(struct bench_case *bc, const struct bench_stream *st,
	     double target)
{
	struct aggr a;
	uint64_t cpu_cold, cpu_warm, bad = 0, bad2 = 0, counted;
	double cold, warm;
	int rc = -1;

	if (aggr_init(&a, bc->topo, NULL, 12, 0) < 0)
		return -1;
	if (bc->no_sides) {
		sides_free(a.sides);
		a.sides = NULL;
	}
	cold = bench_pass(bc, st, &a, &cpu_cold, &bad);
	aggr_next_interval(&a);
	warm = bench_pass(bc, st, &a, &cpu_warm, &bad2);
	counted = a.interval.samples + a.interval.untracked;
	printf("  %-9s %8zu pages%s%s: %6.1f M samples/s (%5.1f ns, cpu %5.1f ns)"
	       " steady, %6.1f M/s from empty", bench_layout_names[bc->layout],
	       st->pages, bc->ips == BENCH_IPS_SITES ? "" : ", ips ",
	       bc->ips == BENCH_IPS_SITES ? "" : bench_ips_names[bc->ips], st->len / warm / 1e6, warm * 1e9 / st->len,
	       (double)cpu_warm / st->len, st->len / cold / 1e6);
	if (target > 0)
		printf("  target >= %.0f", target);
	/* bench/touches.sh takes the ring's share off its counts. */
	printf(", ring %.1f B/sample\n",
	       (double)bc->ring_bytes / (2.0 * (double)st->len));
	if (bad || bad2 || counted != st->len)
		fprintf(stderr, "bench-ingest: %" PRIu64 " samples counted of "
			"%zu, %" PRIu64 " refused\n", counted, st->len,
			bad + bad2);
	else
		rc = 0;
	aggr_fini(&a);
	return rc;
}

static int
bench_layout_parse(const char *s, int *out)
{
	if (strcmp(s, "all") == 0) {
		*out = -1;
		return 0;
	}
	for (int i = 0; i < BENCH_N_LAYOUTS; i++)
		if (strcmp(s, bench_layout_names[i]) == 0) {
			*out = i;
			return 0;
		}
	return -1;
}

/* The command line (see the top comment). */
struct bench_opts {
	size_t divisor, len, one_pages;
	bool memory, no_sides, uniform;
	int layout, ips;
};

/* Returns 0, or -1 after printing the usage. */
static int
bench_args(int argc, char **argv, struct bench_opts *o)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			o->divisor = 100;
		} else if (strcmp(argv[i], "--pages") == 0 && i + 1 < argc) {
			o->one_pages = strtoull(argv[++i], NULL, 0);
		} else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {
			o->len = strtoull(argv[++i], NULL, 0);
		} else if (strcmp(argv[i], "--layout") == 0 && i + 1 < argc &&
			   bench_layout_parse(argv[i + 1], &o->layout) == 0) {
			i++;
		} else if (strcmp(argv[i], "--ips") == 0 && i + 1 < argc &&
			   (strcmp(argv[i + 1], "sites") == 0 ||
			    strcmp(argv[i + 1], "uniform") == 0)) {
			o->ips = strcmp(argv[++i], "uniform") == 0 ?
				 BENCH_IPS_UNIFORM : BENCH_IPS_SITES;
		} else if (strcmp(argv[i], "--stream") == 0 && i + 1 < argc &&
			   (strcmp(argv[i + 1], "zipf") == 0 ||
			    strcmp(argv[i + 1], "uniform") == 0)) {
			o->uniform = strcmp(argv[++i], "uniform") == 0;
		} else if (strcmp(argv[i], "--no-memory") == 0) {
			o->memory = false;
		} else if (strcmp(argv[i], "--no-sides") == 0) {
			o->no_sides = true;
		} else {
			fprintf(stderr, "usage: %s [--quick] [--pages N] "
				"[--samples N] [--layout faults-tp|faults-sw|"
				"pebs|all] [--ips sites|uniform] [--stream "
				"zipf|uniform] [--no-memory] [--no-sides]\n",
				argv[0]);
			return -1;
		}
	}
	return 0;
}

static void
bench_print_header(const struct bench_opts *o)
{
	printf("memtop ingest benchmark%s\n", o->divisor > 1 ?
	       " (--quick: sizes / 100; targets apply to the full run)" : "");
	benchlib_print_machine();
	printf("stream: %zu samples, %s, %d pids x %d threads, %d "
	       "CPUs on 2 nodes, %d KiB ring, no move_pages\n", o->len,
	       o->uniform ? "uniform (every page once a round, a refault)" :
	       "Zipf(0.99)",
	       BENCH_PIDS, BENCH_THREADS, BENCH_CPUS, BENCH_RING_PAGES * 4);
	if (o->ips == BENCH_IPS_UNIFORM)
		printf("ips: uniform over %d a process, independent of the "
		       "page (the side tables' worst case)\n", BENCH_IPS);
	else
		printf("ips: 1 to %d code sites a page from %d a process, "
		       "weights 1, 1/2, 1/3, ... (--ips uniform: worst "
		       "case)\n", BENCH_PAGE_SITES, BENCH_IPS);
}

/* Every layout (or --layout's) at one size, then memory and growth on
 * one node (topo1) and two. */
static int
bench_size(const struct bench_opts *o, const struct topo *topo,
	   const struct topo *topo1, size_t pages, double target)
{
	struct bench_stream st = { 0 };
	int rc = 0;

	if (bench_stream_make(&st, pages, o->len, o->uniform) < 0) {
		perror("bench-ingest");
		bench_stream_free(&st);
		return 1;
	}
	printf("\n== %zu distinct pages ==\n", pages);
	for (int l = 0; l < BENCH_N_LAYOUTS && rc == 0; l++) {
		struct bench_case bc = { .layout = l, .topo = topo,
					 .ips = o->ips,
					 .no_sides = o->no_sides,
					 .fixed_cpu = -1 };

		if (o->layout >= 0 && l != o->layout)
			continue;
		bench_source(&bc);
		if (benchlib_ring_init(&bc.br, BENCH_RING_PAGES) < 0 ||
		    bench_ingest(&bc, &st, target) < 0)
			rc = 1;
		benchlib_ring_fini(&bc.br);
	}
	if (rc == 0 && o->memory &&
	    (bench_memory(topo1, &st, "1 node", false) < 0 ||
	     bench_memory(topo, &st, "2 nodes", false) < 0 ||
	     ((o->layout < 0 || o->layout == BENCH_PEBS) &&
	      bench_memory(topo1, &st, "1 node, PEBS data_src", true) < 0))) {
		fprintf(stderr, "bench-ingest: fill failed\n");
		rc = 1;
	}
	bench_stream_free(&st);
	return rc;
}

int
main(int argc, char **argv)
{
	static const int cpu_node[BENCH_CPUS] = { 0, 0, 0, 0, 1, 1, 1, 1 };
	static const int cpu_node1[BENCH_CPUS] = { 0 };
	struct { size_t pages; double target; } sizes[] = {
		{ 64u << 10, 50 }, { 1u << 20, 20 }, { 10u << 20, 10 },
	};
	struct bench_opts o = { .divisor = 1, .len = BENCH_STREAM,
				.memory = true, .layout = -1,
				.ips = BENCH_IPS_SITES };
	size_t n_sizes = 3;
	struct topo *topo, *topo1;
	int rc = 0;

	if (bench_args(argc, argv, &o) < 0)
		return 2;
	if (o.one_pages) {
		sizes[0].pages = o.one_pages;
		sizes[0].target = 0;
		n_sizes = 1;
	}
	o.len /= o.divisor;
	topo = topo_new_fake(BENCH_CPUS, cpu_node);
	topo1 = topo_new_fake(BENCH_CPUS, cpu_node1);
	if (!topo || !topo1 || o.len == 0)
		return 1;
	bench_print_header(&o);
	bench_sites_init();
	for (size_t k = 0; k < n_sizes && rc == 0; k++)
		rc = bench_size(&o, topo, topo1, sizes[k].pages / o.divisor,
				sizes[k].target);
	topo_free(topo);
	topo_free(topo1);
	return rc;
}
