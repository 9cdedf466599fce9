/*
 * System-wide drain benchmark (issue 15): the collector thread draining N
 * per-CPU rings (N = 2 ... 512), as `memtop -a` does on an N-CPU machine,
 * alone or with T drain threads (collector/live/dpool.h), each draining
 * the rings of its group into a shard of its own that the collector
 * merges at each frame (every 100 rounds here, and after the last).
 *
 *   bench-drain [--quick] [--rings N,N,...] [--threads T,T,...] [--rate R]
 *               [--pages P] [--layout faults-tp|faults-sw|pebs]
 *               [--samples S] [--merge draining|plain]
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
 * At each N and T it prints the CPU time a sample of all the threads
 * (collector and drain threads) and of the collector alone, the samples/s
 * drained (wall clock), the cores used (CPU time over wall time), the
 * records lost (those that did not fit a ring: the benchmark writes what
 * fits, as the kernel would) and what the figures imply for N rings x R
 * samples/s: by CPU time, the collector keeps up while its own share
 * needs under one core and each drain thread's under 0.9; by the wall
 * clock here, while it drained as fast as the rings were filled, no
 * round's drain took longer than the round's 10 ms and nothing was lost
 * (on a machine shared
 * with other work, or with fewer cores than threads, the wall clock
 * falls behind where the CPU time would not).  The drain
 * must also leave time for frames, and each ring wakeup costs its
 * epoll_wait, not modelled here (bench-live.py measures both).
 *
 * With drain threads the shards are merged at each frame, as the
 * collector merges them: shard by shard with the rings drained meanwhile
 * (dpool_merge_draining), or with --merge plain all at once while no ring
 * is drained (dpool_merge; then a merge must also end before a ring
 * reaches its half-full wakeup).  A thread plays the kernel during each
 * merge but the last, so what the rings lose meanwhile is counted; the
 * first merge, which grows the collector's tables, and the later ones
 * are timed apart.
 *
 * Defaults: rings 2, 8, 32, 128, 512; threads 0 (the collector alone), 1
 * and 2; R = 100 000 (the kernel's default cap,
 * kernel.perf_event_max_sample_rate); P = 16 Ki; faults-tp; 2 M samples
 * drained at each N.  --quick (meson test --benchmark): rings 2, 8, 32
 * and 100 K samples.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggr.h"
#include "bench-ingest.h"
#include "benchlib.h"
#include "dpool.h"
#include "ingest.h"
#include "topo.h"

#define DRAIN_MAX_RINGS		512
#define DRAIN_ROUND_MS		10
#define DRAIN_FRAME_ROUNDS	100	/* 1 s: shards merged (a frame) */

struct drain_opts {
	size_t rings[16], n_rings;
	size_t threads[8], n_threads;
	double rate;
	size_t pages, samples;
	int layout;
	bool merge_plain;	/* --merge plain: no ring drained meanwhile */
};

struct drain_result {
	uint64_t samples, cpu_ns, coll_ns, bad, lost, other;
	double secs, worst;	/* wall: all rounds; the slowest drain */
	double merge_worst;	/* wall: the slowest merge (not in worst) */
	double merge_first;	/* wall: the first merge (dst grows) */
	double merge_later;	/* wall: the later merges' sum */
	unsigned merges;
	uint64_t bytes;		/* ring bytes written */
	uint64_t merge_written, merge_lost;	/* by the filler */
};

/* dpool_other_fn: the benchmark writes samples only. */
static void
drain_other(const struct perf_event_header *hdr, void *tag, void *ctx)
{
	(void)hdr;
	(void)tag;
	((struct drain_result *)ctx)->other++;
}

/* Fills every ring with one round's records from the stream at *next;
 * returns how many it wrote, and counts in *lost those that did not fit. */
static size_t
drain_fill(struct bench_case *bc, size_t n, const struct bench_stream *st,
	   size_t per_ring, size_t *next, uint64_t *lost, uint64_t *bytes)
{
	unsigned char rec[256];
	size_t written = 0;

	for (size_t k = 0; k < n; k++) {
		for (size_t j = 0; j < per_ring; j++) {
			size_t i = (*next + j * n + k) % st->len;
			size_t size = bench_record(&bc[k], st, i, rec);

			if (benchlib_ring_room(&bc[k].br) < size) {
				*lost += per_ring - j;
				break;
			}
			benchlib_ring_put(&bc[k].br, rec, size);
			written++;
			*bytes += size;
		}
		benchlib_ring_publish(&bc[k].br);
	}
	*next = (*next + per_ring * n) % st->len;
	return written;
}

