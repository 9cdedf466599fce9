/*
 * The known fix for an errno that a resource limit caused, to append to a
 * one-line error ("memtop: epoll: Too many open files; raise RLIMIT_NOFILE
 * (ulimit -n, now 8)").  Any thread; no state.
 */
#ifndef MEMTOP_RLIMITS_H
#define MEMTOP_RLIMITS_H

#include <stddef.h>

/*
 * Writes "; <fix>" into buf for EMFILE (RLIMIT_NOFILE, with its current
 * soft limit) and ENFILE (the system-wide fs.file-max), "" for any other
 * errnum or when msg (may be NULL) already names the limit.  errnum may be
 * negative (-errno).  Returns buf.
 */
const char *rlimits_hint(int errnum, const char *msg, char *buf, size_t len);

/*
 * Perf rings are locked memory.  Without CAP_IPC_LOCK (and above
 * perf_event_paranoid -1) a user may lock perf_event_mlock_kb per online
 * CPU, then RLIMIT_MEMLOCK, then mmap fails with EPERM (docs/kernel.md,
 * "Permissions and limits").
 * Returns the pages memtop may lock for rings, or 0 for no limit.
 */
unsigned long rlimits_ring_budget(void);

/*
 * Data pages per ring (a power of two in [2, want]) so that twice
 * `threads` channels fit budget_pages (0 = no limit: want), a channel
 * locking 1 + pages pages for its ring plus extra_pages (other rings of
 * the same thread).  Twice, so that threads born later still find room.
 * Pure.
 */
unsigned rlimits_ring_pages(unsigned want, unsigned threads,
			    unsigned long budget_pages, unsigned extra_pages);

#endif
