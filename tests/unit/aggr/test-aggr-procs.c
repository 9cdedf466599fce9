/*
 * Process rows (src/aggr/aggr_procs.c) on a fake 2-node, 4-CPU topology:
 * each process's samples by kind, node and locality, summing to the
 * frame's totals and per-node figures (frame_check); names from COMM and
 * fork; an exit shown once and only after the drain that follows it
 * (aggr_procs_cutoff); a full table's samples counted untracked; the sort
 * key; rows without a name "[unknown]" and counted.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "aggr.h"
#include "aggr-test.h"
#include "frame.h"
#include "framebuild.h"
#include "pagetab.h"
#include "testlib.h"
#include "topo.h"

static void
add(struct aggr *a, int32_t pid, int32_t tid, int32_t cpu, uint64_t addr,
    uint8_t kind)
{
	struct sample s = { .addr = addr, .pid = pid, .tid = tid, .cpu = cpu,
			    .kind = kind, .period = 1 };

	aggr_add(a, &s);
}

static struct frame *
build(struct aggr *a, uint64_t seq, enum sort_key sort)
{
	struct frame_meta m = ftest_meta("faults", seq, sort, 10);
	char why[256] = "";
	struct frame *f = frame_build(a, &m);

	if (check(f != NULL) && !check_eq_i64(frame_check(f, why, sizeof(why)),
					      0))
		test_fail_at(__FILE__, __LINE__, "%s", why);
	aggr_next_interval(a);
	return f;
}

static const struct frame_process *
row(const struct frame *f, int32_t pid)
{
	for (size_t i = 0; f && i < f->n_processes; i++)
		if (f->processes[i].pid == pid)
			return &f->processes[i];
	return NULL;
}

/* frame_check catches rows that do not add up: samples, a node's
 * memory side, locality. */
static void
test_check_catches(struct frame *f)
{
	struct frame_process *p = &f->processes[0];
	char why[128];

	p->samples++;
	p->other++;
	check_eq_i64(frame_check(f, why, sizeof(why)), -EINVAL);
	p->samples--;
	p->other--;
	p->nodes[1]++;
	check_eq_i64(frame_check(f, why, sizeof(why)), -EINVAL);
	p->nodes[1]--;
	p->local--;
	p->remote++;
	check_eq_i64(frame_check(f, why, sizeof(why)), -EINVAL);
	p->local++;
	p->remote--;
	p->loads++;
	check_eq_i64(frame_check(f, why, sizeof(why)), -EINVAL);
	p->loads--;
	check_eq_i64(frame_check(f, why, sizeof(why)), 0);
}

static void
test_rows(struct aggr *a)
{
	const struct frame_process *p;
	struct frame *f;

	/* pid 100: 3 loads on node 0's page from CPU 0 (local), 2 stores
	 * from CPU 2 (node 1: remote); pid 200: one sample on a page of no
	 * known node from a CPU out of range. */
	aggr_set_node(a, 100, 0x10000, 0);
	for (int i = 0; i < 3; i++)
		add(a, 100, 100, 0, 0x10000, SAMPLE_LOAD);
	add(a, 100, 101, 2, 0x10000, SAMPLE_STORE);
	add(a, 100, 101, 2, 0x10000, SAMPLE_STORE);
	add(a, 200, 200, 99, 0x50000, SAMPLE_OTHER);
	aggr_proc_comm(a, 100, "first", 5);
	aggr_proc_comm(a, 100, "older", 4);	/* an older COMM loses */
	aggr_proc_fork(a, 300, 100);		/* named after its parent */
	f = build(a, 1, SORT_SAMPLES);
	check_eq_u64(f->n_processes, 2);
	p = row(f, 100);
	if (check(p != NULL) && check(f->processes == p)) {
		check_eq_str(p->comm, "first");
		check_eq_u64(p->samples, 5);
		check_eq_u64(p->loads, 3);
		check_eq_u64(p->stores, 2);
		check_eq_u64(p->local, 3);
		check_eq_u64(p->remote, 2);
		check_eq_u64(p->nodes[0], 5);
		check_eq_u64(p->nodes[1], 0);
		check_eq_u64(p->threads, 2);
		check_eq_u64(p->total, 5);
		check(p->alive);
	}
	p = row(f, 200);
	if (check(p != NULL)) {
		/* No COMM, no /proc (not live): unknown, and counted. */
		check_eq_str(p->comm, "[unknown]");
		check_eq_u64(p->local + p->remote, 0);
		check_eq_u64(p->nodes[0] + p->nodes[1], 0);
	}
	check_eq_u64(f->processes_unknown, 1);
	check(row(f, 300) == NULL);	/* no sample: no row */
	test_check_catches(f);
	frame_free(f);

	/* pid 300 samples now, with its parent's name; pid 100 exits but its
	 * death comes after this drain's cutoff: still alive here. */
	add(a, 300, 300, 1, 0x30000, SAMPLE_STORE);
	add(a, 100, 100, 0, 0x10000, SAMPLE_LOAD);
	aggr_procs_cutoff(a, 1000);
	aggr_proc_exit(a, 100, 2000);
	f = build(a, 2, SORT_TOTAL);
	check_eq_str(row(f, 300) ? row(f, 300)->comm : "", "first");
	check(row(f, 100) && row(f, 100)->alive);
	check(row(f, 200) == NULL);	/* idle: not listed */
	/* Sorted by total: 100 (6) before 300 (1). */
	check(f->n_processes == 2 && f->processes[0].pid == 100 &&
	      f->processes[0].total == 6);
	frame_free(f);

	/* The next drain began after it: shown dead once, then gone. */
	aggr_procs_cutoff(a, 3000);
	f = build(a, 3, SORT_SAMPLES);
	p = row(f, 100);
	check(p && !p->alive && p->samples == 0 && p->total == 6);
	frame_free(f);
	f = build(a, 4, SORT_SAMPLES);
	check(row(f, 100) == NULL);
	frame_free(f);
	/* Its pid, reused, is a new process. */
	add(a, 100, 100, 0, 0x10000, SAMPLE_LOAD);
	f = build(a, 5, SORT_SAMPLES);
	p = row(f, 100);
	check(p && p->alive && p->total == 1 && !strcmp(p->comm, "[unknown]"));
	frame_free(f);
}

static void
test_full(const struct topo *topo)
{
	struct aggr a;
	struct frame *f;

	if (!check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0))
		return;
	check_eq_i64(aggr_procs_config(&a, 2, false), 0);
	for (int32_t pid = 1; pid <= 5; pid++)
		add(&a, pid, pid, 0, 0x1000, SAMPLE_OTHER);
	f = build(&a, 1, SORT_SAMPLES);
	check_eq_u64(f->n_processes, 2);
	check_eq_u64(f->processes_untracked, 3);
	frame_free(f);
	aggr_fini(&a);
}

int
main(void)
{
	static const int cpu_node[] = { 0, 0, 1, 1 };
	struct topo *topo = topo_new_fake(4, cpu_node);
	struct aggr a;

	if (!check(topo != NULL))
		return test_result();
	if (check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0)) {
		test_rows(&a);
		aggr_fini(&a);
	}
	test_full(topo);
	topo_free(topo);
	return test_result();
}
