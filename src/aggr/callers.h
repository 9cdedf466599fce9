/*
 * The caller of each code site (pid, ip): the first user frame past the
 * ip in its samples' call chains (record_callchain_caller), as the page
 * detail's "called from" and JSON sites[].caller show it.  Only samples
 * with a call chain (a replayed `perf record -g` capture) have one; the
 * latest sample's caller is kept.  A side table apart from the site
 * table, whose records stay one cache line each.  At most CALLERS_MAX
 * sites; past that a new site gets none (its samples are counted as
 * always).  The owner's thread only.
 */
#ifndef MEMTOP_CALLERS_H
#define MEMTOP_CALLERS_H

#include <stdbool.h>
#include <stdint.h>

#include "u64map.h"

#define CALLERS_MAX	65536

struct callers {
	struct u64map map;	/* key: callers_key; value: struct caller */
};

/* Notes caller as the caller of (pid, ip); caller 0 is ignored. */
void callers_note(struct callers *c, int32_t pid, uint64_t ip,
		  uint64_t caller);
/* Notes one vain look for the caller of (pid, ip) (a replay's walk of a
 * site's user stack: replay_callers.c), and returns the looks so far
 * (0 when the table had no room to note it); a caller noted later stays
 * the caller. */
uint32_t callers_none(struct callers *c, int32_t pid, uint64_t ip);
/* The vain looks noted for (pid, ip); UINT32_MAX once it has a caller. */
uint32_t callers_tries(const struct callers *c, int32_t pid, uint64_t ip);
/* Whether a new site still finds room (CALLERS_MAX). */
bool callers_room(const struct callers *c);
/* The caller of (pid, ip), 0 when none is known. */
uint64_t callers_get(const struct callers *c, int32_t pid, uint64_t ip);
/* Forgets every caller (reset). */
void callers_clear(struct callers *c);

#endif
