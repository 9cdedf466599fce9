/*
 * Which CPU node touches a page most, per (pid, page), this interval: the
 * target a migration moves the page to.  With two nodes the answer needs
 * no table (a remote sample comes from the other node), so the aggregation
 * keeps one only on machines with more than two nodes.  Collector thread
 * only.
 *
 * Each entry runs a two-counter Misra-Gries vote (a generalised majority
 * vote) over the interval's samples of its page: a node that issued more
 * than a third of them always holds a counter, and the answer is the node
 * with the larger counter, so a node with more than half always wins and
 * the answer is never a node that issued none.  24 bytes a page and no
 * per-node counters, so the cost does not grow with the number of nodes.
 */
#ifndef MEMTOP_CPUVOTE_H
#define MEMTOP_CPUVOTE_H

#include <stddef.h>
#include <stdint.h>

struct cpuvote;

/* max_pages 0 = unlimited.  NULL on ENOMEM. */
struct cpuvote *cpuvote_new(size_t max_pages);
void cpuvote_free(struct cpuvote *v);		/* NULL-safe */

/*
 * One sample of (pid, page) issued by a CPU of node index node_idx (0 ..
 * 32767).  0, or -ENOSPC when the table is full (the caller counts it; the
 * page then has no answer), -ENOMEM.
 */
int cpuvote_add(struct cpuvote *v, int32_t pid, uint64_t page, int node_idx);
/* The node index that touched (pid, page) most this interval, or -1. */
int cpuvote_top(const struct cpuvote *v, int32_t pid, uint64_t page);

/* Votes of the old interval stop counting (O(1)). */
void cpuvote_next_interval(struct cpuvote *v);
/* Forgets every page. */
void cpuvote_reset(struct cpuvote *v);
size_t cpuvote_count(const struct cpuvote *v);

#endif
