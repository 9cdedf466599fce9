/*
 * One process's objects in sorted blocks (objtab_int.h): a short array
 * of pointers to blocks of at most OBJBLK_MAX objects, every block non-
 * empty, the objects ascending across them.  A change moves at most one
 * block's objects and, when a block splits, merges or empties, the block
 * pointers after it: with 256 Ki objects live a free costs a few
 * hundred bytes moved instead of megabytes (bench/bench-objtab.c).
 * Collector thread only.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "objtab_int.h"

/* Block k's key: where its last object ends. */
static void
objproc_rekey(struct objproc *p, size_t k)
{
	p->last[k] = obj_end(&p->b[k]->v[p->b[k]->n - 1]);
}

/*
 * The searches halve without a branch on the data: the frame's objects
 * view locates every touched page in hash order, where a taken-or-not
 * branch per step would be a coin flip (bench/bench-frame.c).  lo + n
 * bounds the answer; a step keeps the half that holds it.
 */
struct objpos
objproc_locate(const struct objproc *p, uint64_t addr)
{
	size_t lo = 0, n = p->nb;
	const struct objblk *b;

	if (n == 0)
		return (struct objpos){ 0, 0 };
	/* The first block whose last object ends above addr (its key: no
	 * block read on the way)... */
	while (n > 1) {
		size_t half = n / 2;

		lo = p->last[lo + half] <= addr ? lo + half : lo;
		n -= half;
	}
	lo += p->last[lo] <= addr;
	if (lo == p->nb)
		return (struct objpos){ p->nb, 0 };
	/* ...and in it the first such object. */
	b = p->b[lo];
	size_t i = 0;

	for (n = b->n; n > 1; n -= n / 2)
		i = obj_end(&b->v[i + n / 2]) <= addr ? i + n / 2 : i;
	i += obj_end(&b->v[i]) <= addr;
	return (struct objpos){ lo, i };
}

struct obj *
objproc_at(const struct objproc *p, struct objpos pos)
{
	return pos.b < p->nb ? &p->b[pos.b]->v[pos.i] : NULL;
}

struct objpos
objproc_next(const struct objproc *p, struct objpos pos)
{
	if (++pos.i == p->b[pos.b]->n)
		pos = (struct objpos){ pos.b + 1, 0 };
	return pos;
}

void
objproc_resize(struct objproc *p, struct objpos pos, uint64_t base,
	       uint64_t size)
{
	struct obj *o = &p->b[pos.b]->v[pos.i];

	o->base = base;
	o->size = size;
	objproc_rekey(p, pos.b);
}

/* Room for one more block (pointer and key) at index at; -ENOMEM. */
static int
objproc_open_slot(struct objproc *p, size_t at)
{
	if (p->nb == p->capb) {
		size_t cap = p->capb ? 2 * p->capb : 4;
		struct objblk **v = realloc(p->b, cap * sizeof(*v));
		uint64_t *last;

		if (!v)
			return -ENOMEM;
		p->b = v;
		last = realloc(p->last, cap * sizeof(*last));
		if (!last)
			return -ENOMEM;
		p->last = last;
		p->capb = cap;
	}
	memmove(&p->b[at + 1], &p->b[at], (p->nb - at) * sizeof(*p->b));
	memmove(&p->last[at + 1], &p->last[at],
		(p->nb - at) * sizeof(*p->last));
	p->nb++;
	return 0;
}

static void
objproc_close_slot(struct objproc *p, size_t at)
{
	free(p->b[at]);
	memmove(&p->b[at], &p->b[at + 1], (p->nb - at - 1) * sizeof(*p->b));
	memmove(&p->last[at], &p->last[at + 1],
		(p->nb - at - 1) * sizeof(*p->last));
	p->nb--;
}

