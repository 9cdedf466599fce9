#include "config.h"

/*
 * Migration on request (src/aggr/migrate.c): candidates from a frame on fake
 * 2- and 4-node topologies (remote-heavy pages only, best first, target =
 * the other node / the voted node), batching per pid, how each move_pages
 * status is counted (a fake kernel plays move_pages), the page table
 * taking the new node, and the real call on this process's own pages: on
 * a one-node machine a move to node 0 succeeds without moving anything,
 * a move to a node that does not exist fails and is counted as failed.
 */

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aggr.h"
#include "aggr-test.h"
#include "base.h"
#include "frame.h"
#include "framebuild.h"
#include "migrate.h"
#include "nodemap.h"
#include "pagetab.h"
#include "testlib.h"
#include "topo.h"

/* The fake kernel: records calls, answers from a script. */
struct fake_kernel {
	int calls;
	int pids[8];
	unsigned long counts[8];
	int flags;
	void *pages[64];
	int nodes[64];
	size_t n_seen;
	long ret;		/* < 0: fail the call with errno = err */
	int err;
	int fail_calls;		/* with ret < 0: only the first N calls fail
				 * (0 = all) */
	size_t fill;		/* statuses a failing call still stores */
	int status[64];		/* by page order of the whole run */
	size_t n_status;
};

static long
fake_move(void *ctx, int pid, unsigned long count, void **pages,
	  const int *nodes, int *status, int flags)
{
	struct fake_kernel *k = ctx;

	if (k->calls < 8) {
		k->pids[k->calls] = pid;
		k->counts[k->calls] = count;
	}
	k->calls++;
	k->flags = flags;
	for (unsigned long i = 0; i < count && k->n_seen < 64; i++) {
		k->pages[k->n_seen] = pages[i];
		k->nodes[k->n_seen++] = nodes[i];
	}
	if (k->ret < 0 && (k->fail_calls == 0 || k->calls <= k->fail_calls)) {
		for (size_t i = 0; i < k->fill && i < count; i++)
			status[i] = k->status[k->n_status++];
		errno = k->err;
		return -1;
	}
	for (unsigned long i = 0; i < count; i++)
		status[i] = k->n_status < 64 ? k->status[k->n_status++] : 0;
	return 0;
}

static void
add(struct aggr *a, int32_t pid, int32_t cpu, uint64_t addr, int n)
{
	struct sample s = { .addr = addr, .pid = pid, .tid = pid, .cpu = cpu,
			    .kind = SAMPLE_STORE, .period = 1 };

	for (int i = 0; i < n; i++)
		aggr_add(a, &s);
}

static struct frame *
build(struct aggr *a)
{
	struct frame_meta m = ftest_meta("faults", 1, SORT_SAMPLES, 50);

	return frame_build(a, &m);
}

static int
node_of(struct aggr *a, int32_t pid, uint64_t addr)
{
	struct page_entry *e = pagetab_find(a->pages, pid, addr >> 12);

	return e ? e->node : -99;
}

