#include "config.h"

/*
 * NUMA figures of the aggregation on fake topologies: CPUs of 1 to 4 nodes
 * (sparse node numbers too), pages placed on nodes with aggr_set_node().
 * Checks the node x node matrix, per-node CPU side / memory side / local /
 * remote, unknown CPU and unknown page node, imbalance, frame_check; the
 * vote of >2-node machines; PHYS_ADDR placement through a recorded
 * memory-block tree; and revalidation of known nodes against the kernel,
 * on pages of this process (move_pages on our own memory).  The
 * accounting loop against a plain model is in test-aggr-model.c.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aggr.h"
#include "aggr-test.h"
#include "base.h"
#include "cpuvote.h"
#include "frame.h"
#include "framebuild.h"
#include "nodemap.h"
#include "pagetab.h"
#include "physnode.h"
#include "testlib.h"
#include "topo.h"

#define PID 4242

static void
add(struct aggr *a, int32_t cpu, uint64_t addr, uint64_t phys)
{
	struct sample s = { .addr = addr, .pid = PID, .tid = PID, .cpu = cpu,
			    .kind = SAMPLE_LOAD, .period = 1,
			    .phys_addr = phys };

	aggr_add(a, &s);
}

static struct frame *
build(struct aggr *a)
{
	struct frame_meta m = ftest_meta("faults", 1, SORT_SAMPLES, 50);
	struct frame *f = frame_build(a, &m);
	char why[256] = "";

	if (check(f != NULL) && !check_eq_i64(frame_check(f, why, sizeof(why)),
					      0))
		test_fail_at(__FILE__, __LINE__, "frame_check: %s", why);
	return f;
}

static uint64_t
mat(const struct frame *f, size_t i, size_t j)
{
	return f->matrix[i * f->n_nodes + j];
}

static bool
near(double a, double b)
{
	return a > b - 1e-9 && a < b + 1e-9;
}

/* Two nodes: every cell of the matrix, unknowns, imbalance. */
static void
test_two_nodes(void)
{
	static const int cpu_node[4] = { 0, 0, 1, 1 };
	struct topo *t = topo_new_fake(4, cpu_node);
	struct aggr a;
	struct frame *f;
	const uint64_t A = 0x10000, B = 0x20000, U = 0x30000;

	check_eq_i64(aggr_init(&a, t, NULL, 12, 0), 0);
	check(a.cpuvote == NULL);	/* two nodes need no vote table */
	check_eq_i64(aggr_set_node(&a, PID, A, 0), 0);
	check_eq_i64(aggr_set_node(&a, PID, B + 100, 1), 0);
	check_eq_i64(aggr_set_node(&a, PID, U, -1), 0);
	for (int i = 0; i < 6; i++)
		add(&a, 0, A, 0);		/* 0 -> 0 local */
	for (int i = 0; i < 3; i++)
		add(&a, 1, B, 0);		/* 0 -> 1 remote */
	for (int i = 0; i < 2; i++)
		add(&a, 2, A + 64, 0);	/* 1 -> 0 remote */
	add(&a, 3, B + 8, 0);			/* 1 -> 1 local */
	add(&a, 0, U, 0);			/* 0 -> unknown */
	add(&a, -1, A, 0);			/* unknown CPU -> 0 */
	add(&a, 77, B, 0);			/* CPU beyond the topology */
	f = build(&a);
	if (f) {
		check_eq_u64(f->totals.samples, 15);
		check_eq_u64(f->n_nodes, 2);
		check_eq_u64(mat(f, 0, 0), 6);
		check_eq_u64(mat(f, 0, 1), 3);
		check_eq_u64(mat(f, 1, 0), 2);
		check_eq_u64(mat(f, 1, 1), 1);
		check_eq_u64(f->matrix_unknown[0], 1);
		check_eq_u64(f->matrix_unknown[1], 0);
		check_eq_u64(f->cpu_unknown, 2);
		check_eq_u64(f->mem_unknown, 1);
		check_eq_u64(f->nodes[0].cpu_samples, 10);
		check_eq_u64(f->nodes[1].cpu_samples, 3);
		/* Memory side counts the unknown-CPU samples too. */
		check_eq_u64(f->nodes[0].mem_samples, 9);
		check_eq_u64(f->nodes[1].mem_samples, 5);
		check_eq_u64(f->nodes[0].local, 6);
		check_eq_u64(f->nodes[0].remote, 3);
		check_eq_u64(f->nodes[1].local, 1);
		check_eq_u64(f->nodes[1].remote, 2);
		/* 9 of 14 known on node 0: (9/14) / (1/2). */
		check(near(f->imbalance, 9.0 * 2 / 14));
		/* Per page: local/remote by the CPU's node. */
		for (size_t i = 0; i < f->n_pages; i++) {
			const struct frame_page *p = &f->pages[i];

			if (p->addr == A) {
				check_eq_u64(p->local, 6);
				check_eq_u64(p->remote, 2);
				check_eq_i64(p->node, 0);
			} else if (p->addr == B) {
				check_eq_u64(p->local, 1);
				check_eq_u64(p->remote, 3);
				check_eq_i64(p->node, 1);
			} else if (p->addr == U) {
				check_eq_i64(p->node, FRAME_NODE_UNKNOWN);
			}
		}
	}
	frame_free(f);

	/* An empty interval: imbalance unknown, sums still hold. */
	aggr_next_interval(&a);
	f = build(&a);
	if (f) {
		check_eq_u64(f->totals.samples, 0);
		check(f->imbalance < 0);
	}
	frame_free(f);
	aggr_fini(&a);
	aggr_fini(&a);		/* idempotent */
	topo_free(t);
}

