/* Any thread, one owner per map.  See u64map.h. */
#include "config.h"

#include <stdlib.h>

#include "u64map.h"

static size_t
u64map_hash(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

void *
u64map_get(const struct u64map *m, uint64_t key)
{
	if (m->cap == 0)
		return NULL;
	for (size_t i = u64map_hash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slots[i].value)
			return NULL;
		if (m->slots[i].key == key)
			return m->slots[i].value;
	}
}

static int
u64map_grow(struct u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct u64map_slot *s = calloc(cap, sizeof(*s));

	if (!s)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->slots[i].value)
			continue;
		j = u64map_hash(m->slots[i].key, cap);
		while (s[j].value)
			j = (j + 1) & (cap - 1);
		s[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = s;
	m->cap = cap;
	return 0;
}

void *
u64map_put(struct u64map *m, uint64_t key, void *value)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && u64map_grow(m) < 0)
		return value;
	for (i = u64map_hash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		void *old = m->slots[i].value;

		if (!old)
			break;
		if (m->slots[i].key == key) {
			m->slots[i].value = value;
			return old;
		}
	}
	m->slots[i].key = key;
	m->slots[i].value = value;
	m->n++;
	return NULL;
}

void
u64map_clear(struct u64map *m, void (*free_value)(void *))
{
	if (!m)
		return;
	for (size_t i = 0; free_value && i < m->cap; i++)
		if (m->slots[i].value)
			free_value(m->slots[i].value);
	free(m->slots);
	m->slots = NULL;
	m->cap = 0;
	m->n = 0;
}

size_t
u64map_count(const struct u64map *m)
{
	return m->n;
}