static void
test_two_nodes(void)
{
	static const int cpu_node[2] = { 0, 1 };
	struct topo *t = topo_new_fake(2, cpu_node);
	struct migrate *m = migrate_new();
	struct fake_kernel k = { .status = { 0, -EBUSY } };
	struct frame_migrations r;
	struct aggr a;
	struct frame *f;
	const uint64_t A = 0xa000, B = 0xb000, C = 0xc000, D = 0xd000;

	if (!check(m != NULL))
		return;
	migrate_set_mover(m, fake_move, &k);
	check_eq_i64(aggr_init(&a, t, NULL, 12, 0), 0);
	aggr_set_node(&a, 10, A, 1);
	aggr_set_node(&a, 10, B, 0);
	aggr_set_node(&a, 10, C, 1);
	add(&a, 10, 0, A + 40, 5);	/* A: 5 remote from node 0 */
	add(&a, 10, 1, A, 1);		/*    1 local */
	add(&a, 10, 1, B, 3);		/* B: 3 remote from node 1 */
	add(&a, 10, 0, C, 1);		/* C: 1 remote, 1 local: stays */
	add(&a, 10, 1, C, 1);
	add(&a, 10, 0, D, 4);		/* D: node unknown: stays */
	f = build(&a);
	if (!check(f != NULL))
		goto out;
	check_eq_i64(migrate_snapshot(m, f, &a), 0);
	check_eq_u64(migrate_n_candidates(m), 2);
	/* Nothing moves until asked. */
	check_eq_i64(k.calls, 0);
	check_eq_u64(migrate_top(m, &a, 0), 2);
	check_eq_i64(k.calls, 1);
	check_eq_i64(k.pids[0], 10);
	check_eq_u64(k.counts[0], 2);
	check_eq_i64(k.flags, MPOL_MF_MOVE);
	/* One batch per pid, in address order: A (to 0) then B (to 1). */
	check(k.pages[0] == (void *)A && k.nodes[0] == 0);
	check(k.pages[1] == (void *)B && k.nodes[1] == 1);
	migrate_take(m, &r);
	check_eq_u64(r.moved, 1);
	check_eq_u64(r.busy, 1);
	check_eq_u64(r.denied + r.failed + r.skipped, 0);
	/* The moved page's samples now land on node 0. */
	check_eq_i64(node_of(&a, 10, A), 0);
	check_eq_i64(node_of(&a, 10, B), 0);
	/* Taken: zero again; candidates used up. */
	migrate_take(m, &r);
	check_eq_u64(r.moved + r.busy, 0);
	check_eq_u64(migrate_top(m, &a, 5), 0);

	/* Best first: only the top candidate when asked for one. */
	check_eq_i64(migrate_snapshot(m, f, &a), 0);
	k.calls = 0;
	k.n_seen = 0;
	k.n_status = 0;
	check_eq_u64(migrate_top(m, &a, 1), 1);
	check(k.pages[0] == (void *)A);
	check_eq_u64(migrate_n_candidates(m), 1);
	/* One page by address (any byte of it); a page that is not a
	 * candidate is skipped without a call. */
	check_eq_u64(migrate_page(m, &a, 10, C + 5), 0);
	check_eq_u64(migrate_page(m, &a, 11, B), 0);
	check_eq_u64(migrate_page(m, &a, 10, B + 100), 1);
	check_eq_i64(k.calls, 2);
	migrate_take(m, &r);
	check_eq_u64(r.skipped, 2);
	check_eq_u64(r.moved + r.busy, 2);
	frame_free(f);
out:
	aggr_fini(&a);
	migrate_free(m);
	topo_free(t);
}

/* Every status and whole-call error lands in its counter. */
static void
test_statuses(void)
{
	static const int cpu_node[2] = { 0, 1 };
	static const struct {
		long ret;
		int err;
		int status;
		int moved, busy, denied, failed;
	} cases[] = {
		{ 0, 0, 1, 1, 0, 0, 0 },
		{ 0, 0, -EBUSY, 0, 1, 0, 0 },
		{ 0, 0, -EPERM, 0, 0, 1, 0 },
		{ 0, 0, -EACCES, 0, 0, 1, 0 },
		{ 0, 0, -ENOENT, 0, 0, 0, 1 },
		{ 0, 0, -EFAULT, 0, 0, 0, 1 },
		{ 0, 0, -ENOMEM, 0, 0, 0, 1 },
		{ 0, 0, 0, 0, 0, 0, 1 },	/* stayed on its node */
		{ -1, EPERM, 0, 0, 0, 1, 0 },	/* no ptrace access */
		{ -1, EACCES, 0, 0, 0, 1, 0 },
		{ -1, ESRCH, 0, 0, 0, 0, 1 },	/* process gone */
		{ -1, ENODEV, 0, 0, 0, 0, 1 },	/* no such node */
	};
	struct topo *t = topo_new_fake(2, cpu_node);

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fake_kernel k = { .ret = cases[i].ret,
					 .err = cases[i].err,
					 .status = { cases[i].status } };
		struct migrate *m = migrate_new();
		struct frame_migrations r;
		struct aggr a;
		struct frame *f;

		check_eq_i64(aggr_init(&a, t, NULL, 12, 0), 0);
		migrate_set_mover(m, fake_move, &k);
		aggr_set_node(&a, 20, 0x5000, 0);
		add(&a, 20, 1, 0x5000, 2);	/* remote from node 1 */
		f = build(&a);
		if (f) {
			migrate_snapshot(m, f, &a);
			check_eq_u64(migrate_top(m, &a, 0), 1);
		}
		migrate_take(m, &r);
		if (!check_eq_u64(r.moved, cases[i].moved) |
		    !check_eq_u64(r.busy, cases[i].busy) |
		    !check_eq_u64(r.denied, cases[i].denied) |
		    !check_eq_u64(r.failed, cases[i].failed))
			test_fail_at(__FILE__, __LINE__, "case %zu", i);
		check_eq_i64(node_of(&a, 20, 0x5000), cases[i].moved ? 1 : 0);
		frame_free(f);
		aggr_fini(&a);
		migrate_free(m);
	}
	topo_free(t);
}

