/*
 * Pages named by objects and the objects view's rows (issue 18): at each
 * frame, every page with samples this interval is looked up in the object
 * table (the object holding its first byte, else the first it overlaps),
 * and its samples go to that object's allocation site or to
 * objects_none.  Collector thread only.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggr.h"
#include "framebuild_objects.h"
#include "objtab.h"
#include "pagetab.h"

struct fbo_ctx {
	struct aggr *a;
	struct frame *f;
	struct frame_objsite *acc;	/* per site index */
	size_t n_sites;
	unsigned shift;
	bool oom;
	bool heap;		/* fbo_object: walking the heap objects */
	/* The mapping object the last page was in (NULL: none): a large
	 * mapping's pages, in any order, need no lookup each. */
	const struct obj *memo;
	int32_t memo_pid;
};

#define FBO_HEAP_SCAN 256	/* heap objects weighed in one page */

/*
 * The heap object naming the page [addr, addr + size) of pid: of the
 * site holding the most of its bytes (the first FBO_HEAP_SCAN objects
 * weighed), the first object; NULL when none.
 */
static const struct obj *
fbo_heap(const struct objtab *t, int32_t pid, uint64_t addr, uint64_t size,
	 struct obj *tmp)
{
	struct obj v[FBO_HEAP_SCAN];
	uint64_t bytes[FBO_HEAP_SCAN], best = 0;
	size_t n = objtab_overlap(t, pid, addr, size, v, FBO_HEAP_SCAN);
	size_t pick = 0;

	if (n > FBO_HEAP_SCAN)
		n = FBO_HEAP_SCAN;
	for (size_t i = 0; i < n; i++) {
		uint64_t lo = v[i].base > addr ? v[i].base : addr;
		uint64_t hi = v[i].base + v[i].size < addr + size ?
			      v[i].base + v[i].size : addr + size;
		size_t j = 0;

		while (v[j].site != v[i].site)	/* the site's first */
			j++;
		bytes[i] = 0;
		bytes[j] += hi - lo;
		if (bytes[j] > best) {
			best = bytes[j];
			pick = j;
		}
	}
	if (n == 0)
		return NULL;
	*tmp = v[pick];
	return tmp;
}

/* The object naming the page at addr of pid, or NULL: a heap object,
 * else the mapping object holding its first byte, else the first one it
 * overlaps. */
static const struct obj *
fbo_find(const struct aggr *a, int32_t pid, uint64_t addr, uint64_t size,
	 struct obj *tmp)
{
	const struct objtab *t = a->objects;
	const struct obj *o;

	if (a->heap_objects && (o = fbo_heap(a->heap_objects, pid, addr, size,
					     tmp)))
		return o;
	o = objtab_find(t, pid, addr);
	if (o)
		return o;
	return objtab_overlap(t, pid, addr, size, tmp, 1) ? tmp : NULL;
}

/* n samples (modulo 2^64: a negative n takes them away) on node into
 * the site's row, when the frame lists that node. */
static void
fbo_node_add(const struct aggr *a, struct frame_objsite *s, int node,
	     uint64_t n)
{
	if (s->nodes && node >= 0 && node <= a->max_node &&
	    a->node_idx[node] >= 0)
		s->nodes[a->node_idx[node]] += n;
}

