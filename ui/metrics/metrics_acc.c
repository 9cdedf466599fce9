/*
 * The exporter's totals: every frame's interval counts added up, and the
 * snapshots the renderer reads.  Whoever owns the accumulator (the UI
 * thread in memtop) calls these; a snapshot, once made, is never
 * changed, so any thread may render it.
 *
 * Why interval counts and not frame.cumulative: the TUI's r resets the
 * cumulative counts, and exported counters must never go down.  Frames
 * carry the per-node, per-CPU and per-thread figures for their interval
 * only, so adding intervals keeps every family consistent with the
 * others (frame invariants, docs/design.md).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "metrics_int.h"

struct metrics_acc *
metrics_acc_new(unsigned top, const char *version)
{
	struct metrics_acc *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	snprintf(a->version, sizeof(a->version), "%s", version ? version :
		 "");
	a->imbalance = -1.0;
	if (metrics_procs_init(&a->procs, top) < 0) {
		free(a);
		return NULL;
	}
	return a;
}

void
metrics_acc_free(struct metrics_acc *a)
{
	if (!a)
		return;
	metrics_procs_fini(&a->procs);
	free(a->node_seen);
	free(a->nodes);
	free(a->matrix);
	free(a->cpu_seen);
	free(a->cpus);
	free(a->events);
	free(a);
}

/* Makes node ids below n addressable; the matrix keeps its cells. */
static int
metrics_acc_grow_nodes(struct metrics_acc *a, size_t n)
{
	size_t old = a->n_node_ids;
	bool *seen = calloc(n, sizeof(*seen));
	struct metrics_node *nodes = calloc(n, sizeof(*nodes));
	uint64_t *matrix = calloc(n * (n + 1), sizeof(*matrix));

	if (!seen || !nodes || !matrix) {
		free(seen);
		free(nodes);
		free(matrix);
		return -ENOMEM;
	}
	if (old) {
		memcpy(seen, a->node_seen, old * sizeof(*seen));
		memcpy(nodes, a->nodes, old * sizeof(*nodes));
	}
	for (size_t i = 0; i < old; i++) {
		memcpy(&matrix[i * (n + 1)], &a->matrix[i * (old + 1)],
		       old * sizeof(*matrix));
		matrix[i * (n + 1) + n] = a->matrix[i * (old + 1) + old];
	}
	free(a->node_seen);
	free(a->nodes);
	free(a->matrix);
	a->node_seen = seen;
	a->nodes = nodes;
	a->matrix = matrix;
	a->n_node_ids = n;
	return 0;
}

