/*
 * Sorting many items by two 64-bit keys: a stable LSD radix sort of
 * (hi, lo, index) triples, ascending by hi, then lo.  Byte positions
 * where every key agrees are skipped, so small counts and pids cost a
 * few passes.  The frame's thousands of threads and process rows sort in
 * well under a millisecond, where qsort's callbacks took several.
 * Any thread; no state.
 */
#ifndef MEMTOP_KEYSORT_H
#define MEMTOP_KEYSORT_H

#include <stddef.h>
#include <stdint.h>

struct keysort_item {
	uint64_t hi;
	uint64_t lo;
	size_t index;		/* the caller's: where the item came from */
};

/* Sorts v[0..n) in place; 0, or -ENOMEM (v left as it was). */
int keysort(struct keysort_item *v, size_t n);

#endif