/*
 * A bad target node stops the kernel's walk at that page: the pages before
 * it are done, it alone fails, the pages after it go in another call.
 */
static void
test_bad_node(void)
{
	static const int cpu_node[2] = { 0, 1 };
	struct topo *t = topo_new_fake(2, cpu_node);
	struct migrate *m = migrate_new();
	struct fake_kernel k = { .ret = -1, .err = ENODEV, .fail_calls = 1,
				 .fill = 1, .status = { 1, 1 } };
	struct frame_migrations r;
	struct aggr a;
	struct frame *f;

	check_eq_i64(aggr_init(&a, t, NULL, 12, 0), 0);
	migrate_set_mover(m, fake_move, &k);
	for (uint64_t p = 1; p <= 3; p++) {
		aggr_set_node(&a, 40, p << 12, 0);
		add(&a, 40, 1, p << 12, 2);
	}
	f = build(&a);
	if (f) {
		migrate_snapshot(m, f, &a);
		check_eq_u64(migrate_top(m, &a, 0), 3);
	}
	check_eq_i64(k.calls, 2);
	check_eq_u64(k.counts[0], 3);
	check_eq_u64(k.counts[1], 1);
	check(k.pages[3] == (void *)0x3000);
	migrate_take(m, &r);
	check_eq_u64(r.moved, 2);
	check_eq_u64(r.failed, 1);
	check_eq_i64(node_of(&a, 40, 0x1000), 1);
	check_eq_i64(node_of(&a, 40, 0x2000), 0);
	check_eq_i64(node_of(&a, 40, 0x3000), 1);
	frame_free(f);
	aggr_fini(&a);
	migrate_free(m);
	topo_free(t);
}

/* Two processes: one call each; more than two nodes: the voted node. */
static void
test_pids_and_vote(void)
{
	static const int cpu_node[8] = { 0, 0, 2, 2, 5, 5, 7, 7 };
	struct topo *t = topo_new_fake(8, cpu_node);
	struct migrate *m = migrate_new();
	struct fake_kernel k = { .status = { 2, 5, 0 } };
	struct frame_migrations r;
	struct aggr a;
	struct frame *f;

	check_eq_i64(aggr_init(&a, t, NULL, 12, 0), 0);
	migrate_set_mover(m, fake_move, &k);
	aggr_set_node(&a, 30, 0x1000, 7);
	add(&a, 30, 2, 0x1000, 3);	/* node 2 touched most */
	add(&a, 30, 0, 0x1000, 1);
	add(&a, 30, 6, 0x1000, 1);	/* local */
	aggr_set_node(&a, 31, 0x2000, 7);
	add(&a, 31, 1, 0x2000, 4);	/* node 0 */
	aggr_set_node(&a, 30, 0x3000, 2);
	add(&a, 30, 4, 0x3000, 2);	/* node 5 */
	/* Remote-heavy but the vote is for its own node: no target. */
	aggr_set_node(&a, 30, 0x4000, 5);
	add(&a, 30, 4, 0x4000, 5);
	add(&a, 30, 0, 0x4000, 3);
	add(&a, 30, 2, 0x4000, 3);
	f = build(&a);
	if (f) {
		check_eq_i64(migrate_snapshot(m, f, &a), 0);
		check_eq_u64(migrate_n_candidates(m), 3);
		check_eq_u64(migrate_top(m, &a, 0), 3);
	}
	check_eq_i64(k.calls, 2);
	check_eq_i64(k.pids[0], 30);
	check_eq_u64(k.counts[0], 2);
	check_eq_i64(k.pids[1], 31);
	check(k.pages[0] == (void *)0x1000 && k.nodes[0] == 2);
	check(k.pages[1] == (void *)0x3000 && k.nodes[1] == 5);
	check(k.pages[2] == (void *)0x2000 && k.nodes[2] == 0);
	migrate_take(m, &r);
	check_eq_u64(r.moved, 3);
	frame_free(f);
	aggr_fini(&a);
	migrate_free(m);
	topo_free(t);
}

