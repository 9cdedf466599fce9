/*
 * memtop_process_samples_total: samples per process since start, for the
 * top N processes, and pid="other" for the rest.  Owned by the
 * accumulator's owner (the UI thread).
 *
 * A frame has no per-process counts; its threads[] (pid, tid, samples of
 * the interval, summing to totals.samples) give them, and its targets[]
 * the names.  Every process's total only grows.  The top N is chosen
 * after each frame by total; "other" grows by that frame's samples of
 * the processes outside it, so it never goes down either.  A process
 * that climbs into the top N shows its whole total, part of which "other"
 * counted while it was outside: the series may sum to more than
 * memtop_samples_total, never to less.
 *
 * The table holds at most METRICS_PROCS_MAX processes; when full, those
 * outside the top N that the frame being added does not name are
 * forgotten (a fork-heavy workload makes many short-lived pids).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "metrics_int.h"

#define METRICS_PROCS_MAX	65536
#define METRICS_PROCS_MIN_CAP	64

static size_t
metrics_procs_hash(int32_t pid, size_t cap)
{
	return (size_t)(((uint64_t)(uint32_t)pid *
			 UINT64_C(0x9e3779b97f4a7c15)) >> 20) & (cap - 1);
}

int
metrics_procs_init(struct metrics_procs *p, unsigned top_max)
{
	memset(p, 0, sizeof(*p));
	p->top_max = top_max;
	p->top = calloc(top_max ? top_max : 1, sizeof(*p->top));
	return p->top ? 0 : -ENOMEM;
}

void
metrics_procs_fini(struct metrics_procs *p)
{
	free(p->slots);
	free(p->touched);
	free(p->top);
	memset(p, 0, sizeof(*p));
}

static struct metrics_proc_slot *
metrics_procs_find(const struct metrics_procs *p, int32_t pid)
{
	if (!p->cap)
		return NULL;
	for (size_t s = metrics_procs_hash(pid, p->cap); p->slots[s].pid;
	     s = (s + 1) & (p->cap - 1))
		if (p->slots[s].pid == pid)
			return &p->slots[s];
	return NULL;
}

/* Moves the slots for which keep() holds into a table of cap slots. */
static int
metrics_procs_rehash(struct metrics_procs *p, size_t cap, uint64_t frame_no,
		     bool evict)
{
	struct metrics_proc_slot *old = p->slots, *slots;
	size_t old_cap = p->cap;

	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	p->slots = slots;
	p->cap = cap;
	p->n = 0;
	for (size_t i = 0; i < old_cap; i++) {
		const struct metrics_proc_slot *e = &old[i];
		size_t s;

		if (!e->pid || (evict && !e->top && e->seen != frame_no))
			continue;
		for (s = metrics_procs_hash(e->pid, cap); slots[s].pid;
		     s = (s + 1) & (cap - 1))
			;
		slots[s] = *e;
		p->n++;
	}
	free(old);
	return 0;
}

/* The process's slot, made when new; NULL on ENOMEM or a full table. */
static struct metrics_proc_slot *
metrics_procs_get(struct metrics_procs *p, int32_t pid, uint64_t frame_no)
{
	struct metrics_proc_slot *e = metrics_procs_find(p, pid);
	size_t s;

	if (e)
		return e;
	if (p->n >= METRICS_PROCS_MAX &&
	    (metrics_procs_rehash(p, p->cap, frame_no, true) < 0 ||
	     p->n >= METRICS_PROCS_MAX))
		return NULL;
	if ((p->n + 1) * 2 > p->cap &&
	    metrics_procs_rehash(p, p->cap ? p->cap * 2 :
				 METRICS_PROCS_MIN_CAP, frame_no, false) < 0)
		return NULL;
	for (s = metrics_procs_hash(pid, p->cap); p->slots[s].pid;
	     s = (s + 1) & (p->cap - 1))
		;
	e = &p->slots[s];
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	p->n++;
	return e;
}

