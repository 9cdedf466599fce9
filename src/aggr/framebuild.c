/* Collector thread only.  See framebuild.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "aggr_int.h"
#include "framebuild.h"
#include "framebuild_names.h"
#include "framebuild_objects.h"
#include "nodemap.h"
#include "pagetab.h"
#include "threadtab.h"
#include "topo.h"

static char *
framebuild_strdup(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

/* The objects view counted p on its node at the walk, before the
 * refresh moves it to `node`: p->node is still what the walk read (the
 * page's entry changes only here, after it), and p->c this interval's
 * counts the walk took, so the move takes back exactly what it put. */
static void
framebuild_refresh_objects(struct fbo_ctx *objects, const struct page_info *p,
			   unsigned shift, int node)
{
	framebuild_objects_renode(objects, p->pid, p->page << shift,
				  p->c.loads + p->c.stores + p->c.other,
				  p->node, node);
}

/* Re-reads the node of every selected page: pages migrate, refault
 * (not on one node, aggr.h's sole_node: none can move). */
static void
framebuild_refresh_nodes(struct aggr *a, struct page_info *top, size_t n,
			 struct fbo_ctx *objects)
{
	unsigned shift = pagetab_page_shift(a->pages);
	uint64_t addrs[NODEMAP_BATCH];
	int16_t nodes[NODEMAP_BATCH];
	size_t idx[NODEMAP_BATCH];
	bool *done;

	if (!a->nodemap || a->sole_node >= 0 || n == 0)
		return;
	done = calloc(n, sizeof(*done));
	if (!done)
		return;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < n && k < NODEMAP_BATCH; j++) {
			if (done[j] || top[j].pid != top[i].pid)
				continue;
			addrs[k] = top[j].page << shift;
			idx[k++] = j;
			done[j] = true;
		}
		/* A failed call (the process exited, no access) says nothing
		 * about where the pages were: keep the nodes known so far. */
		if (nodemap_query(a->nodemap, top[i].pid, addrs, k, nodes) < 0)
			continue;
		for (size_t j = 0; j < k; j++) {
			struct page_entry *e = pagetab_find(a->pages,
				top[idx[j]].pid, top[idx[j]].page);

			/* No answer this instant (a refault dropped the
			 * page, the process unmapped it): a known node
			 * stays, as for revalidation (aggr_nodes.c). */
			if (nodes[j] < 0)
				continue;
			framebuild_refresh_objects(objects, &top[idx[j]],
						   shift, nodes[j]);
			top[idx[j]].node = nodes[j];
			if (e)
				e->node = nodes[j];
		}
	}
	free(done);
}

/*
 * The bar for reading /proc/PID/maps between frames (aggr.h): with the
 * page list full, the least this interval's key (samples, loads or
 * stores) of a shown page; a process with fewer samples shows no page
 * unless the next frame's list reaches lower.  0 (read every noted pid)
 * for the other keys, a list not full or one process's pages.
 */
static void
framebuild_names_bar(const struct frame *f, struct aggr *a,
		     const struct frame_meta *m)
{
	bool full = f->n_pages == m->top_k && m->pages_pid == 0;

	a->names_bar = 0;
	for (size_t i = 0; full && i < f->n_pages; i++) {
		const struct frame_page *p = &f->pages[i];
		uint64_t v = m->sort == SORT_SAMPLES ? p->samples :
			     m->sort == SORT_LOADS ? p->loads :
			     m->sort == SORT_STORES ? p->stores : 0;

		if (i == 0 || v < a->names_bar)
			a->names_bar = v;
	}
}

/* The top pages, in the walk that also feeds the objects view. */
static bool
framebuild_pages(struct frame *f, struct aggr *a, const struct frame_meta *m,
		 struct fbo_ctx *objects)
{
	unsigned shift = pagetab_page_shift(a->pages);
	bool locality = pagetab_ext(a->pages) & PAGETAB_EXT_LOCALITY;
	struct page_info *top;
	size_t n;

	/* With no page listed the walk still serves the objects view. */
	top = m->top_k ? calloc(m->top_k, sizeof(*top)) : NULL;
	if (m->top_k && !top)
		return false;
	n = pagetab_topk_visit(a->pages, m->sort, m->top_k,
			       m->pages_pid > 0 ? m->pages_pid : -1, top,
			       objects ? framebuild_objects_page : NULL,
			       objects);
	if (m->top_k == 0)
		return true;
	f->pages_pid = m->pages_pid > 0 ? m->pages_pid : 0;
	framebuild_refresh_nodes(a, top, n, objects);
	f->pages = calloc(n ? n : 1, sizeof(*f->pages));
	if (!f->pages) {
		free(top);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const struct page_info *e = &top[i];
		struct frame_page *p = &f->pages[i];

		p->pid = e->pid;
		p->addr = e->page << shift;
		p->size = 1u << shift;
		p->loads = e->c.loads;
		p->stores = e->c.stores;
		p->other = e->c.other;
		p->samples = e->c.loads + e->c.stores + e->c.other;
		p->total = e->c.total;
		p->share = f->totals.samples ?
			   (double)p->samples / (double)f->totals.samples : 0;
		p->node = e->node >= 0 ? e->node : FRAME_NODE_UNKNOWN;
		p->latency = e->c.weight_n ?
			     (double)e->c.weight_sum / e->c.weight_n : -1.0;
		/* One node keeps no local/remote split (aggr.c): a sample
		 * of a page whose node is known is local there. */
		p->local = locality ? e->c.local :
			   e->node >= 0 ? p->samples : 0;
		p->remote = e->c.remote;
	}
	f->n_pages = n;
	framebuild_names_bar(f, a, m);
	free(top);
	return true;
}

