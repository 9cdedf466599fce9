/*
 * Soft-dirty tracking, the kernel's per-page "written since the last
 * clear" bit (CONFIG_MEM_SOFT_DIRTY; docs/kernel.md, "Soft-dirty"):
 * writing 4 to /proc/PID/clear_refs write-protects every page of PID, so
 * the next write to each takes one minor fault, which the faults source
 * samples.  Any thread; no state.
 */
#ifndef MEMTOP_SOFTDIRTY_H
#define MEMTOP_SOFTDIRTY_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Whether this kernel keeps soft-dirty bits: a page memtop has just
 * written must show bit 55 in /proc/self/pagemap.  0, or -EOPNOTSUPP
 * (-errno when pagemap cannot be read) with the status line of
 * --list-events in why: the reason and the fix.  MEMTOP_SOFTDIRTY=0
 * makes it fail as a kernel without soft-dirty would (tests).
 */
int softdirty_probe(char *why, size_t whylen);

/* Writes "4" to /proc/PID/clear_refs: 0 or -errno. */
int softdirty_clear(pid_t pid);

/* One line for a softdirty_clear() failure on pid: errno text and fix. */
void softdirty_explain(int err, pid_t pid, char *buf, size_t len);

#endif
