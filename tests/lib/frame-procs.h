/* Test frames: one process row holding every sample of a synthetic frame,
 * so that frame_check's process sums hold. */
#ifndef MEMTOP_TEST_FRAME_PROCS_H
#define MEMTOP_TEST_FRAME_PROCS_H

#include <stdint.h>

struct frame;

/* After totals, cumulative, nodes and threads are set: a row for pid
 * with comm and cgroup (copied), nothing when there are no samples.
 * Aborts when out of memory. */
void frame_one_process(struct frame *f, int32_t pid, const char *comm,
		       const char *cgroup);

/* After totals and nodes are set: objects on, one allocation site
 * (make_table+0x1c, 4 MiB of which 2 MiB asked, made by thread tid, first
 * touched by tid + 1)
 * holding half the samples,
 * all on node index node, so that frame_check's object sums hold.
 * Aborts when out of memory. */
void frame_one_objsite(struct frame *f, int32_t tid, size_t node);
/* Gives page p an object: site, size bytes from the page's address,
 * made by thread p->pid 1.5 s ago from main+0x2a.  Aborts on ENOMEM. */
struct frame_page;
void frame_page_object(struct frame_page *p, const char *site,
		       uint64_t size);

#endif
