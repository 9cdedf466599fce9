/*
 * Inside the objects room: the layout of the object table and its site
 * list.  Collector thread only.
 */
#ifndef MEMTOP_OBJTAB_INT_H
#define MEMTOP_OBJTAB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "objtab.h"

/* Where an object ends (one past its last byte). */
static inline uint64_t
obj_end(const struct obj *o)
{
	return o->base + o->size;
}

#define OBJBLK_MAX 64	/* objects in a block: 3 KiB */

struct objblk {
	uint32_t n;	/* 1 .. OBJBLK_MAX once in a process */
	struct obj v[OBJBLK_MAX];
};

/* One process's objects, sorted by base, disjoint, in sorted blocks
 * (objblocks.c). */
struct objproc {
	int32_t pid;
	struct objblk **b;
	uint64_t *last;		/* per block: where its last object ends */
	size_t nb, capb;
	size_t n;		/* objects */
};

/* A place in a process's objects: block b, object i; { nb, 0 } is past
 * the last. */
struct objpos {
	size_t b, i;
};

/* The first object whose end lies above addr, or the end. */
struct objpos objproc_locate(const struct objproc *p, uint64_t addr);
/* The object at pos; NULL at the end. */
struct obj *objproc_at(const struct objproc *p, struct objpos pos);
/* The place after pos (pos not the end). */
struct objpos objproc_next(const struct objproc *p, struct objpos pos);
/* o goes at pos (before the object there); the caller keeps the order.
 * 0 or -ENOMEM (nothing changed).  Places after pos are invalid after. */
int objproc_insert(struct objproc *p, struct objpos pos,
		   const struct obj *o);
/* The object at pos now spans [base, base + size), in order still. */
void objproc_resize(struct objproc *p, struct objpos pos, uint64_t base,
		    uint64_t size);
/* Removes the object at pos; returns the place of the one that followed
 * it.  Other places are invalid after. */
struct objpos objproc_remove(struct objproc *p, struct objpos pos);
/* Keeps the objects keep() says yes to, in order. */
void objproc_keep(struct objproc *p,
		  bool (*keep)(const struct obj *o, void *ctx), void *ctx);
/* Frees every object and block. */
void objproc_clear(struct objproc *p);

/* Interned sites: an array, and an open-addressing index over it keyed
 * by the hash of the site's strings (slot value idx + 1; 0 = empty). */
struct objsites {
	struct objsite *v;
	uint64_t *hash;		/* per site */
	size_t n, cap;
	uint32_t *slots;
	size_t n_slots;		/* power of two, or 0 */
};

struct objtab {
	struct objproc *procs;	/* sorted by pid */
	size_t n_procs, cap_procs;
	size_t count;
	size_t max;
	uint64_t untracked;	/* not kept: table full, or no memory */
	struct objsites sites;
	struct objtab *site_of;	/* objtab_new_sharing: whose sites */
};

void objsites_fini(struct objsites *s);

#endif
