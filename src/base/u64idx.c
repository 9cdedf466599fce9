/* See u64idx.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "u64idx.h"

/* Puts a key known to be absent into a table with a free slot. */
static void
u64idx_place(uint64_t *keys, uint32_t *vals, size_t cap, uint64_t key,
	     uint32_t val)
{
	size_t s = u64idx_slot(key, cap);

	while (keys[s])
		s = (s + 1) & (cap - 1);
	keys[s] = key;
	vals[s] = val;
}

int
u64idx_reserve(struct u64idx *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 16;
	uint64_t *keys;
	uint32_t *vals;

	while (cap < 2 * (m->n + n))
		cap *= 2;
	if (cap == m->cap)
		return 0;
	keys = calloc(cap, sizeof(*keys));
	vals = calloc(cap, sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t s = 0; s < m->cap; s++)
		if (m->keys[s])
			u64idx_place(keys, vals, cap, m->keys[s], m->vals[s]);
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int
u64idx_add(struct u64idx *m, uint64_t key, uint32_t val)
{
	if (key == 0)
		return -EINVAL;
	if (u64idx_get(m, key) != U64IDX_NONE)
		return 0;
	if (u64idx_reserve(m, 1) < 0)
		return -ENOMEM;
	u64idx_place(m->keys, m->vals, m->cap, key, val);
	m->n++;
	return 1;
}

void
u64idx_fini(struct u64idx *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct u64idx){ 0 };
}
