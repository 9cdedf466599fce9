/*
 * Shared by the drain pool's tests (test-dpool.c, test-dpool-drops.c): a
 * shard of many pages, so that its merge lasts some milliseconds.
 */
#ifndef MEMTOP_DPOOL_TEST_H
#define MEMTOP_DPOOL_TEST_H

#include <stdint.h>

#include "dpool.h"
#include "ingest-build.h"
#include "ring-build.h"

/*
 * n tracepoint samples of PID on pages *page, *page + 1, ... (from
 * 0x10000000, wrapping at 2^20 pages) written into t, drained by the
 * pool (items[0..n_items), 5 as the period, other(ctx)) each time t is
 * full and at the end.
 */
static inline void
dpool_test_fill(struct dpool *pool, struct dpool_item *items, size_t n_items,
		struct tring *t, uint64_t *page, uint64_t n,
		dpool_other_fn other, void *ctx)
{
	struct rec rc;

	for (uint64_t done = 0; done < n;) {
		const struct perf_event_header *h;

		while (done < n &&
		       (h = rec_tp(&rc, PID, 0x10000000ull +
				   (*page % (1u << 20)) * 4096, 6, 36)) &&
		       tring_room(t, h->size)) {
			tring_append(t, h, h->size);
			(*page)++, done++;
		}
		tring_publish(t);
		dpool_drain(pool, items, n_items, 5, other, ctx);
	}
}

#endif
