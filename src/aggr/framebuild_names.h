/*
 * The naming part of a frame: region, symbol, code sites and line heat of
 * the selected pages, and the code view (functions causing most
 * samples).  Collector thread, called by frame_build once the pages are
 * selected.  Only the frame's pages and the code table's ips are named.
 */
#ifndef MEMTOP_FRAMEBUILD_NAMES_H
#define MEMTOP_FRAMEBUILD_NAMES_H

struct aggr;
struct frame;

/* Never fails the frame: what cannot be named (or allocated) stays NULL
 * or empty. */
void framebuild_names(struct frame *f, struct aggr *a);

#endif
