/*
 * The live side of the allocation events (allocs_live.c): what
 * allocs_record() reads of the source's allocation event.  Any thread.
 */
#ifndef MEMTOP_ALLOCS_LIVE_H
#define MEMTOP_ALLOCS_LIVE_H

#include "allocs.h"
#include "heapobjs.h"
#include "source.h"

struct allocs_event allocs_event_of(const struct event_spec *ev);
/* What heapobjs_record() reads of a heap probe (ev->heap_fn set). */
struct heap_event heap_event_of(const struct event_spec *ev);

#endif
