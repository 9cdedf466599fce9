/*
 * System-wide drain benchmark (issue 15): one collector thread draining N
 * per-CPU rings (N = 2 ... 512), as `memtop -a` does on an N-CPU machine.
 *
 *   bench-drain [--quick] [--rings N,N,...] [--rate R] [--pages P]
 *               [--layout faults-tp|faults-sw|pebs] [--samples S]
 *
 * Each ring is a 256 KiB ring in ordinary memory (the default ring,
 * BENCH_RING_PAGES), filled as the kernel fills a CPU's ring: kernel-
 * format records (bench-ingest's layouts) of that CPU, from a Zipf(0.99)
 * stream over P hot pages of BENCH_PIDS processes, the stream dealt to
 * the CPUs in turn.  A round plays 10 ms of the kernel at R samples/s on
 * every CPU (R x 10 ms records a ring, at most what fits), then drains
 * every ring one after another through ingest_drain and ends with
 * aggr_flush, as the collector's drain at a wakeup; only the drain is
 * timed (thread CPU time and wall clock).
 *
 * It prints the collector's CPU time a sample at each N, the samples/s one
 * core drains at that cost, and the cores the collector needs at N rings
 * x R samples/s: one collector thread keeps up while that is under 1
 * (the drain must also leave time for frames, and each ring wakeup costs
 * its epoll_wait, not modelled here: bench-live.py measures both).
 * Records are not lost here (the benchmark writes only what fits); at a
 * rate the drain cannot follow, the kernel would drop them and memtop
 * would count them (`lost`).
 *
 * Defaults: rings 2, 8, 32, 128, 512; R = 100 000 (the kernel's default
 * cap, kernel.perf_event_max_sample_rate); P = 16 Ki; faults-tp; 2 M
 * samples drained at each N.  --quick (meson test --benchmark): rings 2,
 * 8, 32 and 100 K samples.
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
#include "ingest.h"
#include "topo.h"

#define DRAIN_MAX_RINGS		512
#define DRAIN_ROUND_MS		10

struct drain_opts {
	size_t rings[16], n_rings;
	double rate;
	size_t pages, samples;
	int layout;
};

struct drain_result {
	uint64_t samples, cpu_ns, bad;
	double secs;
};

/* Fills every ring with one round's records from the stream at *next;
 * returns how many it wrote. */
static size_t
drain_fill(struct bench_case *bc, size_t n, const struct bench_stream *st,
	   size_t per_ring, size_t *next)
{
	unsigned char rec[256];
	size_t written = 0;

	for (size_t k = 0; k < n; k++) {
		for (size_t j = 0; j < per_ring; j++) {
			size_t i = (*next + j * n + k) % st->len;
			size_t size = bench_record(&bc[k], st, i, rec);

			if (benchlib_ring_room(&bc[k].br) < size)
				break;
			benchlib_ring_put(&bc[k].br, rec, size);
			written++;
		}
		benchlib_ring_publish(&bc[k].br);
	}
	*next = (*next + per_ring * n) % st->len;
	return written;
}

/* Rounds of fill, then drain every ring and flush (timed), until
 * o->samples were drained. */
static void
drain_rounds(struct bench_case *bc, size_t n, struct aggr *a,
	     const struct bench_stream *st, const struct drain_opts *o,
	     struct drain_result *res)
{
	size_t per_ring = (size_t)(o->rate * DRAIN_ROUND_MS / 1000.0), next = 0;
	struct ingest in;

	if (per_ring == 0)
		per_ring = 1;
	ingest_init(&in, a);
	memset(res, 0, sizeof(*res));
	while (res->samples < o->samples) {
		double t0;
		uint64_t c0;

		res->samples += drain_fill(bc, n, st, per_ring, &next);
		t0 = benchlib_now();
		c0 = benchlib_thread_cpu_ns();
		for (size_t k = 0; k < n; k++)
			ingest_drain(&in, &bc[k].ch, &bc[k].br.ring, 1, NULL,
				     NULL, NULL);
		aggr_flush(a);
		res->cpu_ns += benchlib_thread_cpu_ns() - c0;
		res->secs += benchlib_now() - t0;
	}
	res->bad = in.stats.bad + in.stats.unattributed;
}