/* The malformed samples a drain on the pool found in the rings. */
static void
drain_count_bad(const struct dpool_item *items, size_t n,
		struct drain_result *res)
{
	for (size_t k = 0; k < n; k++)
		res->bad += items[k].bad;
}

/* The kernel writing on while the collector merges (a frame): a thread
 * that fills every ring at the rate, in steps of what is due by the
 * clock, until told to stop; what does not fit a ring is lost. */
struct drain_filler {
	struct bench_case *bc;
	size_t n, next;
	const struct bench_stream *st;
	double rate;
	uint64_t written, lost, bytes;
	bool stop;
	pthread_t th;
};

static void *
drain_filler_run(void *arg)
{
	struct drain_filler *f = arg;
	double t0 = benchlib_now();
	uint64_t due = 0;	/* records a ring so far */

	while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		uint64_t want = (uint64_t)((benchlib_now() - t0) * f->rate);

		if (want > due) {
			f->written += drain_fill(f->bc, f->n, f->st,
						 want - due, &f->next,
						 &f->lost, &f->bytes);
			due = want;
		} else {
			usleep(100);
		}
	}
	return NULL;
}

/* A frame's merge, the filler writing meanwhile unless last: plainly
 * (dpool_merge) or shard by shard with the rings drained meanwhile
 * (dpool_merge_draining, as the collector merges).  Its wall time. */
static double
drain_merge(struct bench_case *bc, size_t n, struct aggr *a,
	    struct dpool *pool, struct dpool_item *items,
	    const struct bench_stream *st, const struct drain_opts *o,
	    size_t *next, bool last, struct drain_result *res)
{
	struct drain_filler f = { .bc = bc, .n = n, .next = *next, .st = st,
				  .rate = o->rate };
	bool fill = !last && pthread_create(&f.th, NULL, drain_filler_run,
					    &f) == 0;
	double t = benchlib_now();

	if (o->merge_plain) {
		dpool_merge(pool, a);
	} else {
		for (unsigned i = 0; i < dpool_threads(pool); i++) {
			dpool_merge_draining(pool, i, a, items, n, 1,
					     drain_other, res);
			drain_count_bad(items, n, res);
		}
	}
	t = benchlib_now() - t;
	if (fill) {
		__atomic_store_n(&f.stop, true, __ATOMIC_RELEASE);
		pthread_join(f.th, NULL);
		res->samples += f.written;
		res->lost += f.lost;
		res->bytes += f.bytes;
		res->merge_written += f.written;
		res->merge_lost += f.lost;
		*next = f.next;
	}
	return t;
}

/* Rounds of fill, then drain every ring and flush (timed), until
 * o->samples were drained: by the calling thread alone (pool NULL), as
 * the collector drains, or with the pool's drain threads, each given a
 * group of contiguous rings (CPUs) as collector/live/drainpar.c does. */
static void
drain_rounds(struct bench_case *bc, size_t n, struct aggr *a,
	     struct dpool *pool, struct dpool_item *items,
	     const struct bench_stream *st, const struct drain_opts *o,
	     struct drain_result *res)
{
	size_t per_ring = (size_t)(o->rate * DRAIN_ROUND_MS / 1000.0), next = 0;
	unsigned k_threads = pool ? dpool_threads(pool) : 1;
	size_t rounds = 0;
	struct ingest in;

	if (per_ring == 0)
		per_ring = 1;
	ingest_init(&in, a);
	memset(res, 0, sizeof(*res));
	for (size_t k = 0; k < n; k++)
		items[k] = (struct dpool_item){ .ring = &bc[k].br.ring,
						.ev = &bc[k].ch,
						.group = (unsigned)(k *
							k_threads / n) };
	while (res->samples < o->samples) {
		double t0, dt;
		uint64_t c0, p0 = pool ? dpool_cpu_ns(pool) : 0;

		double mdt = 0;

		res->samples += drain_fill(bc, n, st, per_ring, &next,
					   &res->lost, &res->bytes);
		t0 = benchlib_now();
		c0 = benchlib_thread_cpu_ns();
		if (pool) {
			dpool_drain(pool, items, n, 1, drain_other, res);
			drain_count_bad(items, n, res);
			/* A frame a second: the shards merged. */
			if (++rounds % DRAIN_FRAME_ROUNDS == 0 ||
			    res->samples >= o->samples) {
				mdt = drain_merge(bc, n, a, pool, items, st, o,
						  &next, res->samples >=
							 o->samples, res);
				if (res->merges++ == 0)
					res->merge_first = mdt;
				else
					res->merge_later += mdt;
				if (mdt > res->merge_worst)
					res->merge_worst = mdt;
			}
		} else {
			for (size_t k = 0; k < n; k++)
				ingest_drain(&in, &bc[k].ch, &bc[k].br.ring, 1,
					     NULL, NULL, NULL);
		}
		aggr_flush(a);
		c0 = benchlib_thread_cpu_ns() - c0;
		dt = benchlib_now() - t0;
		res->coll_ns += c0;
		res->cpu_ns += c0 + (pool ? dpool_cpu_ns(pool) - p0 : 0);
		res->secs += dt;
		if (dt - mdt > res->worst)
			res->worst = dt - mdt;
	}
	/* What the filler wrote after the last merge (untimed). */
	if (pool) {
		dpool_drain(pool, items, n, 1, drain_other, res);
		drain_count_bad(items, n, res);
		dpool_merge(pool, a);
		aggr_flush(a);
	}
	res->bad += in.stats.bad + in.stats.unattributed + res->other;
}

