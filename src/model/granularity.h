/*
 * Page aggregation size: 4 KiB, 2 MiB or 1 GiB pages, switchable while
 * running (key g, CMD_SET_GRANULARITY, --granularity).  The name helpers
 * are pure; aggr_granularity.h rebuilds the page table at a new size.
 */
#ifndef MEMTOP_GRANULARITY_H
#define MEMTOP_GRANULARITY_H

#include <stddef.h>

#define GRANULARITY_4K	12
#define GRANULARITY_2M	21
#define GRANULARITY_1G	30

/* "4k", "2m", "1g" (any case; also "4K", "4KiB", "4096"...) -> shift.
 * 0 or -EINVAL. */
int granularity_parse(const char *s, unsigned *shift);
/* "4 KiB", "2 MiB", "1 GiB", "?" for any other shift. */
const char *granularity_name(unsigned shift);
/* 4 KiB -> 2 MiB -> 1 GiB -> 4 KiB (any other shift -> 4 KiB). */
unsigned granularity_next(unsigned shift);
/* Whether shift is one of the three. */
int granularity_valid(unsigned shift);

#endif
