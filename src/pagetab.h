/*
 * Page table: samples folded per (pid, page).  Collector thread only; the
 * UI never reads it, it gets frames.
 *
 * Interval counters are reset lazily: an entry's loads/stores/other count
 * the interval `epoch`; pagetab_next_interval() advances the table's epoch,
 * and an entry whose epoch is older reads as zero for this interval.
 */
#ifndef MEMTOP_PAGETAB_H
#define MEMTOP_PAGETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sortkey.h"

#define PAGE_NODE_UNKNOWN	(-1)	/* asked, kernel had no answer */
#define PAGE_NODE_UNQUERIED	(-2)	/* never asked */

struct page_entry {
	uint64_t page;		/* address >> page_shift */
	int32_t pid;
	int16_t node;		/* memory node or PAGE_NODE_* */
	uint16_t flags;		/* free for the caller (e.g. node query due) */
	uint32_t epoch;		/* interval the counters below belong to */
	uint32_t loads;		/* this interval */
	uint32_t stores;	/* this interval */
	uint32_t other;		/* this interval */
	uint32_t local;		/* this interval: CPU node == page node */
	uint32_t remote;	/* this interval: CPU node != page node */
	uint64_t total;		/* samples since insert or reset */
	uint64_t weight_sum;	/* since reset; latency = weight_sum/weight_n */
	uint32_t weight_n;
};

struct pagetab;

/* max_pages 0 = unlimited.  NULL on ENOMEM. */
struct pagetab *pagetab_new(unsigned page_shift, size_t max_pages);
void pagetab_free(struct pagetab *t);	/* NULL-safe */

unsigned pagetab_page_shift(const struct pagetab *t);

/*
 * Returns the entry for (pid, addr >> page_shift), inserting a zeroed one
 * (node = PAGE_NODE_UNQUERIED, epoch = current) when absent; *inserted
 * says which.  If the entry's epoch is older than the table's, its interval
 * counters are zeroed and its epoch set to current before returning.
 * NULL when the table is at max_pages (caller counts `untracked`) or on
 * ENOMEM.  The pointer is valid until the next insert or reset.
 */
struct page_entry *pagetab_get(struct pagetab *t, int32_t pid, uint64_t addr,
			       bool *inserted);
/* Lookup without insert; NULL when absent.  Does not touch the epoch. */
struct page_entry *pagetab_find(struct pagetab *t, int32_t pid, uint64_t page);

/* Interval counters of e as seen now (0 when its epoch is old). */
uint64_t pagetab_interval_samples(const struct pagetab *t,
				  const struct page_entry *e);

void pagetab_next_interval(struct pagetab *t);
uint32_t pagetab_epoch(const struct pagetab *t);
/* Forget every page (keeps capacity). */
void pagetab_reset(struct pagetab *t);
size_t pagetab_count(const struct pagetab *t);
size_t pagetab_capacity(const struct pagetab *t);
size_t pagetab_bytes(const struct pagetab *t);

/*
 * Best k entries by key, best first, copied into out[] (room for k).
 * Only entries with a non-zero key value take part (for interval keys:
 * touched this interval).  Ties break by (pid, page) ascending so the
 * order is deterministic.  O(n log k); never sorts the whole table.
 * Returns the number copied.
 */
size_t pagetab_topk(const struct pagetab *t, enum sort_key key, size_t k,
		    struct page_entry *out);

/* Calls fn for every entry; stops early when fn returns non-zero and
 * returns that value. */
int pagetab_foreach(struct pagetab *t,
		    int (*fn)(struct page_entry *e, void *ctx), void *ctx);

/* O(n) consistency check (probe chains, count); 0 or -EINVAL. */
int pagetab_check(const struct pagetab *t);

#endif
