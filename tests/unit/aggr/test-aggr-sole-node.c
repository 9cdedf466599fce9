/*
 * A live run on a one-node machine (a nodemap, a one-node topology): every
 * page sampled is put on that node without a move_pages query, even one no
 * longer in memory, and the frame asks nothing either (its pages' nodes
 * are not read again); with two nodes the same pages are queried, at the
 * sample and in the frame, and so are they with the one-node stand-in
 * for a machine whose nodes libnuma could not read and with a one-node
 * sysfs tree (MEMTOP_SYSFS_ROOT).  A shard takes its collector's choice.  The node is the
 * topology's, whatever its number; pid 0's pages get none.  Each is run
 * twice, with a memory-block map and without (the batch's general
 * page->node pass and its plain one).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aggr.h"
#include "aggr-test.h"
#include "frame.h"
#include "framebuild.h"
#include "nodemap.h"
#include "pagetab.h"
#include "physnode.h"
#include "testlib.h"
#include "topo.h"

#define PAGES 8

static struct frame *
build(struct aggr *a)
{
	struct frame_meta m = ftest_meta("faults", 1, SORT_SAMPLES, 50);
	struct frame *f = frame_build(a, &m);

	check(f != NULL);
	return f;
}

/* PAGES pages of buf sampled once each, the first no longer in memory;
 * returns the pages queried, by the samples and by the frame.  Each
 * page's node must be want_node in the table and the frame (-1: any
 * answer the kernel gives). */
static uint64_t
sample_run_with(struct topo *t, int want_node, bool with_map)
{
	long page_size = sysconf(_SC_PAGESIZE);
	size_t len = PAGES * (size_t)page_size;
	struct nodemap *nm = nodemap_new();
	struct page_entry *e0;
	struct sample s0 = { .addr = 0x7000, .pid = 0, .cpu = 0,
			     .kind = SAMPLE_OTHER, .period = 1 };
	struct frame_noderes r = { 0 };
	struct frame *f = NULL;
	struct physnode *map = NULL;
	struct aggr a;
	char *buf;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!check(buf != MAP_FAILED) || !check(t && nm))
		goto out;
	memset(buf, 1, len);
	check_eq_i64(madvise(buf, (size_t)page_size, MADV_DONTNEED), 0);
	if (!check(aggr_init(&a, t, nm, 12, 0) == 0))
		goto out;
	/* A memory-block map (none of these samples has PHYS_ADDR) takes
	 * the batch's general page->node pass, not its plain one. */
	if (with_map && check_eq_i64(physnode_new_empty(&map, 1 << 27), 0))
		aggr_set_physnode(&a, map);
	for (size_t i = 0; i < PAGES; i++) {
		struct sample s = {
			.addr = (uint64_t)(uintptr_t)(buf + i * (size_t)page_size),
			.pid = getpid(), .tid = getpid(), .cpu = 0,
			.kind = SAMPLE_STORE, .period = 1,
		};

		aggr_add(&a, &s);
	}
	/* pid 0 (-e damon -a's physical row): never a node, asked or not. */
	aggr_add(&a, &s0);
	aggr_flush(&a);
	aggr_noderes(&a, &r);
	e0 = pagetab_find(a.pages, 0, s0.addr >> 12);
	check(e0 && e0->node < 0);
	f = build(&a);
	for (size_t i = 0; want_node >= 0 && i < PAGES; i++) {
		uint64_t addr = (uint64_t)(uintptr_t)(buf + i * (size_t)page_size);
		struct page_entry *e = pagetab_find(a.pages, getpid(),
						    addr >> 12);

		if (!check(e != NULL) || !check_eq_i64(e->node, want_node))
			break;
	}
	if (f) {
		r.queried += f->noderes.queried;
		check_eq_u64(f->n_pages, PAGES + 1);
		for (size_t i = 0; want_node >= 0 && i < f->n_pages; i++)
			if (f->pages[i].pid != 0)
				check_eq_i64(f->pages[i].node, want_node);
	}
	frame_free(f);
	aggr_fini(&a);
	physnode_free(map);
out:
	if (buf != MAP_FAILED)
		munmap(buf, len);
	nodemap_free(nm);
	topo_free(t);
	return r.queried;
}

/* sample_run_with both ways, which must agree; their queries. */
static uint64_t
sample_run(struct topo *(*mk)(void *), void *arg, int want_node)
{
	uint64_t plain = sample_run_with(mk(arg), want_node, false);

	check_eq_u64(sample_run_with(mk(arg), want_node, true), plain);
	return plain;
}

static struct topo *
mk_fake(void *cpu_node)
{
	return topo_new_fake(2, cpu_node);
}

static struct topo *
mk_sysinfo(void *unused)
{
	(void)unused;
	return topo_new_sysinfo();
}

/* A shard takes its collector's choice (MEMTOP_ASK_NODES clears it in
 * the collector after aggr_init): on one node, asked or not alike. */
static void
shard_takes_choice(void)
{
	static const int one0[2] = { 0, 0 };
	struct topo *t = topo_new_fake(2, one0);
	struct nodemap *nm = nodemap_new(), *snm = nodemap_new();
	struct aggr col, sh;

	if (!check(t && nm && snm) ||
	    !check(aggr_init(&col, t, nm, 12, 0) == 0))
		goto out;
	check_eq_i64(col.sole_node, 0);
	for (int ask = 0; ask < 2; ask++) {
		col.sole_node = ask ? -1 : 0;
		if (!check(aggr_shard_init(&sh, &col, snm) == 0))
			break;
		check_eq_i64(sh.sole_node, col.sole_node);
		aggr_fini(&sh);
	}
	aggr_fini(&col);
out:
	nodemap_free(snm);
	nodemap_free(nm);
	topo_free(t);
}

int
main(void)
{
	static const int one0[2] = { 0, 0 }, one3[2] = { 3, 3 };
	static const int two[2] = { 0, 1 };
	const char *src = getenv("MEMTOP_SRCDIR");
	char root[4096];
	struct topo *t;

	check_eq_u64(sample_run(mk_fake, (void *)one0, 0), 0);
	check_eq_u64(sample_run(mk_fake, (void *)one3, 3), 0);
	/* Each page at its sample, then each listed page in the frame. */
	check_eq_u64(sample_run(mk_fake, (void *)two, -1), 2 * PAGES);
	/* One node because the machine's could not be read: asked. */
	check_eq_u64(sample_run(mk_sysinfo, NULL, -1), 2 * PAGES);
	/* One node from a sysfs tree (another machine's): asked. */
	snprintf(root, sizeof(root), "%s/tests/fixtures/sysfs/no-node",
		 src ? src : "..");
	setenv("MEMTOP_SYSFS_ROOT", root, 1);
	t = topo_new_system();
	unsetenv("MEMTOP_SYSFS_ROOT");
	if (check(t != NULL) && check_eq_i64(topo_n_nodes(t), 1))
		check_eq_u64(sample_run_with(t, -1, false), 2 * PAGES);
	else
		topo_free(t);
	shard_takes_choice();
	return test_result();
}
