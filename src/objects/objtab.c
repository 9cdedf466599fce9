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
		objproc_clear(&t->procs[i]);
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

/*
 * Removes [base, end) from p: objects inside end, a cut one is trimmed,
 * one that holds the whole range splits.  *at: where an object at base
 * goes.  0, or -ENOMEM (nothing changed).
 */
static int
objproc_cut(struct objtab *t, struct objproc *p, uint64_t base, uint64_t end,
	    struct objpos *at)
{
	struct objpos pos = objproc_locate(p, base);
	struct obj *o = objproc_at(p, pos);

	if (o && o->base < base && obj_end(o) > end) {
		/* Split: the right part goes in after it first (the insert
		 * may move it), then the left part is trimmed. */
		struct obj right = *o;
		uint64_t left = o->base;

		right.size = obj_end(o) - end;
		right.base = end;
		if (objproc_insert(p, objproc_next(p, pos), &right) < 0)
			return -ENOMEM;
		objproc_resize(p, objproc_locate(p, left), left, base - left);
		t->count++;
		*at = objproc_locate(p, base);
		return 0;
	}
	if (o && o->base < base) {		/* trim the tail */
		objproc_resize(p, pos, o->base, base - o->base);
		pos = objproc_next(p, pos);
	}
	while ((o = objproc_at(p, pos)) && obj_end(o) <= end) {
		pos = objproc_remove(p, pos);
		t->count--;
	}
	if (o && o->base < end)			/* trim the head */
		objproc_resize(p, pos, end, obj_end(o) - end);
	*at = pos;
	return 0;
}

int
objtab_map(struct objtab *t, int32_t pid, const struct obj *o)
{
	struct objproc *p;
	struct objpos at;

	if (o->size == 0 || o->base + o->size < o->base)
		return -EINVAL;
	/* An object not kept, for a full table or for want of memory (a
	 * new pid, a split, a new block), counts untracked.  After a cut,
	 * what it overlapped has ended: it was replaced, not lost. */
	p = objtab_proc_add(t, pid);
	if (!p || objproc_cut(t, p, o->base, o->base + o->size, &at) < 0) {
		t->untracked++;
		return -ENOMEM;
	}
	if (t->max && t->count >= t->max) {
		t->untracked++;
		return -ENOSPC;
	}
	if (objproc_insert(p, at, o) < 0) {
		t->untracked++;
		return -ENOMEM;
	}
	t->count++;
	return 0;
}

void
objtab_untrack(struct objtab *t)
{
	t->untracked++;
}

void
objtab_unmap(struct objtab *t, int32_t pid, uint64_t base, uint64_t size)
{
	struct objproc *p = objtab_proc(t, pid);
	struct objpos at;
	uint64_t end = base + size;

	if (!p || size == 0)
		return;
	if (end < base)
		end = UINT64_MAX;
	/* Without memory for a split the object stays whole (stale names
	 * beat a lost one).  Not counted untracked: nothing is dropped, the
	 * unmapped range keeps its old object's name. */
	(void)objproc_cut(t, p, base, end, &at);
}

const struct obj *
objtab_find(const struct objtab *t, int32_t pid, uint64_t addr)
{
	const struct objproc *p = objtab_proc(t, pid);
	const struct obj *o;

	if (!p)
		return NULL;
	o = objproc_at(p, objproc_locate(p, addr));
	return o && o->base <= addr ? o : NULL;
}

const struct obj *
objtab_touch(struct objtab *t, int32_t pid, uint64_t addr, int32_t tid)
{
	struct obj *o = (struct obj *)objtab_find(t, pid, addr);

	if (o && o->touch_tid == 0)
		o->touch_tid = tid;
	return o;
}

/* objtab_overlap and objtab_newer: the objects born after `after`
 * (all with all). */
static size_t
objtab_overlap_after(const struct objtab *t, int32_t pid, uint64_t base,
		     uint64_t size, bool all, uint64_t after, struct obj *out,
		     size_t max)
{
	const struct objproc *p = objtab_proc(t, pid);
	const struct obj *o;
	uint64_t end = base + size;
	size_t n = 0;

	if (!p)
		return 0;
	/* A range that wraps (a crafted record's) ends at the top, as in
	 * objtab_unmap. */
	if (end < base)
		end = UINT64_MAX;
	for (struct objpos pos = objproc_locate(p, base);
	     (o = objproc_at(p, pos)) && o->base < end;
	     pos = objproc_next(p, pos)) {
		if (!all && o->birth <= after)
			continue;
		if (n < max)
			out[n] = *o;
		n++;
	}
	return n;
}

size_t
objtab_overlap(const struct objtab *t, int32_t pid, uint64_t base,
	       uint64_t size, struct obj *out, size_t max)
{
	return objtab_overlap_after(t, pid, base, size, true, 0, out, max);
}

size_t
objtab_newer(const struct objtab *t, int32_t pid, uint64_t base,
	     uint64_t size, uint64_t after, struct obj *out, size_t max)
{
	return objtab_overlap_after(t, pid, base, size, false, after, out,
				    max);
}

void
objtab_drop_pid(struct objtab *t, int32_t pid)
{
	struct objproc *p = objtab_proc(t, pid);
	size_t i;

	if (!p)
		return;
	t->count -= p->n;
	objproc_clear(p);
	i = (size_t)(p - t->procs);
	memmove(&t->procs[i], &t->procs[i + 1],
		(t->n_procs - i - 1) * sizeof(*t->procs));
	t->n_procs--;
}

static bool
obj_born_since(const struct obj *o, void *birth)
{
	return o->birth >= *(const uint64_t *)birth;
}

void
objtab_drop_older(struct objtab *t, int32_t pid, uint64_t birth)
{
	struct objproc *p = objtab_proc(t, pid);
	size_t before;

	if (!p)
		return;
	before = p->n;
	objproc_keep(p, obj_born_since, &birth);
	t->count -= before - p->n;
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
	for (size_t i = 0; i < t->n_procs; i++) {
		const struct objproc *p = &t->procs[i];

		for (size_t k = 0; k < p->nb; k++)
			for (uint32_t j = 0; j < p->b[k]->n; j++) {
				int r = fn(p->pid, &p->b[k]->v[j], ctx);

				if (r)
					return r;
			}
	}
	return 0;
}
