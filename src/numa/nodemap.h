/*
 * Page -> memory node through move_pages(pid, n, pages, NULL, status, 0),
 * which moves nothing and reports each page's node.  Batched (the kernel
 * walks 16 pages per chunk; one call per up to NODEMAP_BATCH pages).
 * Collector thread only.  The cache is the caller's (pagetab's node field).
 */
#ifndef MEMTOP_NODEMAP_H
#define MEMTOP_NODEMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NODEMAP_BATCH 1024

struct nodemap_stats {
	uint64_t calls;		/* move_pages calls */
	uint64_t pages;		/* pages asked about */
	uint64_t resolved;	/* pages with a node */
	uint64_t errors;	/* calls that failed as a whole (EPERM, ESRCH) */
	uint64_t ns;		/* time spent in move_pages */
};

struct nodemap;

struct nodemap *nodemap_new(void);
void nodemap_free(struct nodemap *m);	/* NULL-safe */

/*
 * nodes[i] = memory node of the page holding addrs[i] in pid, or -1 when
 * the kernel has none (not present: -ENOENT; unmapped or zero page:
 * -EFAULT).  0 on success (even if some pages are unknown), -errno when the
 * call failed as a whole (every nodes[i] = -1 then): -EPERM (no ptrace
 * access), -ESRCH (gone), -ENOSYS.
 */
int nodemap_query(struct nodemap *m, pid_t pid, const uint64_t *addrs,
		  size_t n, int16_t *nodes);
const struct nodemap_stats *nodemap_stats(const struct nodemap *m);

#endif