static int
metrics_acc_grow_cpus(struct metrics_acc *a, size_t n)
{
	bool *seen = realloc(a->cpu_seen, n * sizeof(*seen));
	struct metrics_cpu *cpus;

	if (!seen)
		return -ENOMEM;
	a->cpu_seen = seen;
	cpus = realloc(a->cpus, n * sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	a->cpus = cpus;
	memset(seen + a->n_cpu_ids, 0, (n - a->n_cpu_ids) * sizeof(*seen));
	memset(cpus + a->n_cpu_ids, 0, (n - a->n_cpu_ids) * sizeof(*cpus));
	a->n_cpu_ids = n;
	return 0;
}

static bool
metrics_node_ok(int32_t node)
{
	return node >= 0 && node < METRICS_NODE_IDS;
}

/* Node ids up to the frame's largest, so that every index below is in
 * range.  0 or -ENOMEM. */
static int
metrics_acc_fit_nodes(struct metrics_acc *a, const struct frame *f)
{
	size_t need = a->n_node_ids;

	for (size_t i = 0; i < f->n_nodes; i++)
		if (metrics_node_ok(f->nodes[i].node) &&
		    (size_t)f->nodes[i].node >= need)
			need = (size_t)f->nodes[i].node + 1;
	return need > a->n_node_ids ? metrics_acc_grow_nodes(a, need) : 0;
}

/*
 * Per node and the node x node matrix.  A node id the exporter cannot
 * hold (>= METRICS_NODE_IDS, only from a crafted recording) is counted
 * as unknown: its CPUs' samples with cpu_unknown (the matrix's unknown
 * row), its memory's with mem_unknown, so each family still sums to the
 * samples.
 */
static int
metrics_acc_nodes(struct metrics_acc *a, const struct frame *f)
{
	size_t n = f->n_nodes, w;
	int ret = metrics_acc_fit_nodes(a, f);

	if (ret < 0)
		return ret;
	w = a->n_node_ids + 1;
	a->cpu_unknown += f->cpu_unknown;
	a->mem_unknown += f->mem_unknown;
	for (size_t i = 0; i < n; i++) {
		const struct frame_node *fn = &f->nodes[i];
		int32_t id = fn->node;
		uint64_t *row;

		if (!metrics_node_ok(id)) {
			a->cpu_unknown += fn->cpu_samples;
			a->mem_unknown += fn->mem_samples;
			continue;
		}
		a->node_seen[id] = true;
		a->nodes[id].node = id;
		a->nodes[id].cpu += fn->cpu_samples;
		a->nodes[id].mem += fn->mem_samples;
		a->nodes[id].local += fn->local;
		a->nodes[id].remote += fn->remote;
		row = &a->matrix[(size_t)id * w];
		row[w - 1] += f->matrix_unknown ? f->matrix_unknown[i] : 0;
		for (size_t j = 0; f->matrix && j < n; j++) {
			int32_t mid = f->nodes[j].node;

			row[metrics_node_ok(mid) ? (size_t)mid : w - 1] +=
				f->matrix[i * n + j];
		}
	}
	return 0;
}

/* Per CPU; the CPU's node is the latest frame's. */
static int
metrics_acc_cpus(struct metrics_acc *a, const struct frame *f)
{
	size_t need = a->n_cpu_ids;
	int ret;

	for (size_t i = 0; i < f->n_cpus; i++) {
		int32_t c = f->cpus[i].cpu;

		if (c >= 0 && c < METRICS_CPU_IDS && (size_t)c >= need)
			need = (size_t)c + 1;
	}
	if (need > a->n_cpu_ids) {
		ret = metrics_acc_grow_cpus(a, need);
		if (ret < 0)
			return ret;
	}
	a->cpu_series_unknown += f->cpu_unknown;
	for (size_t i = 0; i < f->n_cpus; i++) {
		const struct frame_cpu *fc = &f->cpus[i];

		if (fc->cpu < 0 || fc->cpu >= METRICS_CPU_IDS) {
			/* Its samples are in no CPU's series; the
			 * unknown CPU's series takes them. */
			a->cpu_series_unknown += fc->samples;
			continue;
		}
		a->cpu_seen[fc->cpu] = true;
		a->cpus[fc->cpu].cpu = fc->cpu;
		a->cpus[fc->cpu].node = metrics_node_ok(fc->node) ? fc->node :
					-1;
		a->cpus[fc->cpu].samples += fc->samples;
	}
	return 0;
}

/* The latest frame's gauges and build_info labels. */
static int
metrics_acc_latest(struct metrics_acc *a, const struct frame *f)
{
	size_t len = 1;
	char *ev, *p;

	a->have_frame = true;
	a->period = f->period;
	a->imbalance = f->imbalance;
	a->tracked = f->tracked_pages;
	snprintf(a->source, sizeof(a->source), "%s", f->source);
	for (size_t i = 0; i < f->n_events; i++)
		len += strlen(f->events[i] ? f->events[i] : "") + 1;
	ev = malloc(len);
	if (!ev)
		return -ENOMEM;
	p = ev;
	*p = '\0';
	for (size_t i = 0; i < f->n_events; i++)
		p += sprintf(p, "%s%s", i ? "," : "",
			     f->events[i] ? f->events[i] : "");
	free(a->events);
	a->events = ev;
	return 0;
}

int
metrics_acc_add(struct metrics_acc *a, const struct frame *f)
{
	const struct frame_migrations *mg = &f->migrations;
	int ret, first = 0;

	a->frames++;
	counts_add(&a->tot, &f->totals);
	a->est[0] += f->totals.loads * f->period;
	a->est[1] += f->totals.stores * f->period;
	a->est[2] += f->totals.other * f->period;
	a->collector_ns += f->collector_cpu_ns;
	a->mig[METRICS_MIG_MOVED] += mg->moved;
	a->mig[METRICS_MIG_BUSY] += mg->busy;
	a->mig[METRICS_MIG_DENIED] += mg->denied;
	a->mig[METRICS_MIG_FAILED] += mg->failed;
	a->mig[METRICS_MIG_SKIPPED] += mg->skipped;
	/* Each part runs even when one before it failed. */
	ret = metrics_acc_nodes(a, f);
	first = first ? first : ret;
	ret = metrics_acc_cpus(a, f);
	first = first ? first : ret;
	ret = metrics_procs_add(&a->procs, f, a->frames);
	first = first ? first : ret;
	ret = metrics_acc_latest(a, f);
	return first ? first : ret;
}

void
metrics_snap_free(struct metrics_snap *s)
{
	if (!s)
		return;
	free(s->nodes);
	free(s->matrix);
	free(s->cpus);
	free(s->procs);
	free(s->events);
	free(s);
}

/* The nodes seen, ascending, and their matrix, compacted. */
static int
metrics_snap_nodes(struct metrics_snap *s, const struct metrics_acc *a)
{
	size_t n = 0, k = 0, w = a->n_node_ids + 1;

	for (size_t i = 0; i < a->n_node_ids; i++)
		n += a->node_seen[i];
	s->n_nodes = n;
	s->nodes = calloc(n ? n : 1, sizeof(*s->nodes));
	s->matrix = calloc(n * (n + 1) + 1, sizeof(*s->matrix));
	if (!s->nodes || !s->matrix)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_node_ids; i++) {
		size_t l = 0;

		if (!a->node_seen[i])
			continue;
		s->nodes[k] = a->nodes[i];
		for (size_t j = 0; j < a->n_node_ids; j++)
			if (a->node_seen[j])
				s->matrix[k * (n + 1) + l++] =
					a->matrix[i * w + j];
		s->matrix[k * (n + 1) + n] = a->matrix[i * w + w - 1];
		k++;
	}
	return 0;
}

