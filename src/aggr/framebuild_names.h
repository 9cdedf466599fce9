/*
 * The naming part of a frame: region, symbol, code sites and line heat of
 * the selected pages, and the code view (functions causing most
 * samples).  Collector thread, called by frame_build once the pages are
 * selected.  Only the frame's pages and the code table's ips are named.
 */
#ifndef MEMTOP_FRAMEBUILD_NAMES_H
#define MEMTOP_FRAMEBUILD_NAMES_H

#include <stdint.h>

#include "u64map.h"

struct aggr;
struct frame;
struct names;
struct sides;

/* Distinct pids of one frame, each prepared (maps re-read) once: a hash
 * set, as a whole machine has thousands. */
struct framebuild_pids {
	struct u64map seen;
};

/* Never fails the frame: what cannot be named (or allocated) stays NULL
 * or empty. */
void framebuild_names(struct frame *f, struct aggr *a);
/* names_prepare(pid) unless this frame did already. */
void framebuild_names_prepare(struct framebuild_pids *p, struct names *names,
			      int32_t pid);
/* framebuild_code.c: the code view (f->code_sites), naming only the
 * processes whose samples can place a function among the shown ones. */
void framebuild_code(struct frame *f, struct sides *s,
		     struct framebuild_pids *pids);

#endif