/* One T at one N: its figures, and whether they keep up with N x R. */
static void
drain_print(size_t n, size_t t, const struct drain_result *res,
	    const struct drain_opts *o)
{
	double per = (double)res->samples, offered = (double)n * o->rate;
	double all = (double)res->cpu_ns / per, coll = (double)res->coll_ns /
						      per;
	double rate = per / res->secs, used = (double)res->cpu_ns / 1e9 /
					      res->secs;
	double need_coll = offered * coll / 1e9;
	double need_each = t ? offered * (all - coll) / 1e9 / (double)t : 0;
	/* By CPU time: every thread's share under one core (the drain
	 * threads' share even when the rings' rates differ a little). */
	bool fits = res->lost == 0 && need_coll < 1 && need_each < 0.9;
	/* A merge drains nothing: the rings fill meanwhile, and one that
	 * reaches its half-full watermark wakes a collector still busy. */
	double half_ms = BENCH_RING_PAGES * 4096.0 / 2 /
			 ((double)res->bytes / per) / o->rate * 1e3;
	bool keeps = rate >= offered && res->lost == 0 &&
		     res->worst * 1e3 < DRAIN_ROUND_MS &&
		     (!o->merge_plain || res->merge_worst * 1e3 < half_ms);

	printf("  %4zu rings, %zu drain thread%s: cpu %6.1f ns a sample "
	       "(collector %6.1f), wall %6.1f; %6.2f M samples/s, %4.2f "
	       "cores used, lost %" PRIu64 "\n", n, t, t == 1 ? " " : "s",
	       all, coll, res->secs * 1e9 / per, rate / 1e6, used, res->lost);
	printf("        at %zu x %.0f K/s = %.2f M/s: collector %.2f cores", n,
	       o->rate / 1e3, offered / 1e6, need_coll);
	if (t)
		printf(", each drain thread %.2f cores (%.2f M samples/s a "
		       "drain thread core)", need_each, 1e3 / (all - coll));
	printf(": %s by CPU time with %zu thread%s; wall clock here %s\n",
	       fits ? "keeps up" : "CANNOT keep up", t + 1, t ? "s" : "",
	       keeps ? "keeps up" : "falls behind");
	printf("        slowest drain round %.1f ms (a round plays %d ms)",
	       res->worst * 1e3, DRAIN_ROUND_MS);
	if (t)
		printf("; slowest merge %.1f ms (%s; a ring half full in "
		       "%.1f ms); %u merges: the first "
		       "%.1f ms, the later ones %.1f ms on average",
		       res->merge_worst * 1e3, o->merge_plain ?
		       "no ring drained meanwhile" : "the rings drained "
		       "meanwhile", half_ms, res->merges,
		       res->merge_first * 1e3, res->merges > 1 ?
		       res->merge_later * 1e3 / (res->merges - 1) : 0.0);
	if (t)
		printf("\n        merges %s: meanwhile the kernel wrote %"
		       PRIu64 " records, %" PRIu64 " lost (did not fit a ring)",
		       o->merge_plain ? "plain (dpool_merge)" :
		       "draining (dpool_merge_draining)", res->merge_written,
		       res->merge_lost);
	printf("\n");
}

/* One N: its topology (N CPUs on two nodes), rings, and an aggregation
 * for each count of drain threads. */
