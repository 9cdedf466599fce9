/*
 * A small hash map from 64-bit keys to pointers, for caches that only
 * grow and are cleared whole (names.c).  Open addressing, linear probing,
 * load at most 1/2.  Not thread-safe; whoever owns the map owns its
 * values (u64map_clear takes the function that frees them).
 */
#ifndef MEMTOP_U64MAP_H
#define MEMTOP_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map_slot {
	uint64_t key;
	void *value;		/* NULL = free slot */
};

struct u64map {
	struct u64map_slot *slots;
	size_t cap;		/* power of two, or 0 */
	size_t n;
};

/* A zeroed struct u64map is an empty map. */
void *u64map_get(const struct u64map *m, uint64_t key);
/* Inserts or replaces (value must not be NULL); returns the old value or
 * NULL; on ENOMEM returns value itself and leaves the map as it was. */
void *u64map_put(struct u64map *m, uint64_t key, void *value);
/* Calls free_value (may be NULL) on every value and empties the map,
 * releasing its memory.  NULL-safe and idempotent. */
void u64map_clear(struct u64map *m, void (*free_value)(void *));
size_t u64map_count(const struct u64map *m);

#endif
