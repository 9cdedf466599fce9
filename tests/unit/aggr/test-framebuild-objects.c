/*
 * Pages named by objects at frame building (src/aggr/framebuild_objects.c)
 * on a fake 2-node, 4-CPU topology: a page inside an object carries it
 * (site, callers, size, base, tid, the size asked, the first toucher: the
 * thread of its first sample), a page of none carries NULL, the site rows
 * count the samples, loads, stores, node mix, live objects, bytes asked
 * and first touchers,
 * and the sums hold (frame_check): samples with an object + without =
 * attributed.  A shown page whose node the frame re-reads moves its
 * samples to that node in its site's row too.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aggr.h"
#include "aggr-test.h"
#include "frame.h"
#include "framebuild.h"
#include "nodemap.h"
#include "objtab.h"
#include "pagetab.h"
#include "testlib.h"
#include "topo.h"

static void
add_tid(struct aggr *a, int32_t pid, int32_t tid, int32_t cpu, uint64_t addr,
	uint8_t kind)
{
	struct sample s = { .addr = addr, .pid = pid, .tid = tid, .cpu = cpu,
			    .kind = kind, .period = 1 };

	aggr_add(a, &s);
}

static void
add(struct aggr *a, int32_t pid, int32_t cpu, uint64_t addr, uint8_t kind)
{
	add_tid(a, pid, pid, cpu, addr, kind);
}

static struct frame *
build(struct aggr *a)
{
	struct frame_meta m = ftest_meta("faults", 1, SORT_SAMPLES, 10);

	return frame_build(a, &m);
}

static const struct frame_page *
page(const struct frame *f, uint64_t addr)
{
	for (size_t i = 0; i < f->n_pages; i++)
		if (f->pages[i].addr == addr)
			return &f->pages[i];
	return NULL;
}

/* What the scenario's frame must show. */
static void
check_frame(const struct frame *f)
{
	const struct frame_page *p;
	char why[256] = "";

	check_eq_i64(frame_check(f, why, sizeof(why)), 0);
	if (why[0])
		test_fail_at(__FILE__, __LINE__, "%s", why);
	check(f->objects_on);
	check_eq_u64(f->objects_samples, 10);
	check_eq_u64(f->objects_none, 4);
	check_eq_u64(f->objects_live, 3);
	p = page(f, 0x103000);
	check(p && p->object);
	if (p && p->object) {
		check_eq_str(p->object->site, "make_table+0x1c");
		check_eq_str(p->object->callers[0], "main+0x10");
		check(p->object->callers[1] == NULL);
		check_eq_u64(p->object->size, 0x4000);
		check_eq_u64(p->object->base, 0x100000);
		check_eq_i64(p->object->tid, 7);
		check_eq_u64(p->object->requested, 0x3ff0);
		check_eq_i64(p->object->first_touch, 101);
	}
	p = page(f, 0x200000);
	check(p && p->object);
	if (p && p->object)
		check_eq_i64(p->object->first_touch, 42);
	p = page(f, 0x500000);
	check(p && p->object == NULL);
	check_eq_u64(f->n_objects, 2);
	if (f->n_objects == 2) {
		const struct frame_objsite *s0 = &f->objects[0];
		const struct frame_objsite *s1 = &f->objects[1];

		check_eq_str(s0->site, "make_table+0x1c");
		check_eq_u64(s0->samples, 7);
		check_eq_u64(s0->loads, 5);
		check_eq_u64(s0->stores, 2);
		check_eq_u64(s0->objects, 1);
		check_eq_u64(s0->bytes, 0x4000);
		check_eq_u64(s0->nodes[0], 5);
		check_eq_u64(s0->nodes[1], 2);
		check_eq_u64(s0->n_tids, 1);
		check_eq_u64(s0->requested, 0x3ff0);
		check_eq_u64(s0->n_touch_tids, 1);
		check_eq_i64(s0->touch_tids[0], 101);
		check_eq_str(s1->site, "make_grid+0x8");
		check_eq_u64(s1->samples, 3);
		check_eq_u64(s1->objects, 2);
		check_eq_u64(s1->bytes, 0x3000);
		check_eq_u64(s1->n_tids, 2);
		/* o3 has no sample: no toucher. */
		check_eq_u64(s1->requested, 0x2000);
		check_eq_u64(s1->n_touch_tids, 1);
		check_eq_i64(s1->touch_tids[0], 42);
	}
}

