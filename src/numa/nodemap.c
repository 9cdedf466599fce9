#include "config.h"

/*
 * Page -> memory node resolver.  Collector thread only.
 *
 * move_pages() with a NULL node array migrates nothing and fills status[i]
 * with the node of pages[i], or a negative errno for that page: -ENOENT
 * when nothing is mapped there yet (never touched), -EFAULT when the
 * address is unmapped or maps the shared zero page (read, never written).
 * Those pages have no node of their own, so both become -1.
 */

#include <errno.h>
#include <numaif.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "nodemap.h"

struct nodemap {
	struct nodemap_stats stats;
	uint64_t page_mask;		/* ~(page size - 1) */
	void *pages[NODEMAP_BATCH];	/* page-aligned addresses of a chunk */
	int status[NODEMAP_BATCH];
};


struct nodemap *
nodemap_new(void)
{
	struct nodemap *m = calloc(1, sizeof(*m));
	long page_size = sysconf(_SC_PAGESIZE);

	if (!m)
		return NULL;
	if (page_size <= 0)
		page_size = 4096;
	m->page_mask = ~((uint64_t)page_size - 1);
	return m;
}

void
nodemap_free(struct nodemap *m)
{
	free(m);
}

static void
nodemap_fill_unknown(int16_t *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		nodes[i] = -1;
}

/*
 * One move_pages() call for up to NODEMAP_BATCH pages.  0 or -errno for
 * the call as a whole.
 */
static int
nodemap_query_chunk(struct nodemap *m, pid_t pid, const uint64_t *addrs,
		    size_t n, int16_t *nodes)
{
	uint64_t t0;
	long ret;
	int err;

	for (size_t i = 0; i < n; i++) {
		m->pages[i] = (void *)(uintptr_t)(addrs[i] & m->page_mask);
		m->status[i] = -ENOENT;
	}
	t0 = base_now_ns();
	ret = move_pages(pid, (unsigned long)n, m->pages, NULL, m->status, 0);
	err = errno;
	m->stats.ns += base_now_ns() - t0;
	m->stats.calls++;
	m->stats.pages += n;
	if (ret < 0) {
		m->stats.errors++;
		return -err;
	}
	for (size_t i = 0; i < n; i++) {
		/* Linux node numbers stay far below INT16_MAX (1024 max). */
		if (m->status[i] >= 0 && m->status[i] <= INT16_MAX) {
			nodes[i] = (int16_t)m->status[i];
			m->stats.resolved++;
		} else {
			nodes[i] = -1;
		}
	}
	return 0;
}

int
nodemap_query(struct nodemap *m, pid_t pid, const uint64_t *addrs,
	      size_t n, int16_t *nodes)
{
	int rc;

	if (n == 0)
		return 0;
	if (!m || !addrs || !nodes)
		return -EINVAL;
	for (size_t done = 0; done < n; done += NODEMAP_BATCH) {
		size_t chunk = n - done < NODEMAP_BATCH ? n - done
							: NODEMAP_BATCH;

		rc = nodemap_query_chunk(m, pid, addrs + done, chunk,
					 nodes + done);
		if (rc < 0)
			goto out_unknown;
	}
	return 0;

out_unknown:
	/* A failed call (process gone, no access) taints the whole answer. */
	nodemap_fill_unknown(nodes, n);
	return rc;
}

const struct nodemap_stats *
nodemap_stats(const struct nodemap *m)
{
	return &m->stats;
}
