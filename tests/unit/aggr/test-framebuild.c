/*
 * Aggregation and frame building on a fake 2-node, 4-CPU topology without
 * move_pages: interval and cumulative counts, per-CPU/thread/node sums,
 * the node x node matrix once page nodes are known, the frame invariants
 * (frame_check), and that frame_check catches a broken sum.
 */
#include "config.h"

#include <string.h>

#include "aggr.h"
#include "aggr-test.h"
#include "datasrc.h"
#include "frame.h"
#include "framebuild.h"
#include "pagetab.h"
#include "testlib.h"
#include "topo.h"

/* The pages of the scenario. */
static const uint64_t A = 0x10000, B = 0x20000, C = 0x30000;

static void
add(struct aggr *a, int32_t pid, int32_t tid, int32_t cpu, uint64_t addr,
    uint8_t kind)
{
	struct sample s = { .addr = addr, .pid = pid, .tid = tid, .cpu = cpu,
			    .kind = kind, .period = 1 };

	aggr_add(a, &s);
}

static struct frame *
build(struct aggr *a, uint64_t seq, bool final)
{
	struct frame_target tg[1] = { { .pid = 100, .comm = "t", .alive = true } };
	struct frame_meta m = ftest_meta("faults", seq, SORT_SAMPLES, 10);

	m.final = final;
	m.targets = tg;
	m.n_targets = 1;
	return frame_build(a, &m);
}

static uint64_t
mat(const struct frame *f, int i, int j)
{
	return f->matrix[(size_t)i * f->n_nodes + (size_t)j];
}

/* Interval 1: page nodes unknown. */
static void
fb_nodes_unknown(struct aggr *a)
{
	char why[256] = "";
	struct frame *f;

	for (int i = 0; i < 5; i++)
		add(a, 100, 100, 0, A + 8 * i, SAMPLE_LOAD);
	for (int i = 0; i < 3; i++)
		add(a, 100, 101, 2, B, SAMPLE_STORE);
	add(a, 200, 200, 99, C, SAMPLE_OTHER);
	add(a, 200, 201, -1, C, SAMPLE_OTHER);
	aggr_count_lost(a, 7);
	aggr_count_unattributed(a, 2);
	f = build(a, 1, false);
	check(f != NULL);
	check_eq_i64(frame_check(f, why, sizeof(why)), 0);
	if (why[0])
		test_fail_at(__FILE__, __LINE__, "%s", why);
	check_eq_u64(f->totals.samples, 10);
	check_eq_u64(f->totals.loads, 5);
	check_eq_u64(f->totals.stores, 3);
	check_eq_u64(f->totals.other, 2);
	check_eq_u64(f->totals.lost, 7);
	check_eq_u64(f->totals.unattributed, 2);
	check_eq_u64(f->n_nodes, 2);
	check_eq_u64(f->n_cpus, 4);
	check_eq_u64(f->cpus[0].samples, 5);
	check_eq_u64(f->cpus[2].samples, 3);
	check_eq_u64(f->cpu_unknown, 2);
	check_eq_u64(f->mem_unknown, 10);
	check_eq_u64(f->matrix_unknown[0], 5);
	check_eq_u64(f->matrix_unknown[1], 3);
	check_eq_u64(f->n_threads, 4);
	check_eq_u64(f->tracked_pages, 3);
	/* Top pages: A (5) then B (3) then C (2). */
	check_eq_u64(f->n_pages, 3);
	check_eq_u64(f->pages[0].addr, A);
	check_eq_u64(f->pages[0].loads, 5);
	check_eq_u64(f->pages[1].addr, B);
	check_eq_u64(f->pages[1].stores, 3);
	check_eq_i64(f->pages[0].node, FRAME_NODE_UNKNOWN);
	check(f->pages[0].share > 0.49 && f->pages[0].share < 0.51);
	frame_free(f);
	aggr_next_interval(a);
}

/* Interval 2: A lives on node 1, B on node 0; frame_check notices a
 * broken sum. */
