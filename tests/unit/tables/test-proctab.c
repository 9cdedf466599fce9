/*
 * Process table (src/tables/proctab.c): rows found after growth and after
 * removals in the middle of probe chains, rows that stay put while the
 * table grows, the sink once full, interval counts into totals, reset.
 */
#include "config.h"

#include <stdlib.h>

#include "proctab.h"
#include "sample.h"
#include "testlib.h"

static void
test_grow_remove(void)
{
	struct proctab *t = proctab_new(2, 100000);
	struct proc_entry *first;
	bool ins = false;
	size_t n;
	int32_t *pids;

	if (!check(t != NULL))
		return;
	first = proctab_get(t, 1, &ins);
	check(ins);
	first->kinds[SAMPLE_LOAD] = 7;
	/* Thousands of pids: many chains, several doublings. */
	for (int32_t pid = 2; pid <= 5000; pid++)
		check(proctab_get(t, pid, NULL)->pid == pid);
	check(proctab_find(t, 1) == first);
	check_eq_u64(first->kinds[SAMPLE_LOAD], 7);
	check_eq_u64(proctab_count(t), 5000);
	/* Every third one removed: the rest still found, the removed not. */
	for (int32_t pid = 3; pid <= 5000; pid += 3)
		proctab_remove(t, pid);
	for (int32_t pid = 1; pid <= 5000; pid++) {
		struct proc_entry *e = proctab_find(t, pid);

		if (pid % 3 == 0 ? e != NULL : !e || e->pid != pid) {
			test_fail_at(__FILE__, __LINE__, "pid %d after removals",
				     (int)pid);
			break;
		}
	}
	check_eq_u64(proctab_count(t), 5000 - 5000 / 3);
	pids = proctab_pids(t, &n);
	check_eq_u64(n, proctab_count(t));
	free(pids);
	proctab_remove(t, 99999);
	check_eq_u64(proctab_count(t), 5000 - 5000 / 3);
	proctab_free(t);
}

static void
test_sink_and_totals(void)
{
	struct proctab *t = proctab_new(1, 2);
	struct proc_entry *a, *b, *c;
	bool ins = true;

	if (!check(t != NULL))
		return;
	a = proctab_get(t, 10, NULL);
	b = proctab_get(t, 20, NULL);
	c = proctab_get(t, 30, &ins);
	check(!ins);
	check(c == proctab_sink(t));
	check(proctab_find(t, 30) == NULL);
	check_eq_i64(proctab_n_nodes(t), 1);
	a->kinds[SAMPLE_STORE] = 4;
	a->nodes[1] = 4;
	a->lr[PROC_LOC_LOCAL] = 4;
	c->kinds[SAMPLE_OTHER] = 5;
	check_eq_u64(proctab_samples(a), 4);
	proctab_next_interval(t);
	check_eq_u64(a->total, 4);
	check_eq_u64(proctab_samples(a), 0);
	check_eq_u64(a->nodes[1] + a->lr[PROC_LOC_LOCAL], 0);
	check_eq_u64(proctab_samples(c), 0);
	b->kinds[SAMPLE_LOAD] = 1;
	proctab_reset(t);
	check_eq_u64(a->total + b->total + proctab_samples(b), 0);
	/* A removal frees a row for the next pid. */
	proctab_remove(t, 10);
	check(proctab_get(t, 30, NULL) != proctab_sink(t));
	proctab_free(t);
	proctab_free(NULL);
}

int
main(void)
{
	test_grow_remove();
	test_sink_and_totals();
	return test_result();
}
