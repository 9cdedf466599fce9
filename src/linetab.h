/*
 * Cache-line heat: for a few pages, samples per 1/64th of the page (one
 * 64-byte cache line at 4 KiB pages; size/64 bytes at 2 MiB and 1 GiB).
 * Collector thread only; needs samples with full data addresses (faults
 * and PEBS/IBS all give them).
 *
 * A fixed number of slots (LINETAB_SLOTS), each holding one page's 64
 * counters.  A page gets a slot at its first sample while free slots
 * remain; once they are all taken, only the pages named by
 * linetab_want() (the first pages of the last frame) get slots, taken
 * from pages not named.  A slot counts from the moment its page got it.
 */
#ifndef MEMTOP_LINETAB_H
#define MEMTOP_LINETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LINETAB_LINES	64
#define LINETAB_SLOTS	1024

struct linetab_key {
	int32_t pid;
	uint64_t page;
};

struct linetab;

/* NULL on ENOMEM. */
struct linetab *linetab_new(unsigned page_shift);
void linetab_free(struct linetab *t);		/* NULL-safe */

/* One sample at addr, which lies in page (pid, addr >> page_shift). */
void linetab_add(struct linetab *t, int32_t pid, uint64_t addr);

/* Copies the page's counters into out[LINETAB_LINES]; false when the
 * page has no slot. */
bool linetab_get(const struct linetab *t, int32_t pid, uint64_t page,
		 uint32_t *out);

/* Makes sure each of keys[0..n) has a slot (n <= LINETAB_SLOTS / 2),
 * taking them from pages not in keys when needed. */
void linetab_want(struct linetab *t, const struct linetab_key *keys,
		  size_t n);

/* Forgets every page; a new page_shift for the counters that follow. */
void linetab_reset(struct linetab *t, unsigned page_shift);

/* Pages with a slot now. */
size_t linetab_count(const struct linetab *t);

#endif
