/*
 * Small heap objects (--heap-objects, issue 18): the records of the
 * uprobes on the target's allocator (collector/sources/source_heap.c),
 * live (collector/live/allocs_live.c) or from a --record file
 * (collector/replay/replay_objects.c, which knows the probes by the names
 * heapobjs_event_name gives them there),
 * paired per thread (an entry and its return share the stack pointer:
 * rsp at the return is rsp at the entry + 8; a call made inside another
 * probed call, as realloc's malloc or operator new's, is not an object of
 * its own), into a second object table whose sites are the mapping
 * table's (objtab_new_sharing).  The site is the caller of the outermost
 * allocator function, named once per (process, return address) with the
 * callers of the first stack seen there; a caller inside an allocator's
 * module (strdup) is unwound every time.  free and operator delete end
 * the object at their pointer; realloc ends the old one and makes the
 * new one.  The producer's thread only.
 */
#ifndef MEMTOP_HEAPOBJS_H
#define MEMTOP_HEAPOBJS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapopt.h"
#include "objtab.h"
#include "u64map.h"

struct unwinder;

/* What a heap probe's record holds, from its event's attr. */
struct heap_event {
	enum heap_fn fn;
	bool ret;		/* a return probe */
	uint64_t sample_type;
	uint64_t regs_user;	/* sample_regs_user (perf's x86 order) */
};

struct heap_stats {
	uint64_t calls;		/* outermost allocating calls seen */
	uint64_t objects;	/* objects made */
	uint64_t frees;		/* objects ended by free or delete */
	uint64_t nested;	/* calls inside another probed call */
	uint64_t unpaired;	/* entries or returns without their other */
	uint64_t small;		/* below --heap-objects=SIZE */
	uint64_t unwound;	/* sites unwound from the stack copy */
	uint64_t bad;		/* records that did not decode, or that
				 * found no memory (objects_lost) */
};

#define HEAPOBJS_CACHE 4096	/* (pid, return address) -> site */

struct heapobjs {
	struct objtab *objs;	/* NULL: --heap-objects is off */
	struct objtab *sites;	/* the mapping table: sites interned there */
	struct unwinder *unw;	/* borrowed */
	struct u64map threads;	/* tid -> struct heap_thread */
	uint64_t min_size;
	/* Entries are sampled (heaplive.c): a return without its entry is
	 * the rule, not a loss. */
	bool sampled;
	/* Replay: the process is not there to read posix_memalign's
	 * pointer from when its frame's copy does not hold it. */
	bool no_peek;
	struct heap_site_slot {
		int32_t pid;
		uint32_t site;
		uint64_t ret;	/* 0 = empty */
	} *cache;
	struct heap_stats st;
};

/* 0 or -ENOMEM.  sites and unw outlive h. */
int heapobjs_init(struct heapobjs *h, struct objtab *sites,
		  struct unwinder *unw, size_t max_objects, uint64_t min_size);
void heapobjs_fini(struct heapobjs *h);	/* NULL-safe, idempotent */
/* One SAMPLE record of heap probe ev (ev->fn != HEAP_NONE), host byte
 * order. */
void heapobjs_record(struct heapobjs *h, const struct heap_event *ev,
		     const struct perf_event_header *hdr);
/* exec(2) of pid at time: its old image's objects end. */
void heapobjs_exec(struct heapobjs *h, int32_t pid, uint64_t time);


/* A probe's name in a --record file (perf script shows it), "memtop_heap:"
 * and its kind ("malloc", "free", ... operator new is a malloc, delete a
 * free), "__return" after a return probe's: the length written (cut at
 * len), as snprintf. */
int heapobjs_event_name(enum heap_fn fn, bool ret, char *buf, size_t len);
/* Replay: is name such a probe's?  Then ev's fn and ret are set. */
bool heapobjs_event_parse(const char *name, struct heap_event *ev);

#endif