/*
 * The real move_pages on pages of this process.  Fake CPUs: CPU 0 on the
 * node the kernel put our pages on (r), CPU 1 on r + 1.  Page P is told
 * to be on r + 1 and touched from CPU 0: the move to r succeeds in place.
 * Page Q is on r, touched from CPU 1: the move to r + 1 fails when that
 * node does not exist (one-node machines) and is counted either way.
 */
static void
test_real(void)
{
	long page_size = sysconf(_SC_PAGESIZE);
	struct nodemap *nm = nodemap_new();
	struct migrate *m = migrate_new();
	struct frame_migrations r;
	struct frame *f = NULL;
	struct topo *t = NULL;
	struct aggr a;
	int16_t real[2] = { -1, -1 };
	uint64_t addrs[2];
	char *buf;
	int cpu_node[2];
	bool other_exists;

	buf = mmap(NULL, 2 * (size_t)page_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!check(buf != MAP_FAILED))
		goto out;
	memset(buf, 7, 2 * (size_t)page_size);
	addrs[0] = (uint64_t)(uintptr_t)buf;
	addrs[1] = addrs[0] + (uint64_t)page_size;
	check_eq_i64(nodemap_query(nm, getpid(), addrs, 2, real), 0);
	if (!check(real[0] >= 0 && real[0] == real[1]))
		goto out;
	cpu_node[0] = real[0];
	cpu_node[1] = real[0] + 1;
	other_exists = numa_available() >= 0 &&
		       cpu_node[1] <= numa_max_node() &&
		       numa_node_size64(cpu_node[1], NULL) > 0;
	t = topo_new_fake(2, cpu_node);
	check_eq_i64(aggr_init(&a, t, NULL, 12, 0), 0);
	aggr_set_node(&a, getpid(), addrs[0], cpu_node[1]);
	aggr_set_node(&a, getpid(), addrs[1], cpu_node[0]);
	add(&a, getpid(), 0, addrs[0], 3);
	add(&a, getpid(), 1, addrs[1], 2);
	f = build(&a);
	if (f) {
		check_eq_i64(migrate_snapshot(m, f, &a), 0);
		check_eq_u64(migrate_top(m, &a, 0), 2);
	}
	migrate_take(m, &r);
	check_eq_u64(r.moved, other_exists ? 2 : 1);
	check_eq_u64(r.failed, other_exists ? 0 : 1);
	check_eq_u64(r.busy + r.denied, 0);
	check_eq_i64(node_of(&a, getpid(), addrs[0]), real[0]);
	printf("real move_pages: %llu moved, %llu failed (node %d %s)\n",
	       (unsigned long long)r.moved, (unsigned long long)r.failed,
	       cpu_node[1], other_exists ? "exists" : "does not exist");
	frame_free(f);
	aggr_fini(&a);
out:
	if (buf != MAP_FAILED)
		munmap(buf, 2 * (size_t)page_size);
	topo_free(t);
	migrate_free(m);
	nodemap_free(nm);
}

int
main(void)
{
	test_two_nodes();
	test_statuses();
	test_pids_and_vote();
	test_bad_node();
	test_real();
	migrate_free(NULL);
	return test_result();
}