/*
 * Per-page local/remote over 300 intervals (past the page table's 8-bit
 * epoch), with bursts that carry them past their 12-bit fields, samples
 * of unknown CPUs that count as neither, and a page idle for 256
 * intervals: each frame's pages and node totals against a model.
 */
static void
test_locality_intervals(void)
{
	static const int cpu_node[4] = { 0, 0, 1, 1 };
	struct topo *t = topo_new_fake(4, cpu_node);
	const uint64_t addr[3] = { 0x10000, 0x20000, 0x30000 };
	const int node[3] = { 0, 1, 1 };
	uint64_t rng = 99;
	size_t bad = 0, seen = 0;
	struct aggr a;

	check_eq_i64(aggr_init(&a, t, NULL, 12, 0), 0);
	for (int p = 0; p < 3; p++)
		check_eq_i64(aggr_set_node(&a, PID, addr[p], node[p]), 0);
	for (uint32_t i = 0; i < 300; i++) {
		uint64_t want[3][3] = { { 0 } };	/* local, remote, neither */
		uint64_t nl[2] = { 0 }, nr[2] = { 0 };
		struct frame *f;

		for (int p = 0; p < 3; p++) {
			/* Page 2 only in intervals 3 and 259. */
			if (p == 2 && i % 256 != 3)
				continue;
			for (int k = 0; k < 3; k++) {
				uint64_t n;

				rng = rng * 6364136223846793005ull +
				      1442695040888963407ull;
				n = (rng >> 33) % 40;
				if ((rng >> 20) % 6 == 0)
					n += 2000 + (rng >> 40) % 5000;
				if (k == 2)
					n %= 7;
				want[p][k] = n;
				for (uint64_t j = 0; j < n; j++) {
					/* Local: a CPU of the page's node;
					 * remote: of the other; neither: none. */
					int cpu = k == 2 ? -1 :
						  (k == 0) == (node[p] == 0) ?
						  0 : 2;

					add(&a, cpu, addr[p] + j % 4096, 0);
				}
				if (k == 0)
					nl[node[p]] += n;
				else if (k == 1)
					nr[1 - node[p]] += n;
			}
		}
		f = build(&a);
		for (size_t j = 0; f && j < f->n_pages; j++) {
			const struct frame_page *fp = &f->pages[j];
			int p = fp->addr == addr[0] ? 0 : fp->addr == addr[1] ?
				1 : 2;

			seen++;
			if (fp->local != want[p][0] ||
			    fp->remote != want[p][1] ||
			    fp->samples != want[p][0] + want[p][1] +
					   want[p][2]) {
				if (!bad)
					fprintf(stderr, "interval %u page %d: "
						"local %llu/%llu remote "
						"%llu/%llu\n", i, p,
						(unsigned long long)fp->local,
						(unsigned long long)want[p][0],
						(unsigned long long)fp->remote,
						(unsigned long long)want[p][1]);
				bad++;
			}
		}
		for (size_t n = 0; f && n < 2; n++)
			bad += f->nodes[n].local != nl[n] ||
			       f->nodes[n].remote != nr[n];
		frame_free(f);
		aggr_next_interval(&a);
	}
	check_eq_u64(bad, 0);
	check(seen > 600);
	aggr_fini(&a);
	topo_free(t);
}

