/*
 * The code view of a frame: the FRAME_CODE_SITES functions that caused
 * most samples, summed over the code table's (pid, ip) entries.
 * Collector thread only.  See framebuild_names.h.
 *
 * Naming is bounded by what the view shows: a function's count is at
 * most the sum of its process's entries, so processes are named in the
 * order of those sums, and once FRAME_CODE_SITES functions are known the
 * first process whose sum cannot beat the last of them ends the walk (no
 * later one can either).  A whole machine's thousands of processes cost
 * the maps of a few dozen, not of every process with a sampled ip.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codetab.h"
#include "frame.h"
#include "keysort.h"
#include "framebuild_names.h"
#include "names.h"
#include "sides.h"
#include "u64map.h"

/*
 * One function of the code view while it is being summed.  name and module
 * are our copies: a names_func pointer is only valid until names evicts its
 * process (more than NAMES_MAX_PROCS processes in one frame), after which
 * the same address may be reused for another function; the copies outlive
 * that and tell such a reused pointer apart.
 */
struct framebuild_func {
	int32_t pid;
	char *name;
	char *module;
	uint64_t samples;
	uint64_t total;
};

static bool
framebuild_streq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

struct framebuild_code {
	struct names *names;
	struct framebuild_pids *pids;
	struct framebuild_func *f;
	size_t n, cap;
	struct u64map index;	/* names_func pointer -> index + 1 */
	bool by_total;
	/* The best functions so far, best first: indices into f. */
	size_t top[FRAME_CODE_SITES];
	size_t n_top;
};

/*
 * Adds one ip's samples to its function.  Functions are interned per
 * process, so the pointer alone identifies (pid, function).  A pid's maps
 * are prepared the first time one of its ips comes, before any of its
 * ips is named, and not again in this frame, so its functions stay put
 * while they are summed.
 */
static void
framebuild_code_sum(const struct codetab_entry *e, uint64_t samples,
		    void *ctx)
{
	struct framebuild_code *c = ctx;
	const struct names_code *nc;
	struct framebuild_func *f, *nf;
	uintptr_t idx;

	framebuild_names_prepare(c->pids, c->names, e->pid);
	nc = names_code(c->names, e->pid, e->ip);
	if (!nc)
		return;
	idx = (uintptr_t)u64map_get(&c->index, (uintptr_t)nc->func);
	if (idx && (c->f[idx - 1].pid != e->pid ||
		    !framebuild_streq(c->f[idx - 1].name, nc->func->name) ||
		    !framebuild_streq(c->f[idx - 1].module,
				      nc->func->module)))
		idx = 0;	/* a freed names_func's address, reused */
	if (idx) {
		f = &c->f[idx - 1];
	} else {
		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 64;

			nf = realloc(c->f, cap * sizeof(*nf));
			if (!nf)
				return;
			c->f = nf;
			c->cap = cap;
		}
		/* Replaces a stale entry; returns the value itself only on
		 * ENOMEM. */
		if (u64map_put(&c->index, (uintptr_t)nc->func,
			       (void *)(uintptr_t)(c->n + 1)) ==
		    (void *)(uintptr_t)(c->n + 1))
			return;
		f = &c->f[c->n++];
		memset(f, 0, sizeof(*f));
		f->pid = e->pid;
		f->name = nc->func->name ? strdup(nc->func->name) : NULL;
		f->module = nc->func->module ? strdup(nc->func->module) : NULL;
	}
	f->samples += samples;
	f->total += e->total;
}

/* The view's order: the sort key, then the other count, then the pid. */
static bool
framebuild_code_before(uint64_t ka, uint64_t oa, int32_t pa,
		       uint64_t kb, uint64_t ob, int32_t pb)
{
	if (ka != kb)
		return ka > kb;
	if (oa != ob)
		return oa > ob;
	return pa < pb;
}

static bool
framebuild_code_better(const struct framebuild_code *c,
		       const struct framebuild_func *a,
		       const struct framebuild_func *b)
{
	if (c->by_total)
		return framebuild_code_before(a->total, a->samples, a->pid,
					      b->total, b->samples, b->pid);
	return framebuild_code_before(a->samples, a->total, a->pid,
				      b->samples, b->total, b->pid);
}

/* Functions [from, c->n) into the best FRAME_CODE_SITES. */
static void
framebuild_code_rank(struct framebuild_code *c, size_t from)
{
	for (size_t i = from; i < c->n; i++) {
		size_t at = c->n_top;

		while (at > 0 &&
		       framebuild_code_better(c, &c->f[i], &c->f[c->top[at - 1]]))
			at--;
		if (at >= FRAME_CODE_SITES)
			continue;
		if (c->n_top < FRAME_CODE_SITES)
			c->n_top++;
		memmove(&c->top[at + 1], &c->top[at],
			(c->n_top - 1 - at) * sizeof(c->top[0]));
		c->top[at] = i;
	}
}

/* The code table's entries, to be walked one process after another. */
struct framebuild_code_list {
	struct framebuild_code_entry {
		const struct codetab_entry *e;
		uint64_t samples;
	} *v;
	size_t n, cap;
	bool failed;
};

/* One process's entries (v[first .. first + n)) and their sums: what any
 * one of its functions can reach at most. */
