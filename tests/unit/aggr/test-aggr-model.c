#include "config.h"

/*
 * The accounting loop against a plain model, sample by sample, for each
 * variant aggr_flush compiles: one, two and three nodes (cpuvote, the
 * general loop) and four (cells listed as touched), with and without
 * weights, with and without the side tables.  Random CPUs (some out of
 * range), kinds (some past SAMPLE_OTHER), 70 threads (more than a batch's
 * thread slots), pages on every node, unknown or never asked: every total,
 * the node matrix and unknowns, each CPU, thread and page (kinds, total,
 * local/remote, weight) must be what the model counted.
 */

#include <stdlib.h>

#include "aggr.h"
#include "pagetab.h"
#include "sides.h"
#include "testlib.h"
#include "threadtab.h"
#include "topo.h"

#define MODEL_PID	4000000		/* no such process: no /proc reads */
#define MODEL_PAGES	300
#define MODEL_TIDS	70

struct model {
	uint64_t kinds[3], cpu[8], cpu_unknown, node_mem[4], mem_unknown;
	uint64_t matrix[4][4], matrix_unknown[4];
	uint64_t tid[MODEL_TIDS];
	uint64_t pk[MODEL_PAGES][3], local[MODEL_PAGES], remote[MODEL_PAGES];
	uint64_t wsum[MODEL_PAGES], wn[MODEL_PAGES];
	int node[MODEL_PAGES];			/* index; -1 unknown */
};

/* Places the pages: on each node in turn, unknown, or never asked. */
static bool
model_place(struct model *m, struct aggr *a, const struct topo *t, int nn)
{
	bool ok = true;

	for (int p = 0; p < MODEL_PAGES; p++) {
		int v = p % (nn + 2) - 1;	/* -1 unknown, nn never asked */

		m->node[p] = v < nn ? v : -1;
		if (v < nn)
			ok &= check_eq_i64(aggr_set_node(a, MODEL_PID,
				(uint64_t)(p + 16) << 12,
				v < 0 ? -1 : topo_node_id(t, v)), 0);
	}
	return ok;
}

/* What the model counts for sample s on page p. */
static void
model_count(struct model *m, const struct topo *t, int n_cpus,
	    const struct sample *s, int p)
{
	int k = s->kind < 3 ? (int)s->kind : 2;
	int ci;

	m->kinds[k]++;
	m->pk[p][k]++;
	m->tid[s->tid - 5000]++;
	if (s->weight) {
		m->wsum[p] += s->weight;
		m->wn[p]++;
	}
	ci = s->cpu >= 0 && s->cpu < n_cpus ?
	     topo_cpu_node_index(t, s->cpu) : -1;
	if (m->node[p] >= 0)
		m->node_mem[m->node[p]]++;
	else
		m->mem_unknown++;
	if (ci < 0) {
		m->cpu_unknown++;
		return;
	}
	m->cpu[s->cpu]++;
	if (m->node[p] < 0) {
		m->matrix_unknown[ci]++;
		return;
	}
	m->matrix[ci][m->node[p]]++;
	if (ci == m->node[p])
		m->local[p]++;
	else
		m->remote[p]++;
}

/* 5000 random samples into both the aggregation and the model. */
static uint64_t
model_feed(struct model *m, struct aggr *a, const struct topo *t, int n_cpus,
	   bool weights, uint64_t seed)
{
	uint64_t rng = seed, samples = 0;

	for (int i = 0; i < 5000; i++) {
		struct sample s = { .pid = MODEL_PID, .period = 1 };
		int p;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		p = (int)((rng >> 33) % MODEL_PAGES);
		s.addr = ((uint64_t)(p + 16) << 12) | ((rng >> 20) & 0xfff);
		s.ip = 0x400000 + ((rng >> 12) & 0xff0);
		s.tid = 5000 + (int32_t)((rng >> 45) % MODEL_TIDS);
		s.cpu = (int32_t)((rng >> 52) % (uint64_t)(n_cpus + 3)) - 1;
		s.kind = (uint32_t)((rng >> 58) % 4);
		s.weight = weights && (rng & 3) ? (rng >> 24) & 0x3ff : 0;
		aggr_add(a, &s);
		samples++;
		model_count(m, t, n_cpus, &s, p);
	}
	return samples;
}

