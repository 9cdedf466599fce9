/*
 * Inside the objects room: the layout of the object table and its site
 * list.  Collector thread only.
 */
#ifndef MEMTOP_OBJTAB_INT_H
#define MEMTOP_OBJTAB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "objtab.h"

/* One process's objects, sorted by base, disjoint. */
struct objproc {
	int32_t pid;
	struct obj *v;
	size_t n, cap;
};

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
	uint64_t untracked;
	struct objsites sites;
	struct objtab *site_of;	/* objtab_new_sharing: whose sites */
};

void objsites_fini(struct objsites *s);

#endif