void
framebuild_objects_page(const struct page_entry *e, void *arg)
{
	struct fbo_ctx *c = arg;
	struct aggr *a = c->a;
	struct page_counts pc;
	struct frame_objsite *s;
	const struct obj *o;
	struct obj tmp;
	uint64_t n;
	int32_t pid = pagetab_entry_pid(e);
	uint64_t addr = pagetab_entry_page(e) << c->shift;

	/* Not 0: the walk visits pages with samples this interval only. */
	pagetab_read(a->pages, e, &pc);
	n = pc.loads + pc.stores + pc.other;
	/* Mapping objects do not overlap: the one holding the page's first
	 * byte is the one objtab_find gives (heap objects, which come
	 * first, are looked up each time). */
	if (c->memo && c->memo_pid == pid && addr >= c->memo->base &&
	    addr - c->memo->base < c->memo->size) {
		o = c->memo;
	} else {
		o = fbo_find(a, pid, addr, 1ull << c->shift, &tmp);
		if (o && o != &tmp && !a->heap_objects) {
			c->memo = o;
			c->memo_pid = pid;
		}
	}
	if (!o || o->site >= c->n_sites) {
		c->f->objects_none += n;
		return;
	}
	c->f->objects_samples += n;
	s = &c->acc[o->site];
	s->samples += n;
	s->loads += pc.loads;
	s->stores += pc.stores;
	s->local += pc.local;
	s->remote += pc.remote;
	fbo_node_add(a, s, e->node, n);
}

void
framebuild_objects_renode(struct fbo_ctx *c, int32_t pid, uint64_t addr,
			  uint64_t n, int from, int to)
{
	const struct obj *o;
	struct obj tmp;

	if (!c || from == to)
		return;
	o = fbo_find(c->a, pid, addr, 1ull << c->shift, &tmp);
	if (!o || o->site >= c->n_sites)
		return;
	fbo_node_add(c->a, &c->acc[o->site], from, -n);
	fbo_node_add(c->a, &c->acc[o->site], to, n);
}

/* tid into the first FRAME_OBJ_TIDS distinct ones of v. */
static void
fbo_add_tid(int32_t *v, size_t *n, int32_t tid)
{
	size_t k;

	for (k = 0; k < *n && v[k] != tid; k++)
		;
	if (k == *n && k < FRAME_OBJ_TIDS)
		v[(*n)++] = tid;
}

static int
fbo_object(int32_t pid, const struct obj *o, void *arg)
{
	struct fbo_ctx *c = arg;
	struct frame_objsite *s;

	if (o->site >= c->n_sites)
		return 0;
	/* A mapping that holds heap objects (the malloc arena, a large
	 * malloc's own mmap) is counted through them. */
	if (!c->heap && c->a->heap_objects &&
	    objtab_overlap(c->a->heap_objects, pid, o->base, o->size, NULL,
			   0))
		return 0;
	s = &c->acc[o->site];
	s->objects++;
	s->bytes += o->size;
	s->requested += o->alloc_size;
	fbo_add_tid(s->tids, &s->n_tids, o->tid);
	if (o->touch_tid)
		fbo_add_tid(s->touch_tids, &s->n_touch_tids, o->touch_tid);
	return 0;
}

static int
fbo_cmp(const void *x, const void *y)
{
	const struct frame_objsite *a = x, *b = y;

	if (a->samples != b->samples)
		return a->samples < b->samples ? 1 : -1;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return strcmp(a->site, b->site);
}

static char *
fbo_dup(const char *s, bool *oom)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*oom = true;
	return d;
}

/* The site strings of index i into s. */
static void
fbo_name(struct fbo_ctx *c, struct frame_objsite *s, uint32_t i)
{
	const struct objsite *os = objtab_site(c->a->objects, i);

	s->site = fbo_dup(os->site, &c->oom);
	for (size_t k = 0; k < FRAME_OBJ_CALLERS && k < OBJTAB_CALLERS; k++)
		s->callers[k] = fbo_dup(os->callers[k], &c->oom);
}

/* Keeps the best FRAME_OBJ_SITES of acc in f->objects. */
static void
fbo_rows(struct fbo_ctx *c)
{
	struct frame *f = c->f;
	size_t n = 0;

	for (size_t i = 0; i < c->n_sites; i++) {
		if (c->acc[i].samples == 0 && c->acc[i].objects == 0) {
			free(c->acc[i].nodes);
			continue;
		}
		c->acc[n] = c->acc[i];
		fbo_name(c, &c->acc[n], (uint32_t)i);
		if (!c->acc[n].site)
			c->acc[n].site = fbo_dup("", &c->oom);
		n++;
	}
	if (n)
		qsort(c->acc, n, sizeof(*c->acc), fbo_cmp);
	for (size_t i = FRAME_OBJ_SITES; i < n; i++)
		f->objects_more += c->acc[i].samples;
	f->objects = c->acc;
	f->n_objects = n;
	/* The rows beyond the cap are freed with the frame's own: kept
	 * n counts them; trimmed here. */
	while (f->n_objects > FRAME_OBJ_SITES) {
		struct frame_objsite *s = &f->objects[--f->n_objects];

		free(s->site);
		for (size_t k = 0; k < FRAME_OBJ_CALLERS; k++)
			free(s->callers[k]);
		free(s->nodes);
	}
}

