/*
 * The allocation events of the live collector (issue 18): records of a
 * channel's allocation ring (collector/channels/channel_alloc.c) ->
 * decoded -> the allocating stack unwound -> the object table.  The site
 * of an object is the first frame outside the allocator (unwind.h),
 * then its next OBJTAB_CALLERS frames.  Collector thread only.
 */
#ifndef MEMTOP_ALLOCS_H
#define MEMTOP_ALLOCS_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "objtab.h"
#include "source.h"

struct unwinder;
struct channel;
struct alloc_rec;

#define ALLOCS_BRKS 64		/* processes whose brk is followed */

struct allocs_stats {
	uint64_t events;	/* allocation records read */
	uint64_t objects;	/* objects made (mmap, mremap, brk growth) */
	uint64_t unwound;	/* named through the DWARF walk */
	uint64_t chained;	/* named through the call chain */
	uint64_t unknown;	/* no site could be named */
	uint64_t bad;		/* records that did not decode */
	uint64_t lost;		/* records the kernel dropped (LOST) */
};

struct allocs {
	struct objtab *objs;
	struct unwinder *unw;
	struct alloc_rec *queue;	/* decoded, walks in flight */
	size_t n_queued;
	struct {
		int32_t pid;
		uint64_t brk;
	} brks[ALLOCS_BRKS];
	size_t n_brks;
	struct allocs_stats st;
};

/* 0 or -ENOMEM.  max_objects as objtab_new(). */
int allocs_init(struct allocs *a, size_t max_objects);
void allocs_fini(struct allocs *a);	/* NULL-safe, idempotent */

/* Decodes and applies one SAMPLE record of allocation event ev (and any
 * queued before it). */
void allocs_record(struct allocs *a, const struct event_spec *ev,
		   const struct perf_event_header *hdr);
/* Every record of ch's allocation ring, applied before it returns. */
void allocs_drain(struct allocs *a, struct channel *ch);
/* Decodes one record and queues it, its walk sent to the unwind helper:
 * applied when the queue is full or at allocs_flush. */
void allocs_queue(struct allocs *a, const struct event_spec *ev,
		  const struct perf_event_header *hdr);
/* Applies the records queued (allocs_drain does). */
void allocs_flush(struct allocs *a);
/* pid called exec(2) at time: the objects of its old image end. */
void allocs_exec(struct allocs *a, int32_t pid, uint64_t time);
/* pid exited: its stacks are no longer unwound (objects stay, to name
 * the pages of its last frame). */
void allocs_exit(struct allocs *a, int32_t pid);

#endif
