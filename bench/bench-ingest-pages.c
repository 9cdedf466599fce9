#include "config.h"

/*
 * The ingest benchmark's pages (bench-ingest.h): their keys, the Zipf
 * stream over them, and inserting each once (batches of AGGR_BATCH
 * samples) for the page table's bytes per page, the process's resident
 * growth and the slowest aggr_flush while the table grows.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "bench-ingest.h"
#include "benchlib.h"
#include "pagetab.h"
#include "sides.h"

void
bench_page_key(size_t p, int32_t *pid, uint64_t *page)
{
	*pid = BENCH_PID0 + 8 * (int32_t)(p % BENCH_PIDS);
	*page = BENCH_PAGE0 + p / BENCH_PIDS;
}

int
bench_stream_make(struct bench_stream *st, size_t pages, size_t len,
		  bool uniform)
{
	struct benchlib_rng rng = { BENCH_SEED ^ pages };
	struct benchlib_zipf z;

	st->pages = pages;
	st->len = len;
	st->perm = benchlib_permutation(pages, &rng);
	st->page = malloc(len * sizeof(*st->page));
	if (!st->perm || !st->page)
		return -1;
	if (uniform) {
		/* A refault: every page once a round, in one order. */
		for (size_t i = 0; i < len; i++)
			st->page[i] = st->perm[i % pages];
		return 0;
	}
	benchlib_zipf_init(&z, 0.99, pages);
	for (size_t i = 0; i < len; i++)
		st->page[i] = st->perm[benchlib_zipf_draw(&z, &rng)];
	return 0;
}

void
bench_stream_free(struct bench_stream *st)
{
	free(st->perm);
	free(st->page);
	memset(st, 0, sizeof(*st));
}

struct bench_fill {
	float *batch_us;		/* per aggr_flush */
	size_t n_batches;
	double avg_bytes;		/* page table bytes / page, averaged */
	double worst_bytes;
	double sides_bytes;		/* side tables bytes / page, the same */
	double sides_kib;		/* side tables at the end */
	double rss_per_page;
	size_t count;
	double secs;
};

/*
 * Inserts every page once (batches of AGGR_BATCH samples through
 * aggr_add/aggr_flush), timing each flush.  Page-table bytes per page
 * are sampled after every batch from 64 Ki pages on (half the pages for
 * smaller runs): below that the table's fixed part, about 0.4 MB,
 * dominates.
 */
static int
bench_fill(const struct topo *topo, const struct bench_stream *st,
	   struct bench_fill *bf, bool levels)
{
	struct aggr a;
	uint64_t rss0, sum_n = 0;
	double sum = 0, sides_sum = 0, t_all;
	size_t from = st->pages > 131072 ? 65536 : st->pages / 2;

	bf->n_batches = (st->pages + AGGR_BATCH - 1) / AGGR_BATCH;
	bf->worst_bytes = 0;
	rss0 = benchlib_rss_bytes();
	if (aggr_init(&a, topo, NULL, 12, 0) < 0)
		return -1;
	t_all = benchlib_now();
	for (size_t b = 0; b < bf->n_batches; b++) {
		size_t end = (b + 1) * AGGR_BATCH;
		double t0, bytes;

		if (end > st->pages)
			end = st->pages;
		t0 = benchlib_now();
		for (size_t i = b * AGGR_BATCH; i < end; i++) {
			struct sample s = { .kind = SAMPLE_LOAD, .period = 1,
					    .cpu = (int32_t)(i % BENCH_CPUS),
					    .ip = 0x400000,
					    /* an L1 load hit, as bench-ingest.c's */
					    .data_src = levels ? 0x68100142 : 0 };
			uint64_t page;

			bench_page_key(st->perm[i], &s.pid, &page);
			s.tid = s.pid;
			s.addr = page << 12;
			aggr_add(&a, &s);
		}
		aggr_flush(&a);
		bf->batch_us[b] = (float)((benchlib_now() - t0) * 1e6);
		if (end < from)
			continue;
		bytes = (double)pagetab_bytes(a.pages) /
			(double)pagetab_count(a.pages);
		sides_sum += (double)sides_bytes(a.sides) /
			     (double)pagetab_count(a.pages);
		sum += bytes;
		sum_n++;
		if (bytes > bf->worst_bytes)
			bf->worst_bytes = bytes;
	}
	bf->secs = benchlib_now() - t_all;
	bf->avg_bytes = sum_n ? sum / (double)sum_n : 0;
	bf->sides_bytes = sum_n ? sides_sum / (double)sum_n : 0;
	bf->count = pagetab_count(a.pages);
	bf->sides_kib = (double)sides_bytes(a.sides) / 1024;
	bf->rss_per_page = (double)(benchlib_rss_bytes() - rss0) /
			   (double)(bf->count ? bf->count : 1);
	aggr_fini(&a);
	return bf->count == st->pages ? 0 : -1;
}

int
bench_memory(const struct topo *topo, const struct bench_stream *st,
	     const char *label, bool levels)
{
	struct bench_fill f1 = { 0 }, f2 = { 0 };
	double worst = 0, raw = 0;
	size_t worst_at = 0;
	int rc = -1;

	f1.batch_us = malloc((st->pages / AGGR_BATCH + 1) * sizeof(float));
	f2.batch_us = malloc((st->pages / AGGR_BATCH + 1) * sizeof(float));
	if (!f1.batch_us || !f2.batch_us)
		goto out;
	if (bench_fill(topo, st, &f1, levels) < 0 ||
	    bench_fill(topo, st, &f2, levels) < 0)
		goto out;
	for (size_t b = 0; b < f1.n_batches; b++) {
		double us = f1.batch_us[b] < f2.batch_us[b] ?
			    f1.batch_us[b] : f2.batch_us[b];

		if (us > worst) {
			worst = us;
			worst_at = b;
		}
		if (f1.batch_us[b] > raw)
			raw = f1.batch_us[b];
	}
	printf("  memory    %8zu pages, %s: page table %5.1f B/page average,"
	       " %5.1f worst while growing, side tables %.1f B/page average "
	       "(%.0f KiB at the end; target <= 32 in all, <= 48); process RSS "
	       "+%.1f B/page\n", st->pages, label, f1.avg_bytes,
	       f1.worst_bytes, f1.sides_bytes, f1.sides_kib,
	       f1.rss_per_page);
	printf("  growth    %8zu pages, %s: slowest %d-sample batch %.2f ms "
	       "(at page %zu; raw %.2f ms), target <= 10 ms; fill %.1f M "
	       "pages/s\n", st->pages, label, AGGR_BATCH, worst / 1e3,
	       worst_at * AGGR_BATCH, raw / 1e3, st->pages / f2.secs / 1e6);
	rc = 0;
out:
	free(f1.batch_us);
	free(f2.batch_us);
	return rc;
}