/* The object of each shown page. */
static void
fbo_pages(struct fbo_ctx *c, uint64_t now_ns)
{
	struct frame *f = c->f;

	for (size_t i = 0; i < f->n_pages && !c->oom; i++) {
		struct frame_page *p = &f->pages[i];
		struct frame_object *fo;
		const struct obj *o;
		struct obj tmp;

		o = fbo_find(c->a, p->pid, p->addr, p->size, &tmp);
		if (!o || !(fo = calloc(1, sizeof(*fo)))) {
			c->oom |= o != NULL;
			continue;
		}
		fo->size = o->size;
		fo->base = o->base;
		fo->tid = o->tid;
		fo->requested = o->alloc_size;
		fo->first_touch = o->touch_tid;
		fo->age = now_ns > o->birth ? (now_ns - o->birth) / 1e9 : 0;
		{
			const struct objsite *os = objtab_site(c->a->objects,
							       o->site);

			fo->site = fbo_dup(os ? os->site : "", &c->oom);
			for (size_t k = 0; os && k < FRAME_OBJ_CALLERS; k++)
				fo->callers[k] = fbo_dup(os->callers[k],
							 &c->oom);
		}
		p->object = fo;
	}
}

struct fbo_ctx *
framebuild_objects_begin(struct frame *f, struct aggr *a, bool *oom)
{
	struct fbo_ctx *c;

	if (!a->objects)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		*oom = true;
		return NULL;
	}
	c->a = a;
	c->f = f;
	f->objects_on = true;
	c->shift = pagetab_page_shift(a->pages);
	c->n_sites = objtab_n_sites(a->objects);
	c->acc = calloc(c->n_sites ? c->n_sites : 1, sizeof(*c->acc));
	/* The frame's nodes, which framebuild_topology sets later. */
	for (size_t i = 0; c->acc && i < c->n_sites && a->n_nodes > 0; i++)
		if (!(c->acc[i].nodes = calloc((size_t)a->n_nodes,
					       sizeof(uint64_t))))
			c->oom = true;
	if (!c->acc || c->oom) {
		framebuild_objects_free(c);
		*oom = true;
		return NULL;
	}
	return c;
}

void
framebuild_objects_free(struct fbo_ctx *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->acc && i < c->n_sites; i++)
		free(c->acc[i].nodes);
	free(c->acc);
	free(c);
}

bool
framebuild_objects_end(struct fbo_ctx *c)
{
	struct frame *f;
	struct aggr *a;
	struct timespec ts;
	bool ok;

	if (!c)
		return true;
	f = c->f;
	a = c->a;
	f->objects_live = objtab_count(a->objects) +
			  (a->heap_objects ? objtab_count(a->heap_objects) : 0);
	f->objects_untracked = objtab_untracked(a->objects) +
		(a->heap_objects ? objtab_untracked(a->heap_objects) : 0);
	objtab_foreach(a->objects, fbo_object, c);
	if (a->heap_objects) {
		c->heap = true;
		objtab_foreach(a->heap_objects, fbo_object, c);
	}
	fbo_rows(c);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fbo_pages(c, a->objects_now ? a->objects_now :
		     (uint64_t)ts.tv_sec * 1000000000ull +
		     (uint64_t)ts.tv_nsec);
	ok = !c->oom;
	free(c);		/* acc went to f->objects */
	return ok;
}