/*
 * Largest node's share of the memory-side samples over the fair share
 * 1/n: max(mem) * n / sum(mem).  1.0 when the samples spread evenly (and
 * always with one node), n when every sample lands on one node.  -1 when
 * no sample has a known memory node.
 */
static double
framebuild_imbalance(const struct frame_node *nodes, size_t n)
{
	uint64_t sum = 0, max = 0;

	for (size_t i = 0; i < n; i++) {
		sum += nodes[i].mem_samples;
		if (nodes[i].mem_samples > max)
			max = nodes[i].mem_samples;
	}
	if (sum == 0)
		return -1.0;
	return (double)max * (double)n / (double)sum;
}

static bool
framebuild_topology(struct frame *f, const struct aggr *a)
{
	size_t nn = (size_t)a->n_nodes;

	f->n_nodes = nn;
	f->nodes = calloc(nn, sizeof(*f->nodes));
	f->matrix = calloc(nn * nn, sizeof(*f->matrix));
	f->matrix_unknown = calloc(nn, sizeof(*f->matrix_unknown));
	f->n_cpus = (size_t)a->n_cpus;
	f->cpus = calloc(f->n_cpus ? f->n_cpus : 1, sizeof(*f->cpus));
	if (!f->nodes || !f->matrix || !f->matrix_unknown || !f->cpus)
		return false;
	memcpy(f->matrix, a->matrix, nn * nn * sizeof(*f->matrix));
	memcpy(f->matrix_unknown, a->matrix_unknown,
	       nn * sizeof(*f->matrix_unknown));
	for (size_t i = 0; i < nn; i++) {
		struct frame_node *fn = &f->nodes[i];
		uint64_t row = a->matrix_unknown[i];

		for (size_t j = 0; j < nn; j++)
			row += a->matrix[i * nn + j];
		fn->node = topo_node_id(a->topo, (int)i);
		fn->cpu_samples = row;
		fn->mem_samples = a->node_mem[i];
		fn->local = a->matrix[i * nn + i];
		fn->remote = row - fn->local - a->matrix_unknown[i];
		topo_node_mem(a->topo, fn->node, &fn->mem_total_kb,
			      &fn->mem_free_kb);
	}
	for (size_t c = 0; c < f->n_cpus; c++) {
		f->cpus[c].cpu = (int32_t)c;
		f->cpus[c].node = topo_cpu_node(a->topo, (int)c);
		f->cpus[c].samples = a->cpu_samples[c];
	}
	f->mem_unknown = a->mem_unknown;
	f->cpu_unknown = a->cpu_unknown;
	f->imbalance = framebuild_imbalance(f->nodes, nn);
	return true;
}

static bool
framebuild_threads(struct frame *f, const struct aggr *a)
{
	size_t n;
	struct thread_entry *t = threadtab_snapshot(a->threads, &n);

	if (!t)
		return n == 0;
	f->threads = calloc(n, sizeof(*f->threads));
	if (!f->threads) {
		free(t);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		f->threads[i].pid = t[i].pid;
		f->threads[i].tid = t[i].tid;
		f->threads[i].samples = t[i].samples;
	}
	f->n_threads = n;
	free(t);
	return true;
}

struct frame *
frame_build(struct aggr *a, const struct frame_meta *m)
{
	struct frame *f = frame_new();
	struct fbo_ctx *objects = NULL;
	bool oom = false, ok;

	if (!f)
		return NULL;
	aggr_flush(a);
	f->seq = m->seq;
	f->time = m->time;
	f->interval = m->interval;
	f->final = m->final;
	f->paused = m->paused;
	strncpy(f->source, m->source, sizeof(f->source) - 1);
	f->source_note = framebuild_strdup(m->source_note, &oom);
	f->has_kinds = m->has_kinds;
	f->period = m->period;
	f->sort = m->sort;
	f->exit_status = m->exit_status;
	f->error = framebuild_strdup(m->error, &oom);
	f->totals = a->interval;
	f->cumulative = a->cumulative;
	counts_add(&f->cumulative, &a->interval);
	f->tracked_pages = pagetab_count(a->pages);
	aggr_noderes(a, &f->noderes);

	f->events = calloc(m->n_events ? m->n_events : 1, sizeof(char *));
	if (!f->events)
		goto out_oom;
	for (size_t i = 0; i < m->n_events; i++)
		f->events[i] = framebuild_strdup(m->events[i], &oom);
	f->n_events = m->n_events;

	if (m->n_targets) {
		f->targets = calloc(m->n_targets, sizeof(*f->targets));
		if (!f->targets)
			goto out_oom;
		memcpy(f->targets, m->targets,
		       m->n_targets * sizeof(*f->targets));
		f->n_targets = m->n_targets;
	}
	if (!oom)
		objects = framebuild_objects_begin(f, a, &oom);
	if (oom || !framebuild_pages(f, a, m, objects) ||
	    !framebuild_topology(f, a) || !framebuild_threads(f, a) ||
	    !framebuild_processes(f, a))
		goto out_oom;
	ok = framebuild_objects_end(objects);
	objects = NULL;
	if (!ok)
		goto out_oom;
	framebuild_names(f, a);
	return f;

out_oom:
	framebuild_objects_free(objects);
	frame_free(f);
	return NULL;
}