static void
fb_nodes_known(struct aggr *a)
{
	char why[256] = "";
	struct frame *f;

	pagetab_find(a->pages, 100, A >> 12)->node = 1;
	pagetab_find(a->pages, 100, B >> 12)->node = 0;
	for (int i = 0; i < 4; i++)		/* node 0 CPUs -> node 1 page */
		add(a, 100, 100, 1, A, SAMPLE_LOAD);
	for (int i = 0; i < 2; i++)		/* node 1 CPUs -> node 1 page */
		add(a, 100, 101, 3, A, SAMPLE_STORE);
	add(a, 100, 101, 0, B, SAMPLE_STORE);
	f = build(a, 2, true);
	check_eq_i64(frame_check(f, why, sizeof(why)), 0);
	check_eq_u64(f->totals.samples, 7);
	check_eq_u64(mat(f, 0, 1), 4);
	check_eq_u64(mat(f, 1, 1), 2);
	check_eq_u64(mat(f, 0, 0), 1);
	check_eq_u64(mat(f, 1, 0), 0);
	check_eq_u64(f->nodes[0].cpu_samples, 5);
	check_eq_u64(f->nodes[1].cpu_samples, 2);
	check_eq_u64(f->nodes[1].mem_samples, 6);
	check_eq_u64(f->nodes[0].mem_samples, 1);
	check_eq_u64(f->nodes[0].local, 1);
	check_eq_u64(f->nodes[0].remote, 4);
	check_eq_u64(f->nodes[1].local, 2);
	check_eq_u64(f->pages[0].addr, A);
	check_eq_u64(f->pages[0].total, 11);
	check_eq_u64(f->pages[0].local, 2);
	check_eq_u64(f->pages[0].remote, 4);
	check_eq_i64(f->pages[0].node, 1);
	check_eq_u64(f->cumulative.samples, 17);
	check_eq_u64(f->cumulative.lost, 7);
	check(f->final);

	/* frame_check notices a broken sum. */
	f->cpus[1].samples++;
	check_eq_i64(frame_check(f, why, sizeof(why)), -22);
	check(strstr(why, "cpus") != NULL);
	frame_free(f);
}

/* data_src level mixes: per page since reset, per frame this interval;
 * samples without data_src add nothing. */
static void
fb_levels(struct aggr *a)
{
	struct frame *f;

	aggr_next_interval(a);
	{
		/* LOAD, mem_lvl L1|HIT; LOAD, mem_lvl_num RAM + remote. */
		const uint64_t l1 = 0x2 | ((uint64_t)(0x8 | 0x2) << 5);
		const uint64_t rram = 0x2 | ((uint64_t)0xd << 33) |
				      (1ull << 37);
		struct sample s1 = { .addr = C, .pid = 200, .tid = 200,
				     .cpu = 0, .kind = SAMPLE_LOAD,
				     .period = 1, .data_src = l1 };
		struct sample s2 = s1;

		s2.data_src = rram;
		aggr_add(a, &s1);
		aggr_add(a, &s1);
		aggr_add(a, &s2);
	}
	f = build(a, 3, false);
	check(f->pages[0].levels != NULL);
	if (f->pages[0].levels) {
		check_eq_u64(f->pages[0].levels[DATASRC_LVL_L1], 2);
		check_eq_u64(f->pages[0].levels[DATASRC_LVL_REMOTE_RAM], 1);
	}
	check_eq_u64(f->levels[DATASRC_LVL_L1], 2);
	check_eq_u64(f->levels[DATASRC_LVL_REMOTE_RAM], 1);
	for (size_t i = 1; i < f->n_pages; i++)
		check(f->pages[i].levels == NULL);
	frame_free(f);
}

/* Reset forgets pages and cumulative counts. */
static void
fb_reset(struct aggr *a)
{
	char why[256] = "";
	struct frame *f;

	aggr_next_interval(a);
	aggr_reset(a);
	f = build(a, 4, false);
	check_eq_u64(f->tracked_pages, 0);
	check_eq_u64(f->cumulative.samples, 0);
	check_eq_u64(f->n_pages, 0);
	check_eq_i64(frame_check(f, why, sizeof(why)), 0);
	frame_free(f);
}

int
main(void)
{
	static const int cpu_node[4] = { 0, 0, 1, 1 };
	struct topo *topo = topo_new_fake(4, cpu_node);
	struct aggr a;

	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	fb_nodes_unknown(&a);
	fb_nodes_known(&a);
	fb_levels(&a);
	fb_reset(&a);
	aggr_fini(&a);
	aggr_fini(&a);
	topo_free(topo);
	return test_result();
}