static int
metrics_procs_touch(struct metrics_procs *p, int32_t pid)
{
	if (p->n_touched == p->touched_cap) {
		size_t cap = p->touched_cap ? p->touched_cap * 2 : 64;
		int32_t *t = realloc(p->touched, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		p->touched = t;
		p->touched_cap = cap;
	}
	p->touched[p->n_touched++] = pid;
	return 0;
}

/* a ranks before b: more samples, then the lower pid. */
static bool
metrics_proc_before(const struct metrics_proc *a, const struct metrics_proc *b)
{
	return a->samples != b->samples ? a->samples > b->samples :
					  a->pid < b->pid;
}

/* Restores the heap (root = the entry ranked last) from i down. */
static void
metrics_heap_down(struct metrics_proc *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct metrics_proc t;

		if (l < n && metrics_proc_before(&h[m], &h[l]))
			m = l;
		if (r < n && metrics_proc_before(&h[m], &h[r]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static int
metrics_proc_cmp(const void *a, const void *b)
{
	return metrics_proc_before(a, b) ? -1 :
	       metrics_proc_before(b, a) ? 1 : 0;
}

/* The top N by total: one pass with a heap of N, then N log N. */
static void
metrics_procs_select(struct metrics_procs *p)
{
	struct metrics_proc *h = p->top;
	size_t n = 0, k = p->top_max;

	for (size_t i = 0; i < p->n_top; i++) {
		struct metrics_proc_slot *e = metrics_procs_find(p, h[i].pid);

		if (e)
			e->top = false;
	}
	for (size_t i = 0; k && i < p->cap; i++) {
		const struct metrics_proc_slot *e = &p->slots[i];
		struct metrics_proc c;

		if (!e->pid || !e->total)
			continue;
		c.pid = e->pid;
		c.samples = e->total;
		memcpy(c.comm, e->comm, sizeof(c.comm));
		if (n < k) {
			h[n++] = c;
			if (n == k)
				for (size_t j = k / 2 + 1; j-- > 0;)
					metrics_heap_down(h, n, j);
		} else if (metrics_proc_before(&c, &h[0])) {
			h[0] = c;
			metrics_heap_down(h, n, 0);
		}
	}
	qsort(h, n, sizeof(*h), metrics_proc_cmp);
	p->n_top = n;
	for (size_t i = 0; i < n; i++)
		metrics_procs_find(p, h[i].pid)->top = true;
}

int
metrics_procs_add(struct metrics_procs *p, const struct frame *f,
		  uint64_t frame_no)
{
	int ret = 0;

	for (size_t i = 0; i < f->n_threads; i++) {
		const struct frame_thread *t = &f->threads[i];
		struct metrics_proc_slot *e;

		if (!t->samples)
			continue;
		e = t->pid > 0 ? metrics_procs_get(p, t->pid, frame_no) : NULL;
		if (e && !e->delta && metrics_procs_touch(p, t->pid) < 0)
			e = NULL;
		if (!e) {
			/* No slot (full table, ENOMEM, a bad pid): the
			 * samples still count, as "other". */
			p->other += t->samples;
			ret = t->pid > 0 ? -ENOMEM : ret;
			continue;
		}
		e->delta += t->samples;
		e->total += t->samples;
		e->seen = frame_no;
	}
	for (size_t i = 0; i < f->n_targets; i++) {
		struct metrics_proc_slot *e =
			metrics_procs_find(p, f->targets[i].pid);

		if (e) {
			memcpy(e->comm, f->targets[i].comm, sizeof(e->comm));
			e->comm[sizeof(e->comm) - 1] = '\0';
			e->seen = frame_no;
		}
	}
	metrics_procs_select(p);
	for (size_t i = 0; i < p->n_touched; i++) {
		struct metrics_proc_slot *e =
			metrics_procs_find(p, p->touched[i]);

		if (!e->top)
			p->other += e->delta;
		e->delta = 0;
	}
	p->n_touched = 0;
	return ret;
}
