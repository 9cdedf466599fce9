/*
 * Page -> node resolution cost, on this process's own memory: 1 Mi pages
 * (4 GiB, written once) or 10 Ki with --quick (`meson test --benchmark`).
 *
 *   move_pages one page a call vs batches of 16, 256, 1024 (NODEMAP_BATCH)
 *   and 4096 pages, in ns a page;
 *   ingest: every page sampled once through the aggregation (insert + the
 *   batched query of new pages), in ns a sample;
 *   revalidation at the collector's budget (1 % of a 1 s interval) with
 *   every page sampled every interval: pages re-asked an interval, the
 *   time it takes, and how many intervals until each page was re-asked;
 *   PHYS_ADDR -> node lookups through the memory-block map, when sysfs has
 *   one.
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
#include "nodemap.h"
#include "physnode.h"
#include "topo.h"

#define BENCH_FULL_PAGES	(1u << 20)
#define BENCH_QUICK_PAGES	(10u << 10)
#define BENCH_BUDGET_NS		10000000ull	/* 1 % of 1 s */

static uint64_t
bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ns a page for move_pages queries of `batch` pages a call over n pages. */
static double
bench_query(struct nodemap *nm, const uint64_t *addrs, size_t n,
	    size_t batch, int16_t *nodes, size_t *unknown)
{
	uint64_t t0 = bench_now_ns();

	*unknown = 0;
	for (size_t i = 0; i < n; i += batch) {
		size_t k = n - i < batch ? n - i : batch;

		if (nodemap_query(nm, getpid(), addrs + i, k, nodes + i) < 0)
			return -1;
	}
	for (size_t i = 0; i < n; i++)
		*unknown += nodes[i] < 0;
	return (double)(bench_now_ns() - t0) / (double)n;
}

static void
bench_physnode(const uint64_t *addrs, size_t n)
{
	struct physnode *p = NULL;
	uint64_t t0, sum = 0;
	size_t rounds = 16;

	if (physnode_new(&p) < 0) {
		printf("physnode: no memory blocks in sysfs, not measured\n");
		return;
	}
	t0 = bench_now_ns();
	for (size_t r = 0; r < rounds; r++)
		for (size_t i = 0; i < n; i++)
			sum += (uint64_t)physnode_lookup(p, addrs[i] *
				(r + 1) % (64ull << 30) + 1);
	printf("physnode: %.1f ns a lookup (%zu blocks of %" PRIu64
	       " MiB; checksum %" PRIu64 ")\n",
	       (double)(bench_now_ns() - t0) / (double)(n * rounds),
	       physnode_n_blocks(p), physnode_block_size(p) >> 20, sum);
	physnode_free(p);
}

/* One sample on every page, through the aggregation; ns a sample. */
static double
bench_feed(struct aggr *a, const uint64_t *addrs, size_t n)
{
	uint64_t t0 = bench_now_ns();

	for (size_t i = 0; i < n; i++) {
		struct sample s = { .addr = addrs[i], .pid = getpid(),
				    .tid = getpid(), .cpu = 0,
				    .kind = SAMPLE_STORE, .period = 1 };

		aggr_add(a, &s);
	}
	aggr_flush(a);
	return (double)(bench_now_ns() - t0) / (double)n;
}

/*
 * Every page sampled once an interval (the worst case: all n pages hot),
 * the collector's revalidation budget (1 % of a 1 s interval) each time:
 * how many known pages are re-asked an interval, what it costs, and how
 * many intervals it takes until every page has been re-asked.
 */
static void
bench_revalidate(struct topo *topo, const uint64_t *addrs, size_t n)
{
	struct nodemap *nm = nodemap_new();
	struct frame_noderes r;
	struct aggr a;
	uint64_t asked = 0, query_us = 0, worst_us = 0;
	double base_ns, ns;
	int intervals = 0;

	if (!nm || aggr_init(&a, topo, nm, 12, 0) < 0) {
		printf("revalidate: out of memory\n");
		nodemap_free(nm);
		return;
	}
	ns = bench_feed(&a, addrs, n);
	aggr_noderes(&a, &r);
	printf("ingest of new pages: %.0f ns a sample (%" PRIu64 " asked, "
	       "%" PRIu64 " with a node, %.0f ns a page in move_pages)\n", ns,
	       r.queried, r.resolved, r.query_us * 1e3 / (double)r.queried);
	for (int k = 0; k < AGGR_REVAL_AGE; k++) {
		aggr_next_interval(&a);
		aggr_revalidate_budget(&a, 0);
		base_ns = bench_feed(&a, addrs, n);
	}
	while (asked < n && intervals < 1000) {
		aggr_next_interval(&a);
		aggr_revalidate_budget(&a, BENCH_BUDGET_NS);
		bench_feed(&a, addrs, n);
		aggr_noderes(&a, &r);
		asked += r.revalidated;
		query_us += r.query_us;
		if (r.query_us > worst_us)
			worst_us = r.query_us;
		intervals++;
	}
	printf("revalidate: budget %.1f ms an interval = %" PRIu64 " pages "
	       "at %" PRIu64 " ns a page; spent %.2f ms an interval in "
	       "move_pages (worst %.2f); every one of %zu sampled pages "
	       "re-asked within %d intervals (%.0f s at 1 s frames); "
	       "ingest of known pages %.0f ns a sample\n",
	       BENCH_BUDGET_NS / 1e6, a.reval_allow, a.reval_ns_per_page,
	       query_us / 1e3 / intervals, worst_us / 1e3, n, intervals,
	       (double)intervals, base_ns);
	aggr_fini(&a);
	nodemap_free(nm);
}

int
main(int argc, char **argv)
{
	static const size_t batches[] = { 1, 16, 256, NODEMAP_BATCH, 4096 };
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	size_t n = quick ? BENCH_QUICK_PAGES : BENCH_FULL_PAGES;
	long page_size = sysconf(_SC_PAGESIZE);
	struct nodemap *nm = nodemap_new();
	struct topo *topo = topo_new_system();
	uint64_t *addrs = calloc(n, sizeof(*addrs));
	int16_t *nodes = calloc(n, sizeof(*nodes));
	size_t len = n * (size_t)page_size;
	char *buf;
	int ret = 1;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED || !nm || !topo || !addrs || !nodes) {
		fprintf(stderr, "bench-nodes: cannot allocate %zu pages\n", n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		buf[i * (size_t)page_size] = 1;
		addrs[i] = (uint64_t)(uintptr_t)(buf + i * (size_t)page_size);
	}
	printf("bench-nodes: %zu pages of %ld bytes, %d node(s)\n", n,
	       page_size, topo_n_nodes(topo));
	for (size_t b = 0; b < ARRAY_SIZE(batches); b++) {
		size_t unknown;
		double ns = bench_query(nm, addrs, n, batches[b], nodes,
					&unknown);

		if (ns < 0) {
			perror("bench-nodes: move_pages");
			goto out;
		}
		printf("move_pages: %4zu page(s) a call: %7.1f ns a page "
		       "(%zu unknown)\n", batches[b], ns, unknown);
	}
	bench_revalidate(topo, addrs, n);
	bench_physnode(addrs, n);
	ret = 0;
out:
	if (buf != MAP_FAILED)
		munmap(buf, len);
	free(addrs);
	free(nodes);
	topo_free(topo);
	nodemap_free(nm);
	return ret;
}
