/*
 * A hash index from nonzero 64-bit keys to 32-bit values: the event of a
 * perf event id, looked up per record by the perf.data reader and writer.
 * Open addressing, linear probing, at most half full; keys are never
 * removed.  Not thread-safe; a zeroed struct u64idx is empty.
 */
#ifndef MEMTOP_U64IDX_H
#define MEMTOP_U64IDX_H

#include <stddef.h>
#include <stdint.h>

#define U64IDX_NONE UINT32_MAX

struct u64idx {
	uint64_t *keys;		/* 0 = free slot */
	uint32_t *vals;
	size_t cap;		/* power of two, or 0 */
	size_t n;
};

/* The key's bits mixed (a multiply alone would leave keys that differ
 * only in their high bits in one slot), then the table's share. */
static inline size_t
u64idx_slot(uint64_t key, size_t cap)
{
	key ^= key >> 31;
	key *= UINT64_C(0x9e3779b97f4a7c15);
	key ^= key >> 29;
	return (size_t)key & (cap - 1);
}

/* The value stored for key, or U64IDX_NONE.  Inline: per record. */
static inline uint32_t
u64idx_get(const struct u64idx *m, uint64_t key)
{
	if (key == 0 || m->cap == 0)
		return U64IDX_NONE;
	for (size_t s = u64idx_slot(key, m->cap); m->keys[s];
	     s = (s + 1) & (m->cap - 1))
		if (m->keys[s] == key)
			return m->vals[s];
	return U64IDX_NONE;
}

/* Room for n more keys without another allocation.  0 or -ENOMEM. */
int u64idx_reserve(struct u64idx *m, size_t n);
/* Stores key -> val unless key is there already (the first value stays).
 * 1 stored, 0 already there, -EINVAL for key 0, -ENOMEM. */
int u64idx_add(struct u64idx *m, uint64_t key, uint32_t val);
/* Frees the index; it is empty again.  Idempotent. */
void u64idx_fini(struct u64idx *m);

#endif
