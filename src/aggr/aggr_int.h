/*
 * Inside the aggr room: what aggr.c's per-sample path and the frame
 * builder take from aggr_procs.c.  Collector thread only.
 */
#ifndef MEMTOP_AGGR_INT_H
#define MEMTOP_AGGR_INT_H

#include <stdbool.h>
#include <stdint.h>

struct aggr;
struct frame;
struct proc_entry;

/* The row a sample of pid counts in (the sink when the table is full),
 * looked up once a thread a batch. */
struct proc_entry *aggr_proc_of(struct aggr *a, int32_t pid);

/* Every per-thread slot forgets its thread and row: rows were removed. */
void aggr_tslots_forget(struct aggr *a);

/*
 * The frame's process rows, after its threads (which give each row its
 * thread count): names the rows not named yet, checks that idle ones
 * still run, copies every row with samples this interval or an exit to
 * show, then drops the rows shown dead.  false on ENOMEM.
 */
bool framebuild_processes(struct frame *f, struct aggr *a);

#endif