static void
scenario(struct aggr *a, struct objtab *t)
{
	const char *callers[] = { "main+0x10" };
	int64_t table = objtab_site_intern(t, "make_table+0x1c", callers, 1);
	int64_t grid = objtab_site_intern(t, "make_grid+0x8", NULL, 0);
	struct obj o1 = { .base = 0x100000, .size = 0x4000,
			  .site = (uint32_t)table, .tid = 7,
			  .alloc_size = 0x3ff0 };
	struct obj o2 = { .base = 0x200000, .size = 0x1000,
			  .site = (uint32_t)grid, .tid = 8 };
	struct obj o3 = { .base = 0x300000, .size = 0x2000,
			  .site = (uint32_t)grid, .tid = 9,
			  .alloc_size = 0x2000 };
	struct frame *f;

	check(objtab_map(t, 100, &o1) == 0 && objtab_map(t, 100, &o2) == 0 &&
	      objtab_map(t, 100, &o3) == 0);
	/* 5 loads and 2 stores in the table (two pages; thread 101 first
	 * on the second, 100 first on the first), 3 stores in the grid
	 * (thread 42 first, then 100), 4 on a page of no object. */
	add_tid(a, 100, 101, 2, 0x103000, SAMPLE_STORE);
	for (int i = 0; i < 5; i++)
		add(a, 100, 0, 0x100000 + 8 * i, SAMPLE_LOAD);
	add(a, 100, 2, 0x103008, SAMPLE_STORE);
	add_tid(a, 100, 42, 2, 0x200010, SAMPLE_STORE);
	for (int i = 0; i < 2; i++)
		add(a, 100, 2, 0x200010, SAMPLE_STORE);
	for (int i = 0; i < 4; i++)
		add(a, 100, 0, 0x500000, SAMPLE_LOAD);
	check_eq_i64(aggr_set_node(a, 100, 0x100000, 0), 0);
	check_eq_i64(aggr_set_node(a, 100, 0x103000, 1), 0);
	check_eq_i64(aggr_set_node(a, 100, 0x200000, 1), 0);
	f = build(a);
	check(f != NULL);
	if (!f)
		return;
	check_frame(f);
	frame_free(f);
}

/*
 * Two processes with a mapping at the same addresses, each its own
 * object: every page of each goes to its own process's object (the walk
 * remembers the last object, per pid), a page whose samples are all
 * "other" counts, and a page sampled only in an earlier interval does
 * not.
 */
static void
scenario_two_pids(const struct topo *topo)
{
	struct objtab *t = objtab_new(0);
	int64_t sa = objtab_site_intern(t, "map_a+0x4", NULL, 0);
	int64_t sb = objtab_site_intern(t, "map_b+0x8", NULL, 0);
	struct obj oa = { .base = 0x100000, .size = 0x10000,
			  .site = (uint32_t)sa, .tid = 100 };
	struct obj ob = { .base = 0x100000, .size = 0x10000,
			  .site = (uint32_t)sb, .tid = 200 };
	struct aggr a;
	struct frame *f;

	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	check(objtab_map(t, 100, &oa) == 0 && objtab_map(t, 200, &ob) == 0);
	a.objects = t;
	for (int i = 0; i < 3; i++)
		add(&a, 100, 0, 0x120000, SAMPLE_LOAD);	/* no object */
	aggr_flush(&a);		/* as a frame does before the next interval */
	aggr_next_interval(&a);
	for (uint64_t p = 0; p < 16; p++) {
		add(&a, 100, 0, 0x100000 + p * 0x1000, SAMPLE_LOAD);
		add(&a, 200, 2, 0x100000 + p * 0x1000, SAMPLE_OTHER);
	}
	f = build(&a);
	check(f != NULL);
	if (f) {
		check_eq_u64(f->objects_samples, 32);
		check_eq_u64(f->objects_none, 0);
		check_eq_u64(f->n_objects, 2);
		for (size_t i = 0; i < f->n_objects; i++) {
			check_eq_u64(f->objects[i].samples, 16);
			check_eq_u64(f->objects[i].objects, 1);
		}
	}
	frame_free(f);
	aggr_fini(&a);
	objtab_free(t);
}

/* The first toucher of the object of site `site` in f; 0: none. */
static int32_t
toucher(const struct frame *f, const char *site)
{
	for (size_t i = 0; i < f->n_objects; i++)
		if (strcmp(f->objects[i].site, site) == 0)
			return f->objects[i].n_touch_tids ?
			       f->objects[i].touch_tids[0] : 0;
	return -1;
}

/*
 * First touchers within one batch, whose look-ups stop at an object that
 * has one (aggr_decide): the object right after it and another process's
 * object at the same addresses still get theirs.
 */