/* One node: all local, imbalance 1.0 (the fair share). */
static void
test_one_node(void)
{
	static const int cpu_node[2] = { 0, 0 };
	struct topo *t = topo_new_fake(2, cpu_node);
	struct aggr a;
	struct frame *f;

	check_eq_i64(aggr_init(&a, t, NULL, 12, 0), 0);
	for (int i = 0; i < 8; i++) {
		check_eq_i64(aggr_set_node(&a, PID, 0x1000u * (unsigned)(i + 1),
					   0), 0);
		add(&a, i % 2, 0x1000u * (unsigned)(i + 1), 0);
	}
	f = build(&a);
	if (f) {
		check_eq_u64(f->n_nodes, 1);
		check_eq_u64(mat(f, 0, 0), 8);
		check_eq_u64(f->nodes[0].local, 8);
		check_eq_u64(f->nodes[0].remote, 0);
		check(near(f->imbalance, 1.0));
	}
	frame_free(f);
	aggr_fini(&a);
	topo_free(t);
}

/* Four sparse nodes (0, 2, 5, 7): indexes vs numbers, the vote table. */
static void
test_four_nodes(void)
{
	static const int cpu_node[8] = { 0, 0, 2, 2, 5, 5, 7, 7 };
	struct topo *t = topo_new_fake(8, cpu_node);
	struct aggr a;
	struct frame *f;
	const uint64_t P = 0x40000, Q = 0x50000;

	check_eq_i64(aggr_init(&a, t, NULL, 12, 0), 0);
	check(a.cpuvote != NULL);
	check_eq_i64(aggr_set_node(&a, PID, P, 5), 0);	/* index 2 */
	check_eq_i64(aggr_set_node(&a, PID, Q, 7), 0);	/* index 3 */
	/* P: 3 from node 2, 2 from node 0, 1 local (node 5). */
	add(&a, 2, P, 0);
	add(&a, 0, P, 0);
	add(&a, 3, P, 0);
	add(&a, 4, P, 0);
	add(&a, 1, P, 0);
	add(&a, 2, P, 0);
	/* Q: only node 0 CPUs. */
	for (int i = 0; i < 4; i++)
		add(&a, 0, Q, 0);
	f = build(&a);
	if (f) {
		check_eq_u64(f->n_nodes, 4);
		check_eq_i64(f->nodes[2].node, 5);
		check_eq_u64(mat(f, 1, 2), 3);	/* node 2 -> node 5 */
		check_eq_u64(mat(f, 0, 2), 2);	/* node 0 -> node 5 */
		check_eq_u64(mat(f, 2, 2), 1);	/* node 5 local */
		check_eq_u64(mat(f, 0, 3), 4);	/* node 0 -> node 7 */
		check_eq_u64(f->nodes[0].cpu_samples, 6);
		check_eq_u64(f->nodes[0].remote, 6);
		check_eq_u64(f->nodes[2].mem_samples, 6);
		check_eq_u64(f->nodes[3].mem_samples, 4);
		check_eq_u64(f->nodes[3].local, 0);
		check(near(f->imbalance, 6.0 * 4 / 10));
	}
	/* Who touched P most: node index 1 (node 2, 3 of 6). */
	check_eq_i64(cpuvote_top(a.cpuvote, PID, P >> 12), 1);
	check_eq_i64(cpuvote_top(a.cpuvote, PID, Q >> 12), 0);
	check_eq_i64(cpuvote_top(a.cpuvote, PID, 0x99999), -1);
	frame_free(f);
	/* Votes belong to their interval. */
	aggr_next_interval(&a);
	check_eq_i64(cpuvote_top(a.cpuvote, PID, P >> 12), -1);
	add(&a, 6, P, 0);
	aggr_flush(&a);
	check_eq_i64(cpuvote_top(a.cpuvote, PID, P >> 12), 3);
	aggr_reset(&a);
	check_eq_u64(cpuvote_count(a.cpuvote), 0);
	aggr_fini(&a);
	topo_free(t);
}

