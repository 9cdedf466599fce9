/*
 * The frame's objects (issue 18): each shown page's object and the
 * allocation sites' rows, from the object table a->objects.  Collector
 * thread only.
 */
#ifndef MEMTOP_FRAMEBUILD_OBJECTS_H
#define MEMTOP_FRAMEBUILD_OBJECTS_H

#include <stdbool.h>

#include "frame.h"

struct aggr;

/* After the pages and the topology are in f; false on ENOMEM.  Nothing
 * when a->objects is NULL (objects_on stays false). */
bool framebuild_objects(struct frame *f, struct aggr *a);

#endif