static void
scenario_touch_batch(const struct topo *topo)
{
	struct objtab *t = objtab_new(0);
	struct obj oa = { .base = 0x100000, .size = 0x2000, .tid = 1 };
	struct obj ob = { .base = 0x102000, .size = 0x1000, .tid = 1 };
	struct obj oc = { .base = 0x100000, .size = 0x2000, .tid = 2 };
	struct aggr a;
	struct frame *f;

	oa.site = (uint32_t)objtab_site_intern(t, "alloc_a+0x1", NULL, 0);
	ob.site = (uint32_t)objtab_site_intern(t, "alloc_b+0x2", NULL, 0);
	oc.site = (uint32_t)objtab_site_intern(t, "alloc_c+0x3", NULL, 0);
	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	check(objtab_map(t, 100, &oa) == 0 && objtab_map(t, 100, &ob) == 0 &&
	      objtab_map(t, 200, &oc) == 0);
	a.objects = t;
	add_tid(&a, 100, 11, 0, 0x100000, SAMPLE_LOAD);
	add_tid(&a, 100, 12, 0, 0x101000, SAMPLE_LOAD);
	add_tid(&a, 200, 14, 0, 0x101000, SAMPLE_LOAD);
	add_tid(&a, 100, 15, 0, 0x100000 + 0x40, SAMPLE_LOAD);
	add_tid(&a, 100, 13, 0, 0x102000, SAMPLE_LOAD);
	f = build(&a);
	if (check(f != NULL)) {
		check_eq_i64(toucher(f, "alloc_a+0x1"), 11);
		check_eq_i64(toucher(f, "alloc_b+0x2"), 13);
		check_eq_i64(toucher(f, "alloc_c+0x3"), 14);
	}
	frame_free(f);
	aggr_fini(&a);
	objtab_free(t);
}

/*
 * The frame re-reads the node of each shown page (move_pages on this
 * process's own pages, all on one real node) after the walk that feeds
 * the objects view has counted them on the node the table says: the
 * site's node row follows the re-read node, as the page row does.
 */
static void
scenario_refresh(const struct topo *topo)
{
	long ps = sysconf(_SC_PAGESIZE);
	struct nodemap *nm = nodemap_new();
	struct objtab *t = objtab_new(0);
	int64_t site = t ? objtab_site_intern(t, "fill+0x4", NULL, 0) : -1;
	char *buf = mmap(NULL, 2 * (size_t)ps, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = (uint64_t)(uintptr_t)buf;
	struct obj o = { .base = base, .size = 2 * (uint64_t)ps, .tid = 1 };
	const struct page_entry *e;
	struct aggr a;
	struct frame *f;
	int real;

	if (ps != 4096) {
		printf("# SKIP re-read nodes: pages of %ld bytes, not 4 KiB\n",
		       ps);
		goto out;
	}
	if (!check(nm && t && site >= 0 && buf != MAP_FAILED) ||
	    !check(aggr_init(&a, topo, nm, 12, 0) == 0))
		goto out;
	memset(buf, 1, 2 * (size_t)ps);
	o.site = (uint32_t)site;
	check(objtab_map(t, getpid(), &o) == 0);
	a.objects = t;
	for (int i = 0; i < 3; i++)
		add(&a, getpid(), 0, base + (uint64_t)ps, SAMPLE_LOAD);
	add(&a, getpid(), 0, base, SAMPLE_LOAD);
	aggr_flush(&a);
	e = pagetab_find(a.pages, getpid(), (base + (uint64_t)ps) >> 12);
	real = e ? e->node : -1;
	if (!check(real == 0 || real == 1))
		goto out_aggr;
	/* The table believes both pages are on the other node. */
	check_eq_i64(aggr_set_node(&a, getpid(), base, !real), 0);
	check_eq_i64(aggr_set_node(&a, getpid(), base + (uint64_t)ps, !real),
		     0);
	f = build(&a);
	if (check(f && f->n_pages == 2 && f->n_objects == 1)) {
		check_eq_i64(f->pages[0].node, real);
		check_eq_u64(f->objects[0].samples, 4);
		check_eq_u64(f->objects[0].nodes[real], 4);
		check_eq_u64(f->objects[0].nodes[!real], 0);
	}
	frame_free(f);
out_aggr:
	a.objects = NULL;
	aggr_fini(&a);
out:
	if (buf != MAP_FAILED)
		munmap(buf, 2 * (size_t)ps);
	objtab_free(t);
	nodemap_free(nm);
}

int
main(void)
{
	static const int cpu_node[4] = { 0, 0, 1, 1 };
	struct topo *topo = topo_new_fake(4, cpu_node);
	struct objtab *t = objtab_new(0);
	struct aggr a;
	struct frame *f;

	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	/* Without an object table: objects off, nothing named. */
	add(&a, 100, 0, 0x100000, SAMPLE_LOAD);
	f = build(&a);
	check(f && !f->objects_on && f->n_pages == 1 && !f->pages[0].object);
	frame_free(f);
	aggr_next_interval(&a);
	a.objects = t;
	scenario(&a, t);
	aggr_fini(&a);
	scenario_two_pids(topo);
	scenario_touch_batch(topo);
	scenario_refresh(topo);
	objtab_free(t);
	topo_free(topo);
	return test_result();
}
