/*
 * Inside the aggr room: the per-thread slots of aggr.c's per-sample path
 * and what it and the frame builder take from aggr_procs.c.  Collector
 * thread only.
 */
#ifndef MEMTOP_AGGR_INT_H
#define MEMTOP_AGGR_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "aggr.h"
#include "sample.h"

struct frame;
struct proc_entry;

/*
 * Per-thread counts of one batch, added to the thread table and the
 * process row once a thread a batch instead of once a sample: a ring
 * holds one thread's samples, or one CPU's time slice of a few threads,
 * and even samples of 16 threads in random order (bench-ingest) cost a
 * slot here, not a lookup in the table.  Direct-mapped by the tid's low
 * bits: tids are handed out in sequence, so a process's threads do not
 * collide there, and a tid that does collide hands the slot's counts on
 * first.  The slots keep their thread and row from batch to batch (only
 * counts spill at a batch's end), so a row is looked up when a slot
 * changes thread, not every batch; rows may go at a frame, and then every
 * slot forgets (aggr_tslots_forget).
 */
#define AGGR_TSLOTS	64

struct aggr_tslot {
	/* A sample's pid and tid as they lie in struct sample, so one
	 * compare tells whether the slot counts for this thread and pid;
	 * a new pid for the tid spills first (threadtab keeps the newest).
	 * UINT64_MAX (pid and tid -1, never queued) while unused. */
	uint64_t pid_tid;
	/* The thread's samples of the batch by kind and by locality (enum
	 * proc_locality), added to its process row, the batch's kinds and
	 * the thread table when the slot spills. */
	uint32_t kinds[3];
	uint32_t lr[3];
	/* The process's row, looked up when the slot takes a thread; its
	 * memory node counts are added sample by sample. */
	struct proc_entry *proc;
};

/* The row a sample of pid counts in (the sink when the table is full). */
struct proc_entry *aggr_proc_of(struct aggr *a, int32_t pid);
/* Hands ts's counts to the thread table, its row and kinds[]; zeroes
 * them. */
void aggr_tslot_spill(struct aggr *a, uint64_t kinds[3],
		      struct aggr_tslot *ts);
/* Every slot forgets its thread and row: rows were removed. */
void aggr_tslots_forget(struct aggr *a);
/* Whether pid (ctx: the struct aggr) may have a page in the next frame:
 * it has a->names_bar samples or more this interval, or no row. */
bool aggr_proc_worth_naming(void *ctx, int32_t pid);

_Static_assert(offsetof(struct sample, tid) ==
	       offsetof(struct sample, pid) + sizeof(int32_t),
	       "pid and tid are read as one u64");

/* The slot of s's thread, taken over from another thread first when
 * needed; kinds[] gets what the old thread's counts add. */
static inline struct aggr_tslot *
aggr_thread_slot(struct aggr *a, uint64_t kinds[3], const struct sample *s)
{
	struct aggr_tslot *ts = &a->tslots[(uint32_t)s->tid &
					   (AGGR_TSLOTS - 1)];
	uint64_t pid_tid;

	memcpy(&pid_tid, &s->pid, sizeof(pid_tid));
	if (__builtin_expect(ts->pid_tid != pid_tid, 0)) {
		aggr_tslot_spill(a, kinds, ts);
		ts->pid_tid = pid_tid;
		ts->proc = aggr_proc_of(a, s->pid);
	}
	return ts;
}

/*
 * The frame's process rows, after its threads (which give each row its
 * thread count): names the rows not named yet, checks that idle ones
 * still run, copies every row with samples this interval or an exit to
 * show, then drops the rows shown dead.  false on ENOMEM.
 */
bool framebuild_processes(struct frame *f, struct aggr *a);

struct page_entry;

/* aggr_nodes.c: a batch's work between lookup and accounting (side
 * tables told of new pages, first touchers, nodes from PHYS_ADDR or the
 * sole node, pages queued in want[] for move_pages: returns whether any
 * is), then the move_pages queries of the pages queued. */
bool aggr_decide(struct aggr *a, struct page_entry *const *ents,
		 const bool *inserted, bool *want);
void aggr_resolve(struct aggr *a, const bool *want);

#endif
