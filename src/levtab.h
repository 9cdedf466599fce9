/*
 * Where accesses were served (data_src level classes) per page and per
 * interval, for sources that give data_src (pebs, ibs).  Collector thread
 * only.  A page gets a counter block on its first sample with a level;
 * samples whose data_src says nothing (faults: all NA) are not kept.
 */
#ifndef MEMTOP_LEVTAB_H
#define MEMTOP_LEVTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datasrc.h"

struct levtab;

/* max_pages 0 = unlimited; pages past it are counted in `untracked`. */
struct levtab *levtab_new(size_t max_pages);
void levtab_free(struct levtab *t);	/* NULL-safe */

/* One sample of (pid, page) with this data_src (0 = none: ignored). */
void levtab_add(struct levtab *t, int32_t pid, uint64_t page,
		uint64_t data_src);
/* Per-page counts since reset into out[DATASRC_LVL__COUNT]; false when
 * the page has none. */
bool levtab_page(const struct levtab *t, int32_t pid, uint64_t page,
		 uint64_t *out);
/* This interval's counts, all pages, into out[DATASRC_LVL__COUNT]. */
void levtab_interval(const struct levtab *t, uint64_t *out);
uint64_t levtab_untracked(const struct levtab *t);
void levtab_next_interval(struct levtab *t);
/* Forgets pages and counts (reset, or a new page size). */
void levtab_reset(struct levtab *t);

#endif