/* One N: its topology (N CPUs on two nodes), rings, aggregation. */
static int
drain_case(size_t n, const struct bench_stream *st,
	   const struct drain_opts *o)
{
	int *cpu_node = calloc(n, sizeof(*cpu_node));
	struct bench_case *bc = calloc(n, sizeof(*bc));
	struct topo *topo = NULL;
	struct drain_result res;
	struct aggr a;
	double ns, cores;
	int rc = -1;

	if (!cpu_node || !bc)
		goto out;
	for (size_t k = 0; k < n; k++)
		cpu_node[k] = k * 2 < n ? 0 : 1;
	topo = topo_new_fake((int)n, cpu_node);
	if (!topo || aggr_init(&a, topo, NULL, 12, 0) < 0)
		goto out;
	for (size_t k = 0; k < n; k++) {
		bc[k].layout = (enum bench_layout)o->layout;
		bc[k].ips = BENCH_IPS_SITES;
		bc[k].topo = topo;
		bc[k].fixed_cpu = (int)k;
		bench_source(&bc[k]);
		if (benchlib_ring_init(&bc[k].br, BENCH_RING_PAGES) < 0) {
			fprintf(stderr, "bench-drain: ring %zu of %zu: no "
				"memory\n", k, n);
			goto fini;
		}
	}
	drain_rounds(bc, n, &a, st, o, &res);
	if (res.bad || a.interval.samples + a.interval.untracked !=
				res.samples) {
		fprintf(stderr, "bench-drain: %zu rings: %" PRIu64 " samples "
			"counted of %" PRIu64 ", %" PRIu64 " refused\n", n,
			a.interval.samples + a.interval.untracked,
			res.samples, res.bad);
		goto fini;
	}
	ns = (double)res.cpu_ns / (double)res.samples;
	cores = (double)n * o->rate * ns / 1e9;
	printf("  %4zu rings: %6.1f ns a sample (cpu; wall %6.1f), %6.2f M "
	       "samples/s a core; at %zu x %.0f K/s = %6.2f M/s: %5.2f "
	       "cores, %s\n", n, ns, res.secs * 1e9 / (double)res.samples,
	       1e3 / ns, n, o->rate / 1e3, (double)n * o->rate / 1e6, cores,
	       cores < 1 ? "one collector keeps up" :
			   "one collector thread CANNOT keep up");
	rc = 0;
fini:
	for (size_t k = 0; k < n; k++)
		benchlib_ring_fini(&bc[k].br);
	aggr_fini(&a);
out:
	topo_free(topo);
	free(bc);
	free(cpu_node);
	return rc;
}

static int
drain_rings_parse(const char *s, struct drain_opts *o)
{
	char *end;

	o->n_rings = 0;
	while (*s) {
		unsigned long v = strtoul(s, &end, 10);

		if (end == s || v < 1 || v > DRAIN_MAX_RINGS ||
		    o->n_rings == sizeof(o->rings) / sizeof(o->rings[0]))
			return -1;
		o->rings[o->n_rings++] = v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return o->n_rings ? 0 : -1;
}

static int
drain_args(int argc, char **argv, struct drain_opts *o)
{
	static const size_t full[] = { 2, 8, 32, 128, 512 };

	memcpy(o->rings, full, sizeof(full));
	o->n_rings = 5;
	o->rate = 100000;
	o->pages = 16384;
	o->samples = 2000000;
	o->layout = BENCH_FAULTS_TP;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(argv[i], "--quick") == 0) {
			o->n_rings = 3;
			o->samples = 100000;
			continue;
		}
		if (!v)
			goto usage;
		if (strcmp(argv[i], "--rings") == 0) {
			if (drain_rings_parse(v, o) < 0)
				goto usage;
		} else if (strcmp(argv[i], "--rate") == 0) {
			o->rate = strtod(v, NULL);
		} else if (strcmp(argv[i], "--pages") == 0) {
			o->pages = strtoull(v, NULL, 0);
		} else if (strcmp(argv[i], "--samples") == 0) {
			o->samples = strtoull(v, NULL, 0);
		} else if (strcmp(argv[i], "--layout") == 0) {
			o->layout = -1;
			for (int l = 0; l < BENCH_N_LAYOUTS; l++)
				if (strcmp(v, bench_layout_names[l]) == 0)
					o->layout = l;
		} else {
			goto usage;
		}
		i++;
	}
	if (o->rate >= 1 && o->rate <= 1e7 && o->pages >= 1 &&
	    o->pages <= (1u << 24) && o->samples >= 1 && o->layout >= 0)
		return 0;
usage:
	fprintf(stderr, "usage: %s [--quick] [--rings N,N,... (1..%d)] "
		"[--rate SAMPLES_PER_S_A_RING] [--pages N] [--samples N] "
		"[--layout faults-tp|faults-sw|pebs]\n", argv[0],
		DRAIN_MAX_RINGS);
	return -1;
}

int
main(int argc, char **argv)
{
	struct drain_opts o;
	struct bench_stream st = { 0 };
	int rc = 0;

	if (drain_args(argc, argv, &o) < 0)
		return 2;
	printf("memtop drain benchmark: one collector thread, N per-CPU "
	       "rings of %d KiB\n", BENCH_RING_PAGES * 4);
	benchlib_print_machine();
	printf("stream: Zipf(0.99) over %zu pages of %d pids, layout %s, "
	       "%.0f K samples/s a ring played %d ms a round, %zu samples "
	       "drained at each N\n", o.pages, BENCH_PIDS,
	       bench_layout_names[o.layout], o.rate / 1e3, DRAIN_ROUND_MS,
	       o.samples);
	bench_sites_init();
	if (bench_stream_make(&st, o.pages, o.samples < (1u << 22) ?
					    o.samples : (1u << 22)) < 0) {
		perror("bench-drain");
		bench_stream_free(&st);
		return 1;
	}
	for (size_t r = 0; r < o.n_rings && rc == 0; r++)
		if (drain_case(o.rings[r], &st, &o) < 0)
			rc = 1;
	printf("  target: 128 rings x 100 K samples/s with no loss (issue "
	       "15); wakeups (epoll_wait, about 16-40 us each here) and "
	       "frames come on top\n");
	bench_stream_free(&st);
	return rc;
}