struct framebuild_code_group {
	int32_t pid;
	size_t first, n;
	uint64_t key, other;
};

static void
framebuild_code_collect(const struct codetab_entry *e, uint64_t samples,
			void *ctx)
{
	struct framebuild_code_list *l = ctx;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		void *nv = realloc(l->v, cap * sizeof(*l->v));

		if (!nv) {
			l->failed = true;
			return;
		}
		l->v = nv;
		l->cap = cap;
	}
	l->v[l->n].e = e;
	l->v[l->n++].samples = samples;
}

static void
framebuild_code_pid_key(const void *item, const void *ctx, uint64_t *hi,
			uint64_t *lo)
{
	const struct framebuild_code_entry *v = item;

	(void)ctx;
	*hi = (uint64_t)((int64_t)v->e->pid - INT32_MIN);
	*lo = 0;
}

/* A group's place: the larger sums first (the sort is stable on pid
 * order, so ties of both sums stay lowest pid first). */
static void
framebuild_code_group_key(const void *item, const void *ctx, uint64_t *hi,
			  uint64_t *lo)
{
	const struct framebuild_code_group *g = item;

	(void)ctx;
	*hi = UINT64_MAX - g->key;
	*lo = UINT64_MAX - g->other;
}

/* The list's entries grouped by pid, the groups in the view's order of
 * their sums (radix sorts, keysort.h: a whole machine's code table has
 * tens of thousands of entries); NULL on ENOMEM. */
static struct framebuild_code_group *
framebuild_code_groups(struct framebuild_code_list *l, bool by_total,
		       size_t *n)
{
	struct framebuild_code_group *g;
	size_t m = 0;

	if (keysort_array(l->v, l->n, sizeof(*l->v), framebuild_code_pid_key,
			  NULL) < 0)
		return NULL;
	g = calloc(l->n ? l->n : 1, sizeof(*g));
	for (size_t i = 0; g && i < l->n; i++) {
		uint64_t s = l->v[i].samples, t = l->v[i].e->total;

		if (m == 0 || g[m - 1].pid != l->v[i].e->pid) {
			g[m].pid = l->v[i].e->pid;
			g[m++].first = i;
		}
		g[m - 1].n++;
		g[m - 1].key += by_total ? t : s;
		g[m - 1].other += by_total ? s : t;
	}
	if (g && keysort_array(g, m, sizeof(*g), framebuild_code_group_key,
			       NULL) < 0) {
		free(g);
		g = NULL;
	}
	*n = m;
	return g;
}

/* Whether a function of g could come before the last one shown. */
static bool
framebuild_code_may_place(const struct framebuild_code *c,
			  const struct framebuild_code_group *g)
{
	const struct framebuild_func *last;

	if (c->n_top < FRAME_CODE_SITES)
		return true;
	last = &c->f[c->top[FRAME_CODE_SITES - 1]];
	if (c->by_total)
		return framebuild_code_before(g->key, g->other, g->pid,
					      last->total, last->samples,
					      last->pid);
	return framebuild_code_before(g->key, g->other, g->pid,
				      last->samples, last->total, last->pid);
}

/*
 * framebuild_code_sum over the entries of the processes that can place a
 * function in the view, one process after another (names are prepared
 * per process, and interleaved pids would evict each other's names on a
 * machine with more processes than the name cache holds).
 */
static void
framebuild_code_walk(const struct codetab *t, struct framebuild_code *c)
{
	struct framebuild_code_list l = { 0 };
	struct framebuild_code_group *g = NULL;
	size_t n_groups = 0;

	codetab_foreach(t, framebuild_code_collect, &l);
	if (!l.failed)
		g = framebuild_code_groups(&l, c->by_total, &n_groups);
	if (!g) {
		/* Out of memory: every entry in the table's order. */
		free(l.v);
		codetab_foreach(t, framebuild_code_sum, c);
		framebuild_code_rank(c, 0);
		return;
	}
	for (size_t i = 0; i < n_groups; i++) {
		size_t from = c->n;

		if (!framebuild_code_may_place(c, &g[i]))
			break;
		for (size_t j = 0; j < g[i].n; j++)
			framebuild_code_sum(l.v[g[i].first + j].e,
					    l.v[g[i].first + j].samples, c);
		framebuild_code_rank(c, from);
	}
	free(g);
	free(l.v);
}

void
framebuild_code(struct frame *f, struct sides *s, struct framebuild_pids *pids)
{
	struct framebuild_code c = { .names = s->names, .pids = pids,
				     .by_total = f->sort == SORT_TOTAL };

	framebuild_code_walk(s->code, &c);
	if (c.n_top)
		f->code_sites = calloc(c.n_top, sizeof(*f->code_sites));
	for (size_t i = 0; f->code_sites && i < c.n_top; i++) {
		struct framebuild_func *fn = &c.f[c.top[i]];
		struct frame_code_site *cs = &f->code_sites[i];

		cs->pid = fn->pid;
		cs->function = fn->name;
		cs->module = fn->module;
		fn->name = fn->module = NULL;
		cs->samples = fn->samples;
		cs->total = fn->total;
		f->n_code_sites++;
	}
	for (size_t i = 0; i < c.n; i++) {
		free(c.f[i].name);
		free(c.f[i].module);
	}
	free(c.f);
	u64map_clear(&c.index, NULL);
}