int
objproc_insert(struct objproc *p, struct objpos pos, const struct obj *o)
{
	struct objblk *b;

	if (pos.b == p->nb && p->nb) {		/* the end: the last block */
		pos.b = p->nb - 1;
		pos.i = p->b[pos.b]->n;
	}
	if (pos.b == p->nb) {			/* no block yet */
		b = malloc(sizeof(*b));
		if (!b || objproc_open_slot(p, 0) < 0) {
			free(b);
			return -ENOMEM;
		}
		b->n = 0;
		p->b[0] = b;
	}
	b = p->b[pos.b];
	if (b->n == OBJBLK_MAX) {		/* split: the upper half moves */
		struct objblk *up = malloc(sizeof(*up));
		uint32_t half = OBJBLK_MAX / 2;

		if (!up || objproc_open_slot(p, pos.b + 1) < 0) {
			free(up);
			return -ENOMEM;
		}
		memcpy(up->v, &b->v[half], (b->n - half) * sizeof(*b->v));
		up->n = b->n - half;
		b->n = half;
		p->b[pos.b + 1] = up;
		objproc_rekey(p, pos.b);
		objproc_rekey(p, pos.b + 1);
		if (pos.i > half) {
			pos.b++;
			pos.i -= half;
			b = up;
		}
	}
	memmove(&b->v[pos.i + 1], &b->v[pos.i],
		(b->n - pos.i) * sizeof(*b->v));
	b->v[pos.i] = *o;
	b->n++;
	p->n++;
	objproc_rekey(p, pos.b);
	return 0;
}

/* Block at and the one after it in one when they fit in half a block:
 * the blocks stay at least a quarter full on average. */
static bool
objproc_merge(struct objproc *p, size_t at)
{
	struct objblk *a, *b;

	if (at + 1 >= p->nb)
		return false;
	a = p->b[at];
	b = p->b[at + 1];
	if (a->n + b->n > OBJBLK_MAX / 2)
		return false;
	memcpy(&a->v[a->n], b->v, b->n * sizeof(*b->v));
	a->n += b->n;
	objproc_close_slot(p, at + 1);
	objproc_rekey(p, at);
	return true;
}

struct objpos
objproc_remove(struct objproc *p, struct objpos pos)
{
	struct objblk *b = p->b[pos.b];

	memmove(&b->v[pos.i], &b->v[pos.i + 1],
		(b->n - pos.i - 1) * sizeof(*b->v));
	b->n--;
	p->n--;
	if (b->n == 0) {
		objproc_close_slot(p, pos.b);
		return (struct objpos){ pos.b, 0 };
	}
	if (b->n < OBJBLK_MAX / 4) {
		/* Into the block before (the position moves with it), or
		 * the block after into this one. */
		uint32_t before = pos.b ? p->b[pos.b - 1]->n : 0;

		if (pos.b > 0 && objproc_merge(p, pos.b - 1))
			pos = (struct objpos){ pos.b - 1, pos.i + before };
		else
			(void)objproc_merge(p, pos.b);
	}
	objproc_rekey(p, pos.b);
	if (pos.i == p->b[pos.b]->n)
		pos = (struct objpos){ pos.b + 1, 0 };
	return pos;
}

void
objproc_keep(struct objproc *p, bool (*keep)(const struct obj *o,
					     void *ctx), void *ctx)
{
	size_t nb = 0;

	p->n = 0;
	for (size_t k = 0; k < p->nb; k++) {
		struct objblk *b = p->b[k];
		uint32_t n = 0;

		for (uint32_t i = 0; i < b->n; i++)
			if (keep(&b->v[i], ctx))
				b->v[n++] = b->v[i];
		b->n = n;
		p->n += n;
		if (n) {
			p->b[nb] = b;
			objproc_rekey(p, nb++);
		} else {
			free(b);
		}
	}
	p->nb = nb;
}

void
objproc_clear(struct objproc *p)
{
	for (size_t k = 0; k < p->nb; k++)
		free(p->b[k]);
	free(p->b);
	free(p->last);
	p->b = NULL;
	p->last = NULL;
	p->nb = p->capb = p->n = 0;
}