static int
drain_case(size_t n, const struct bench_stream *st,
	   const struct drain_opts *o)
{
	int *cpu_node = calloc(n, sizeof(*cpu_node));
	struct bench_case *bc = calloc(n, sizeof(*bc));
	struct dpool_item *items = calloc(n, sizeof(*items));
	struct topo *topo = NULL;
	int rc = -1;

	if (!cpu_node || !bc || !items)
		goto out;
	for (size_t k = 0; k < n; k++)
		cpu_node[k] = k * 2 < n ? 0 : 1;
	topo = topo_new_fake((int)n, cpu_node);
	if (!topo)
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
	for (size_t ti = 0; ti < o->n_threads; ti++) {
		size_t t = o->threads[ti];
		struct dpool *pool = NULL;
		struct drain_result res;
		struct aggr a;
		bool ok;

		if (aggr_init(&a, topo, NULL, 12, 0) < 0 ||
		    (t && dpool_new(&pool, (unsigned)t, &a) < 0)) {
			fprintf(stderr, "bench-drain: no memory or thread\n");
			aggr_fini(&a);
			goto fini;
		}
		drain_rounds(bc, n, &a, pool, items, st, o, &res);
		dpool_free(pool);
		ok = !res.bad && a.interval.samples + a.interval.untracked ==
				 res.samples;
		if (!ok)
			fprintf(stderr, "bench-drain: %zu rings, %zu threads: "
				"%" PRIu64 " samples counted of %" PRIu64
				", %" PRIu64 " refused\n", n, t,
				a.interval.samples + a.interval.untracked,
				res.samples, res.bad);
		aggr_fini(&a);
		if (!ok)
			goto fini;
		drain_print(n, t, &res, o);
	}
	rc = 0;
fini:
	for (size_t k = 0; k < n; k++)
		benchlib_ring_fini(&bc[k].br);
out:
	topo_free(topo);
	free(items);
	free(bc);
	free(cpu_node);
	return rc;
}

/* A list "N,N,..." of values in [lo, hi] into out[max]. */
static int
drain_list_parse(const char *s, size_t *out, size_t max, size_t *n,
		 unsigned long lo, unsigned long hi)
{
	char *end;

	*n = 0;
	while (*s) {
		unsigned long v = strtoul(s, &end, 10);

		if (end == s || v < lo || v > hi || *n == max)
			return -1;
		out[(*n)++] = v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return *n ? 0 : -1;
}

static int
drain_args(int argc, char **argv, struct drain_opts *o)
{
	static const size_t full[] = { 2, 8, 32, 128, 512 };

	memcpy(o->rings, full, sizeof(full));
	o->n_rings = 5;
	o->threads[0] = 0;
	o->threads[1] = 1;
	o->threads[2] = 2;
	o->n_threads = 3;
	o->rate = 100000;
	o->pages = 16384;
	o->samples = 2000000;
	o->layout = BENCH_FAULTS_TP;
	o->merge_plain = false;
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
			if (drain_list_parse(v, o->rings, 16, &o->n_rings, 1,
					     DRAIN_MAX_RINGS) < 0)
				goto usage;
		} else if (strcmp(argv[i], "--threads") == 0) {
			if (drain_list_parse(v, o->threads, 8, &o->n_threads,
					     0, DPOOL_MAX_THREADS) < 0)
				goto usage;
		} else if (strcmp(argv[i], "--rate") == 0) {
			o->rate = strtod(v, NULL);
		} else if (strcmp(argv[i], "--pages") == 0) {
			o->pages = strtoull(v, NULL, 0);
		} else if (strcmp(argv[i], "--samples") == 0) {
			o->samples = strtoull(v, NULL, 0);
		} else if (strcmp(argv[i], "--merge") == 0) {
			if (strcmp(v, "plain") != 0 &&
			    strcmp(v, "draining") != 0)
				goto usage;
			o->merge_plain = strcmp(v, "plain") == 0;
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
		"[--threads T,T,... (0..%d drain threads; 0: the collector "
		"alone)] [--rate SAMPLES_PER_S_A_RING] [--pages N] "
		"[--samples N] [--layout faults-tp|faults-sw|pebs] "
		"[--merge draining|plain]\n",
		argv[0], DRAIN_MAX_RINGS, DPOOL_MAX_THREADS);
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
	printf("memtop drain benchmark: the collector thread alone or with "
	       "T drain threads, N per-CPU rings of %d KiB\n",
	       BENCH_RING_PAGES * 4);
	benchlib_print_machine();
	printf("stream: Zipf(0.99) over %zu pages of %d pids, layout %s, "
	       "%.0f K samples/s a ring played %d ms a round, %zu samples "
	       "drained at each N\n", o.pages, BENCH_PIDS,
	       bench_layout_names[o.layout], o.rate / 1e3, DRAIN_ROUND_MS,
	       o.samples);
	bench_sites_init();
	if (bench_stream_make(&st, o.pages, o.samples < (1u << 22) ?
					    o.samples : (1u << 22), false) < 0) {
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
