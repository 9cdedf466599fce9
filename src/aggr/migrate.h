/*
 * Moving remote-heavy pages to the node that touches them most, on the
 * user's request only (--migrate-hot N after every frame, CMD_MIGRATE from
 * the TUI's m/M keys).  Collector thread only.
 *
 * After each frame the collector takes a snapshot of the frame's
 * candidates: listed pages with a known node and more remote than local
 * samples in the interval, each with its target node (two nodes: the
 * other one; more: the CPU node that touched it most, from the
 * aggregation's vote table), best first by remote - local.  Moves use
 * move_pages(pid, n, pages, nodes, status, MPOL_MF_MOVE), batched per pid;
 * every page's status is counted (frame_migrations) and reported in the
 * next frame.  A moved page takes its new node in the page table at once.
 */
#ifndef MEMTOP_MIGRATE_H
#define MEMTOP_MIGRATE_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

struct aggr;
struct migrate;

/* move_pages(2)'s shape, so tests can play the kernel. */
typedef long (*migrate_move_fn)(void *ctx, int pid, unsigned long count,
				void **pages, const int *nodes, int *status,
				int flags);

struct migrate *migrate_new(void);
void migrate_free(struct migrate *m);		/* NULL-safe */
/* Replaces the move_pages call (NULL: the real one). */
void migrate_set_mover(struct migrate *m, migrate_move_fn fn, void *ctx);

/*
 * Replaces the candidates with those of frame f (built from a).  0 or
 * -ENOMEM (no candidates then).
 */
int migrate_snapshot(struct migrate *m, const struct frame *f,
		     const struct aggr *a);
size_t migrate_n_candidates(const struct migrate *m);

/* Moves the best n candidates (n 0 = all) and drops them from the
 * snapshot, so asking again does not repeat them.  Returns pages tried. */
size_t migrate_top(struct migrate *m, struct aggr *a, size_t n);
/*
 * Moves one page of the snapshot (pid, any address in the page).  A page
 * that is not a candidate (not listed, not remote-heavy, node unknown) is
 * counted as skipped.  Returns 1 when tried, else 0.
 */
size_t migrate_page(struct migrate *m, struct aggr *a, int32_t pid,
		    uint64_t addr);

/* The results since the last call, then zeroes them. */
void migrate_take(struct migrate *m, struct frame_migrations *out);

#endif