/* A majority wins whatever the order, and so does a node with more than
 * a third of the samples and more than any other. */
static void
test_vote(void)
{
	struct cpuvote *v = cpuvote_new(3);
	static const int seq[] = { 4, 1, 4, 2, 4, 3, 4 };
	static const int plural[] = { 1, 2, 3, 1, 4, 1, 5 };

	if (!check(v != NULL))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(seq); i++)
		check_eq_i64(cpuvote_add(v, 9, 1, seq[i]), 0);
	check_eq_i64(cpuvote_top(v, 9, 1), 4);
	for (size_t i = 0; i < ARRAY_SIZE(plural); i++)
		check_eq_i64(cpuvote_add(v, 9, 3, plural[i]), 0);
	check_eq_i64(cpuvote_top(v, 9, 3), 1);
	check_eq_i64(cpuvote_add(v, 9, 2, 1), 0);
	check_eq_i64(cpuvote_add(v, 9, 2, 2), 0);
	check(cpuvote_top(v, 9, 2) == 1 || cpuvote_top(v, 9, 2) == 2);
	/* Cancelled out: no leader rather than a guess. */
	check_eq_i64(cpuvote_add(v, 9, 2, 3), 0);
	check_eq_i64(cpuvote_top(v, 9, 2), -1);
	check_eq_i64(cpuvote_add(v, 9, 3, 0), 0);
	/* Full at 3 pages: the 4th is refused, the others still vote. */
	check_eq_i64(cpuvote_add(v, 9, 4, 0), -ENOSPC);
	check_eq_i64(cpuvote_add(v, 9, 3, 0), 0);
	check_eq_i64(cpuvote_add(v, 0, 5, 0), -EINVAL);
	check_eq_i64(cpuvote_add(v, 9, 5, -1), -EINVAL);
	check_eq_u64(cpuvote_count(v), 3);
	cpuvote_free(v);
	cpuvote_free(NULL);

	/* Growth keeps every vote. */
	v = cpuvote_new(0);
	for (uint64_t p = 0; p < 5000; p++)
		cpuvote_add(v, 7, p, (int)(p % 5));
	for (uint64_t p = 0; p < 5000; p += 499)
		check_eq_i64(cpuvote_top(v, 7, p), (int)(p % 5));
	check_eq_u64(cpuvote_count(v), 5000);
	cpuvote_free(v);
}

