/* Collector thread only.  See objtab.h. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "objtab.h"
#include "objtab_int.h"

struct objtab *
objtab_new(size_t max_objects)
{
	struct objtab *t = calloc(1, sizeof(*t));

	if (t)
		t->max = max_objects;
	return t;
}

struct objtab *
objtab_new_sharing(size_t max_objects, struct objtab *sites)
{
	struct objtab *t = objtab_new(max_objects);

	if (t)
		t->site_of = sites;
	return t;
}

void
objtab_free(struct objtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_procs; i++)
		free(t->procs[i].v);
	free(t->procs);
	objsites_fini(&t->sites);
	free(t);
}

/* The slot of pid in the sorted procs[], or where it would go. */
static size_t
objtab_proc_slot(const struct objtab *t, int32_t pid)
{
	size_t lo = 0, hi = t->n_procs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct objproc *
objtab_proc(const struct objtab *t, int32_t pid)
{
	size_t i = objtab_proc_slot(t, pid);

	return i < t->n_procs && t->procs[i].pid == pid ?
	       (struct objproc *)&t->procs[i] : NULL;
}

static struct objproc *
objtab_proc_add(struct objtab *t, int32_t pid)
{
	size_t i = objtab_proc_slot(t, pid);

	if (i < t->n_procs && t->procs[i].pid == pid)
		return &t->procs[i];
	if (t->n_procs == t->cap_procs) {
		size_t cap = t->cap_procs ? 2 * t->cap_procs : 8;
		struct objproc *p = realloc(t->procs, cap * sizeof(*p));

		if (!p)
			return NULL;
		t->procs = p;
		t->cap_procs = cap;
	}
	memmove(&t->procs[i + 1], &t->procs[i],
		(t->n_procs - i) * sizeof(*t->procs));
	memset(&t->procs[i], 0, sizeof(*t->procs));
	t->procs[i].pid = pid;
	t->n_procs++;
	return &t->procs[i];
}

/* The first object of p whose end lies above addr. */
static size_t
objproc_first_above(const struct objproc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->v[mid].base + p->v[mid].size <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int
objproc_reserve(struct objproc *p, size_t more)
{
	size_t cap = p->cap ? 2 * p->cap : 16;
	struct obj *v;

	if (p->n + more <= p->cap)
		return 0;
	while (cap < p->n + more)
		cap *= 2;
	v = realloc(p->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->v = v;
	p->cap = cap;
	return 0;
}

/*
 * Removes [base, end) from p: objects inside end, a cut one is trimmed,
 * one that holds the whole range splits.  Returns the index where an
 * object at base would go, or -ENOMEM (nothing changed).
 */
static long
objproc_cut(struct objtab *t, struct objproc *p, uint64_t base, uint64_t end)
{
	size_t i = objproc_first_above(p, base), j;

	if (i < p->n && p->v[i].base < base &&
	    p->v[i].base + p->v[i].size > end) {
		/* Split: the left part stays at i, the right goes to i+1. */
		struct obj right;

		if (objproc_reserve(p, 1) < 0)
			return -ENOMEM;
		right = p->v[i];
		right.size = right.base + right.size - end;
		right.base = end;
		p->v[i].size = base - p->v[i].base;
		memmove(&p->v[i + 2], &p->v[i + 1],
			(p->n - i - 1) * sizeof(*p->v));
		p->v[i + 1] = right;
		p->n++;
		t->count++;
		return (long)i + 1;
	}
	if (i < p->n && p->v[i].base < base) {
		p->v[i].size = base - p->v[i].base;	/* trim the tail */
		i++;
	}
	for (j = i; j < p->n && p->v[j].base + p->v[j].size <= end; j++)
		;
	if (j < p->n && p->v[j].base < end) {		/* trim the head */
		p->v[j].size -= end - p->v[j].base;
		p->v[j].base = end;
	}
	memmove(&p->v[i], &p->v[j], (p->n - j) * sizeof(*p->v));
	p->n -= j - i;
	t->count -= j - i;
	return (long)i;
}

int
objtab_map(struct objtab *t, int32_t pid, const struct obj *o)
{
	struct objproc *p;
	long i;

	if (o->size == 0 || o->base + o->size < o->base)
		return -EINVAL;
	p = objtab_proc_add(t, pid);
	if (!p || objproc_reserve(p, 2) < 0)
		return -ENOMEM;
	i = objproc_cut(t, p, o->base, o->base + o->size);
	if (i < 0)
		return (int)i;
	if (t->max && t->count >= t->max) {
		t->untracked++;
		return -ENOSPC;
	}
	memmove(&p->v[i + 1], &p->v[i], (p->n - (size_t)i) * sizeof(*p->v));
	p->v[i] = *o;
	p->n++;
	t->count++;
	return 0;
}

void
objtab_unmap(struct objtab *t, int32_t pid, uint64_t base, uint64_t size)
{
	struct objproc *p = objtab_proc(t, pid);
	uint64_t end = base + size;

	if (!p || size == 0)
		return;
	if (end < base)
		end = UINT64_MAX;
	/* A split needs room for one more; without it the object stays
	 * whole (stale names beat a lost one). */
	if (objproc_reserve(p, 1) < 0)
		return;
	(void)objproc_cut(t, p, base, end);
}

const struct obj *
objtab_find(const struct objtab *t, int32_t pid, uint64_t addr)
{
	const struct objproc *p = objtab_proc(t, pid);
	size_t i;

	if (!p)
		return NULL;
	i = objproc_first_above(p, addr);
	return i < p->n && p->v[i].base <= addr ? &p->v[i] : NULL;
}

void
objtab_touch(struct objtab *t, int32_t pid, uint64_t addr, int32_t tid)
{
	struct obj *o = (struct obj *)objtab_find(t, pid, addr);

	if (o && o->touch_tid == 0)
		o->touch_tid = tid;
}

size_t
objtab_overlap(const struct objtab *t, int32_t pid, uint64_t base,
	       uint64_t size, struct obj *out, size_t max)
{
	const struct objproc *p = objtab_proc(t, pid);
	size_t n = 0;

	if (!p)
		return 0;
	for (size_t i = objproc_first_above(p, base);
	     i < p->n && p->v[i].base < base + size; i++, n++)
		if (n < max)
			out[n] = p->v[i];
	return n;
}

void
objtab_drop_pid(struct objtab *t, int32_t pid)
{
	struct objproc *p = objtab_proc(t, pid);
	size_t i;

	if (!p)
		return;
	t->count -= p->n;
	free(p->v);
	i = (size_t)(p - t->procs);
	memmove(&t->procs[i], &t->procs[i + 1],
		(t->n_procs - i - 1) * sizeof(*t->procs));
	t->n_procs--;
}

void
objtab_drop_older(struct objtab *t, int32_t pid, uint64_t birth)
{
	struct objproc *p = objtab_proc(t, pid);
	size_t n = 0;

	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].birth >= birth)
			p->v[n++] = p->v[i];
	t->count -= p->n - n;
	p->n = n;
}

size_t
objtab_count(const struct objtab *t)
{
	return t->count;
}

uint64_t
objtab_untracked(const struct objtab *t)
{
	return t->untracked;
}

int
objtab_foreach(const struct objtab *t,
	       int (*fn)(int32_t pid, const struct obj *o, void *ctx),
	       void *ctx)
{
	for (size_t i = 0; i < t->n_procs; i++)
		for (size_t j = 0; j < t->procs[i].n; j++) {
			int r = fn(t->procs[i].pid, &t->procs[i].v[j], ctx);

			if (r)
				return r;
		}
	return 0;
}
