/*
 * The frame's objects (issue 18): each shown page's object and the
 * allocation sites' rows, from the object table a->objects.  Collector
 * thread only.
 */
#ifndef MEMTOP_FRAMEBUILD_OBJECTS_H
#define MEMTOP_FRAMEBUILD_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>

#include "frame.h"

struct aggr;

struct fbo_ctx;
struct page_entry;

/*
 * In three steps, so that the pages' walk serves the objects view too:
 * framebuild_objects_begin before the pages (NULL when a->objects is
 * NULL, objects_on then staying false, or on ENOMEM, *oom then set);
 * framebuild_objects_page for every page with samples this interval
 * (the visitor of pagetab_topk_visit); framebuild_objects_renode for a
 * shown page whose node the frame changed after the walk counted it;
 * framebuild_objects_end once the pages and the topology are in f,
 * which frees the context (false on ENOMEM).  framebuild_objects_free
 * frees a context that does not reach the end.
 */
struct fbo_ctx *framebuild_objects_begin(struct frame *f, struct aggr *a,
					 bool *oom);
void framebuild_objects_page(const struct page_entry *e, void *ctx);
void framebuild_objects_renode(struct fbo_ctx *c, int32_t pid, uint64_t addr,
			       uint64_t n, int from, int to);
bool framebuild_objects_end(struct fbo_ctx *c);
void framebuild_objects_free(struct fbo_ctx *c);	/* NULL-safe */

#endif