/* The interval's totals, each CPU, the node matrix and each thread. */
static bool
model_check_totals(const struct model *m, struct aggr *a, int n_cpus,
		   uint64_t samples)
{
	struct thread_entry *te;
	size_t n_te = 0;
	int nn = a->n_nodes;
	bool ok = true;

	ok &= check_eq_u64(a->interval.samples, samples);
	ok &= check_eq_u64(a->interval.loads, m->kinds[SAMPLE_LOAD]);
	ok &= check_eq_u64(a->interval.stores, m->kinds[SAMPLE_STORE]);
	ok &= check_eq_u64(a->interval.other, m->kinds[SAMPLE_OTHER]);
	ok &= check_eq_u64(a->interval.untracked, 0);
	ok &= check_eq_u64(a->cpu_unknown, m->cpu_unknown);
	ok &= check_eq_u64(a->mem_unknown, m->mem_unknown);
	for (int c = 0; c < n_cpus; c++)
		ok &= check_eq_u64(a->cpu_samples[c], m->cpu[c]);
	for (int i = 0; i < nn; i++) {
		ok &= check_eq_u64(a->node_mem[i], m->node_mem[i]);
		ok &= check_eq_u64(a->matrix_unknown[i], m->matrix_unknown[i]);
		for (int j = 0; j < nn; j++)
			ok &= check_eq_u64(a->matrix[i * nn + j],
					   m->matrix[i][j]);
	}
	te = threadtab_snapshot(a->threads, &n_te);
	ok &= check_eq_u64(n_te, MODEL_TIDS);
	for (size_t k = 0; te && k < n_te; k++)
		ok &= check_eq_u64(te[k].samples, m->tid[te[k].tid - 5000]);
	free(te);
	return ok;
}

/* Each page's counts. */
static bool
model_check_pages(const struct model *m, struct aggr *a)
{
	int nn = a->n_nodes;
	bool ok = true;

	for (int p = 0; p < MODEL_PAGES; p++) {
		struct page_entry *e = pagetab_find(a->pages, MODEL_PID,
						    (uint64_t)(p + 16));
		struct page_counts c;

		if (!check(e != NULL))
			return false;
		pagetab_read(a->pages, e, &c);
		ok &= check_eq_u64(c.loads, m->pk[p][SAMPLE_LOAD]);
		ok &= check_eq_u64(c.stores, m->pk[p][SAMPLE_STORE]);
		ok &= check_eq_u64(c.other, m->pk[p][SAMPLE_OTHER]);
		ok &= check_eq_u64(c.total, m->pk[p][0] + m->pk[p][1] +
					    m->pk[p][2]);
		ok &= check_eq_u64(c.local, nn > 1 ? m->local[p] : 0);
		ok &= check_eq_u64(c.remote, nn > 1 ? m->remote[p] : 0);
		ok &= check_eq_u64(c.weight_sum, m->wsum[p]);
		ok &= check_eq_u64(c.weight_n, m->wn[p]);
	}
	return ok;
}

static bool
model_run(const int *cpu_node, int n_cpus, bool weights, bool sides,
	  uint64_t seed)
{
	struct topo *t = topo_new_fake(n_cpus, cpu_node);
	struct model *m = calloc(1, sizeof(*m));
	uint64_t samples;
	struct aggr a;
	bool ok = true;

	if (!check(t && m) || !check_eq_i64(aggr_init(&a, t, NULL, 12, 0), 0))
		goto out;
	if (!sides) {
		sides_free(a.sides);
		a.sides = NULL;
	}
	ok &= model_place(m, &a, t, a.n_nodes);
	samples = model_feed(m, &a, t, n_cpus, weights, seed);
	aggr_flush(&a);
	ok &= model_check_totals(m, &a, n_cpus, samples);
	ok &= model_check_pages(m, &a);
	aggr_fini(&a);
out:
	free(m);
	topo_free(t);
	return ok;
}

static void
test_account_model(void)
{
	static const int one[4] = { 0, 0, 0, 0 };
	static const int two[6] = { 0, 0, 0, 1, 1, 1 };
	static const int three[8] = { 0, 0, 1, 1, 2, 2, 2, 0 };
	static const int four[8] = { 3, 0, 1, 2, 3, 0, 1, 2 };

	for (int v = 0; v < 4; v++) {
		bool weights = v & 1, sides = v & 2;

		if (!model_run(one, 4, weights, sides, 11 + (uint64_t)v) ||
		    !model_run(two, 6, weights, sides, 21 + (uint64_t)v) ||
		    !model_run(three, 8, weights, sides, 31 + (uint64_t)v) ||
		    !model_run(four, 8, weights, sides, 41 + (uint64_t)v))
			test_fail_at(__FILE__, __LINE__,
				     "model mismatch: weights %d sides %d",
				     weights, sides);
	}
}

int
main(void)
{
	test_account_model();
	return test_result();
}