/* PHYS_ADDR through tests/fixtures/sysfs/numa-physmem: nodes 0 and 2. */
static void
test_phys(void)
{
	static const int cpu_node[2] = { 0, 2 };
	const char *src = getenv("MEMTOP_SRCDIR");
	char root[4096];
	struct topo *t = topo_new_fake(2, cpu_node);
	struct physnode *p = NULL;
	struct aggr a;
	struct frame *f;
	const uint64_t block = 128ull << 20;

	snprintf(root, sizeof(root), "%s/tests/fixtures/sysfs/numa-physmem",
		 src ? src : "..");
	setenv("MEMTOP_SYSFS_ROOT", root, 1);
	if (!check_eq_i64(physnode_new(&p), 0))
		goto out;
	check_eq_i64(aggr_init(&a, t, NULL, 12, 0), 0);
	aggr_set_physnode(&a, p);
	add(&a, 0, 0x1000, 8 * block + 0x3000);	/* node 2 */
	add(&a, 0, 0x2000, 2 * block);		/* node 0 */
	add(&a, 1, 0x2000, 2 * block);		/* node 0, remote */
	add(&a, 1, 0x3000, 5 * block);		/* hole: unknown */
	add(&a, 1, 0x4000, 0);			/* no PHYS_ADDR */
	f = build(&a);
	if (f) {
		check_eq_u64(mat(f, 0, 1), 1);
		check_eq_u64(mat(f, 0, 0), 1);
		check_eq_u64(mat(f, 1, 0), 1);
		check_eq_u64(f->matrix_unknown[1], 2);
		check_eq_u64(f->mem_unknown, 2);
		check_eq_u64(f->noderes.phys, 3);
		check_eq_u64(f->noderes.queried, 0);
	}
	frame_free(f);
	aggr_fini(&a);
out:
	physnode_free(p);
	unsetenv("MEMTOP_SYSFS_ROOT");
	topo_free(t);
}

/* Allows exactly `pages` re-asks this interval. */
static void
allow(struct aggr *a, uint64_t pages)
{
	aggr_revalidate_budget(a, 1);
	check_eq_u64(aggr_revalidate_budget(a, pages * a->reval_ns_per_page),
		     pages);
}

/*
 * After revalidation: page 0 dropped, so the kernel has no node for it
 * now and it keeps the one it had (real0); then no allowance, no re-ask.
 */
static void
reval_dropped_and_unbudgeted(struct aggr *a, char *buf, size_t n,
			     long page_size, int16_t real0)
{
	struct frame_noderes r;
	struct page_entry *e;

	check_eq_i64(madvise(buf, (size_t)page_size, MADV_DONTNEED), 0);
	for (int k = 0; k < AGGR_REVAL_AGE + 1; k++)
		aggr_next_interval(a);
	allow(a, 1000);
	ftest_own_pages(a, buf, 1);
	aggr_noderes(a, &r);
	check_eq_u64(r.revalidated, 1);
	check_eq_u64(r.resolved, 0);
	e = pagetab_find(a->pages, getpid(), (uint64_t)(uintptr_t)buf >> 12);
	check(e && e->node == real0);

	/* No allowance, no re-ask. */
	for (int k = 0; k < AGGR_REVAL_AGE + 1; k++)
		aggr_next_interval(a);
	check_eq_u64(aggr_revalidate_budget(a, 0), 0);
	ftest_own_pages(a, buf, n);
	aggr_noderes(a, &r);
	check_eq_u64(r.queried, 0);
	check(a->reval_ns_per_page >= 50);
}

/*
 * Revalidation against the kernel: 64 pages of ours; the table is told
 * they are on the other node.  A sampled page is re-asked once its answer
 * is AGGR_REVAL_AGE intervals old, within the interval's allowance; a
 * page with no answer now keeps its node.
 */
