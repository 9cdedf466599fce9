/*
 * The live side of the allocation events (allocs_live.c): what
 * allocs_record() reads of the source's allocation event.  Any thread.
 */
#ifndef MEMTOP_ALLOCS_LIVE_H
#define MEMTOP_ALLOCS_LIVE_H

#include "allocs.h"
#include "source.h"

struct allocs_event allocs_event_of(const struct event_spec *ev);

#endif
