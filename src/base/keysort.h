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

/* The keys of one item of an array keysort_array sorts. */
typedef void (*keysort_key_fn)(const void *item, const void *ctx,
			       uint64_t *hi, uint64_t *lo);

/* Sorts n items of size bytes at v by the keys key gives them (stable);
 * 0, or -ENOMEM (v left as it was: the caller may sort another way). */
int keysort_array(void *v, size_t n, size_t size, keysort_key_fn key,
		  const void *ctx);

#endif