static int
metrics_snap_cpus(struct metrics_snap *s, const struct metrics_acc *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n_cpu_ids; i++)
		n += a->cpu_seen[i];
	s->cpus = calloc(n ? n : 1, sizeof(*s->cpus));
	if (!s->cpus)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_cpu_ids; i++)
		if (a->cpu_seen[i])
			s->cpus[s->n_cpus++] = a->cpus[i];
	return 0;
}

struct metrics_snap *
metrics_acc_snapshot(const struct metrics_acc *a)
{
	const struct metrics_procs *p = &a->procs;
	struct metrics_snap *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->refs = 1;
	s->have_frame = a->have_frame;
	s->frames = a->frames;
	s->tot = a->tot;
	memcpy(s->est, a->est, sizeof(s->est));
	s->cpu_unknown = a->cpu_unknown;
	s->mem_unknown = a->mem_unknown;
	s->cpu_series_unknown = a->cpu_series_unknown;
	s->procs_other = p->other;
	s->collector_ns = a->collector_ns;
	memcpy(s->mig, a->mig, sizeof(s->mig));
	s->period = a->period;
	s->imbalance = a->imbalance;
	s->tracked = a->tracked;
	memcpy(s->version, a->version, sizeof(s->version));
	memcpy(s->source, a->source, sizeof(s->source));
	s->events = strdup(a->events ? a->events : "");
	s->n_procs = p->n_top;
	s->procs = calloc(p->n_top ? p->n_top : 1, sizeof(*s->procs));
	if (!s->events || !s->procs || metrics_snap_nodes(s, a) < 0 ||
	    metrics_snap_cpus(s, a) < 0) {
		metrics_snap_free(s);
		return NULL;
	}
	if (p->n_top)
		memcpy(s->procs, p->top, p->n_top * sizeof(*s->procs));
	return s;
}