static void
test_revalidate(void)
{
	static const int cpu_node[2] = { 0, 1 };
	const size_t n = 64;
	long page_size = sysconf(_SC_PAGESIZE);
	struct topo *t = topo_new_fake(2, cpu_node);
	struct nodemap *nm = nodemap_new();
	struct frame_noderes r;
	struct aggr a;
	int16_t real[64];
	uint64_t fixed = 0;
	char *buf;

	buf = mmap(NULL, n * (size_t)page_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!check(buf != MAP_FAILED) || !check(nm != NULL))
		goto out;
	memset(buf, 1, n * (size_t)page_size);
	check_eq_i64(aggr_init(&a, t, nm, 12, 0), 0);
	ftest_own_pages(&a, buf, n);
	aggr_noderes(&a, &r);
	check_eq_u64(r.queried, n);
	check_eq_u64(r.resolved, n);
	for (size_t i = 0; i < n; i++) {
		uint64_t addr = (uint64_t)(uintptr_t)(buf + i * (size_t)page_size);
		struct page_entry *e = pagetab_find(a.pages, getpid(),
						    addr >> 12);

		if (!check(e != NULL) || !check(e->node >= 0))
			goto out_aggr;
		real[i] = e->node;
		/* Pretend it was seen on the other node. */
		aggr_set_node(&a, getpid(), addr, e->node == 0 ? 1 : 0);
	}
	/* Too young: sampled again, not re-asked whatever the allowance. */
	for (int k = 1; k < AGGR_REVAL_AGE; k++) {
		aggr_next_interval(&a);
		allow(&a, 1000);
		ftest_own_pages(&a, buf, n);
		aggr_noderes(&a, &r);
		check_eq_u64(r.queried, 0);
	}
	/* Old enough: 16 an interval. */
	for (int k = 0; k < 6 && fixed < n; k++) {
		aggr_next_interval(&a);
		allow(&a, 16);
		ftest_own_pages(&a, buf, n);
		aggr_noderes(&a, &r);
		check_eq_u64(r.revalidated, 16);
		check_eq_u64(r.changed, 16);
		fixed += r.changed;
	}
	check_eq_u64(fixed, n);
	for (size_t i = 0; i < n; i++) {
		uint64_t addr = (uint64_t)(uintptr_t)(buf + i * (size_t)page_size);
		struct page_entry *e = pagetab_find(a.pages, getpid(),
						    addr >> 12);

		check(e && e->node == real[i]);
	}
	reval_dropped_and_unbudgeted(&a, buf, n, page_size, real[0]);
out_aggr:
	aggr_fini(&a);
out:
	if (buf != MAP_FAILED)
		munmap(buf, n * (size_t)page_size);
	nodemap_free(nm);
	topo_free(t);
}

/* pid 0 (-e damon -a's physical row) is never asked of move_pages,
 * whose pid 0 is the caller: memtop's own page at that address. */
static void
test_pid0(void)
{
	static const int cpu_node[2] = { 0, 1 };
	struct topo *t = topo_new_fake(2, cpu_node);
	struct nodemap *nm = nodemap_new();
	static char page[8192] __attribute__((aligned(4096)));
	struct sample s = { .addr = (uint64_t)(uintptr_t)page, .pid = 0,
			    .cpu = 0, .kind = SAMPLE_OTHER, .period = 1 };
	struct frame_noderes r;
	struct aggr a;
	struct page_entry *e;

	page[0] = 1;
	if (!check(nm != NULL) || !check(aggr_init(&a, t, nm, 12, 0) == 0))
		goto out;
	aggr_add(&a, &s);
	aggr_flush(&a);
	aggr_noderes(&a, &r);
	check_eq_u64(r.queried, 0);
	e = pagetab_find(a.pages, 0, s.addr >> 12);
	check(e && e->node < 0);
	aggr_fini(&a);
out:
	nodemap_free(nm);
	topo_free(t);
}

int
main(void)
{
	test_two_nodes();
	test_locality_intervals();
	test_one_node();
	test_four_nodes();
	test_vote();
	test_phys();
	test_revalidate();
	test_pid0();
	return test_result();
}
