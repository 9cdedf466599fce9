/*
 * Object table: the live memory objects of each watched process, named by
 * the code that allocated them (issue 18).  Per pid a compact interval map:
 * disjoint [base, base + size) ranges, sorted, in blocks of 64 (a change
 * moves one block's objects, not the whole table: objblocks.c).  Mapping a range
 * removes whatever it overlaps first (a reused range gets the new site);
 * unmapping a range ends the objects inside it and splits or trims those
 * it cuts.  Bounded: an object beyond max_objects, or one there was no
 * memory for, is not kept and counts in `untracked`.  Sites are interned
 * once (objsite.h) and objects refer to them by index.  Collector thread
 * only.
 */
#ifndef MEMTOP_OBJTAB_H
#define MEMTOP_OBJTAB_H

#include <stddef.h>
#include <stdint.h>

#define OBJTAB_CALLERS 3

struct obj {
	uint64_t base;
	uint64_t size;		/* bytes, > 0 */
	uint32_t site;		/* objtab_site() index */
	int32_t tid;		/* the allocating thread */
	uint64_t birth;		/* allocation time (perf clock, ns) */
	uint64_t alloc_size;	/* the size the allocating call asked */
	/* The thread of the first sample seen on its pages (objtab_touch):
	 * its first toucher, where first-touch placement put its pages; 0 =
	 * none yet. */
	int32_t touch_tid;
};

/* An allocation site: its frame and the frames that called it. */
struct objsite {
	char *site;		/* "make_table+0x1c" */
	char *callers[OBJTAB_CALLERS];	/* NULL where none */
};

struct objtab;

/* max_objects 0 = unbounded.  NULL on ENOMEM. */
struct objtab *objtab_new(size_t max_objects);
void objtab_free(struct objtab *t);	/* NULL-safe */
/* A table whose sites are those of `sites` (interned there, same
 * indexes): heap objects beside the mappings they lie in.  `sites`
 * outlives it. */
struct objtab *objtab_new_sharing(size_t max_objects, struct objtab *sites);

/*
 * The index of a site (site, callers[0..n)), interned: the same strings
 * give the same index.  -ENOMEM, else >= 0.
 */
int64_t objtab_site_intern(struct objtab *t, const char *site,
			   const char *const *callers, size_t n);
const struct objsite *objtab_site(const struct objtab *t, uint32_t idx);
size_t objtab_n_sites(const struct objtab *t);

/*
 * A new object [base, base + size) of pid.  Whatever it overlaps ends
 * first.  0, -EINVAL for size 0 or a range that wraps, -ENOSPC when the
 * table is full, -ENOMEM (both counted untracked: the object is not kept;
 * after -ENOMEM what it overlapped may have ended or stayed).
 */
int objtab_map(struct objtab *t, int32_t pid, const struct obj *o);
/* Counts untracked an object the caller could not hand to objtab_map (no
 * memory for its site). */
void objtab_untrack(struct objtab *t);
/* Ends [base, base + size) of pid: objects inside it end, objects it
 * cuts are trimmed or split in two (both halves keep their site). */
void objtab_unmap(struct objtab *t, int32_t pid, uint64_t base,
		  uint64_t size);
/* The object of pid holding addr, or NULL.  Valid until the next change. */
const struct obj *objtab_find(const struct objtab *t, int32_t pid,
			      uint64_t addr);
/*
 * The objects of pid overlapping [base, base + size), up to max into out
 * (copies), ascending; returns how many overlap in all.
 */
size_t objtab_overlap(const struct objtab *t, int32_t pid, uint64_t base,
		      uint64_t size, struct obj *out, size_t max);
/* The same for the objects born after `after` alone. */
size_t objtab_newer(const struct objtab *t, int32_t pid, uint64_t base,
		    uint64_t size, uint64_t after, struct obj *out,
		    size_t max);
/* A sample of tid at addr of pid: the object holding addr, when it has
 * no first toucher yet, gets tid.  Returns that object (NULL: none),
 * valid until the table changes. */
const struct obj *objtab_touch(struct objtab *t, int32_t pid, uint64_t addr,
			       int32_t tid);
/* Forgets every object of pid (the process exited). */
void objtab_drop_pid(struct objtab *t, int32_t pid);
/* Forgets the objects of pid born before `birth` (exec(2) replaced its
 * address space then; later ones belong to the new image). */
void objtab_drop_older(struct objtab *t, int32_t pid, uint64_t birth);

/* Objects kept, and objects not kept because the table was full or
 * memory ran out. */
size_t objtab_count(const struct objtab *t);
uint64_t objtab_untracked(const struct objtab *t);

/* Calls fn for every object of every pid; stops at a non-zero return. */
int objtab_foreach(const struct objtab *t,
		   int (*fn)(int32_t pid, const struct obj *o, void *ctx),
		   void *ctx);

#endif
