/* Collector thread only.  See linetab.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "linetab.h"

_Static_assert(LINETAB_INDEX == 1u << LINETAB_INDEX_BITS, "index bits");
_Static_assert(LINETAB_SLOTS < 0xffff, "slot + 1 fits in 16 bits");

struct linetab *
linetab_new(unsigned page_shift)
{
	struct linetab *t = calloc(1, sizeof(*t));

	if (t)
		t->page_shift = page_shift;
	return t;
}

void
linetab_free(struct linetab *t)
{
	free(t);
}

static struct linetab_slot *
linetab_find_h(const struct linetab *t, int32_t pid, uint64_t page,
	       uint64_t h)
{
	uint32_t tag = linetab_tag(h);

	for (size_t i = linetab_pos(h);; i = (i + 1) & (LINETAB_INDEX - 1)) {
		uint32_t v = t->index[i];
		const struct linetab_slot *s;

		if (v == 0)
			return NULL;
		if ((v & 0xffff0000u) != tag)
			continue;
		s = &t->slots[(v & 0xffff) - 1];
		if (s->page == page && s->pid == pid)
			return (struct linetab_slot *)s;
	}
}

static struct linetab_slot *
linetab_find(const struct linetab *t, int32_t pid, uint64_t page)
{
	return linetab_find_h(t, pid, page, linetab_hash(pid, page));
}

static void
linetab_index_insert(struct linetab *t, size_t slot)
{
	uint64_t h = linetab_hash(t->slots[slot].pid, t->slots[slot].page);
	size_t i = linetab_pos(h);

	while (t->index[i])
		i = (i + 1) & (LINETAB_INDEX - 1);
	t->index[i] = linetab_tag(h) | (uint32_t)(slot + 1);
	linetab_filter_set(t, h);
}

static struct linetab_slot *
linetab_take(struct linetab *t, size_t slot, int32_t pid, uint64_t page)
{
	struct linetab_slot *s = &t->slots[slot];

	memset(s, 0, sizeof(*s));
	s->page = page;
	s->pid = pid;
	s->used = true;
	return s;
}

void
linetab_add_slow(struct linetab *t, int32_t pid, uint64_t addr, uint64_t h)
{
	uint64_t page = addr >> t->page_shift;
	struct linetab_slot *s = linetab_find_h(t, pid, page, h);

	if (!s) {
		if (t->n_used == LINETAB_SLOTS)
			return;
		s = linetab_take(t, t->n_used, pid, page);
		linetab_index_insert(t, t->n_used++);
	}
	s->lines[linetab_line(t, addr)]++;
}

void
linetab_merge(struct linetab *dst, const struct linetab *src)
{
	if (dst->page_shift != src->page_shift)
		return;
	for (size_t i = 0; i < src->n_used; i++) {
		const struct linetab_slot *s = &src->slots[i];
		struct linetab_slot *d = linetab_find(dst, s->pid, s->page);

		if (!d) {
			if (dst->n_used == LINETAB_SLOTS)
				continue;
			d = linetab_take(dst, dst->n_used, s->pid, s->page);
			linetab_index_insert(dst, dst->n_used++);
		}
		for (int l = 0; l < LINETAB_LINES; l++)
			d->lines[l] += s->lines[l];
	}
}

bool
linetab_get(const struct linetab *t, int32_t pid, uint64_t page,
	    uint32_t *out)
{
	const struct linetab_slot *s = linetab_find(t, pid, page);

	if (!s)
		return false;
	memcpy(out, s->lines, sizeof(s->lines));
	return true;
}

void
linetab_want(struct linetab *t, const struct linetab_key *keys, size_t n)
{
	size_t victim = 0;
	bool moved = false;

	if (n > LINETAB_SLOTS / 2)
		n = LINETAB_SLOTS / 2;
	for (size_t i = 0; i < t->n_used; i++)
		t->slots[i].wanted = false;
	for (size_t k = 0; k < n; k++) {
		struct linetab_slot *s = linetab_find(t, keys[k].pid,
						      keys[k].page);

		if (s)
			s->wanted = true;
	}
	for (size_t k = 0; k < n; k++) {
		struct linetab_slot *s = linetab_find(t, keys[k].pid,
						      keys[k].page);

		if (s)
			continue;
		if (t->n_used < LINETAB_SLOTS) {
			s = linetab_take(t, t->n_used, keys[k].pid,
					 keys[k].page);
			linetab_index_insert(t, t->n_used++);
		} else {
			/* At most n < LINETAB_SLOTS slots are wanted. */
			while (t->slots[victim].wanted)
				victim++;
			s = linetab_take(t, victim, keys[k].pid,
					 keys[k].page);
			moved = true;
		}
		s->wanted = true;
	}
	if (!moved)
		return;
	memset(t->index, 0, sizeof(t->index));
	memset(t->filter, 0, sizeof(t->filter));
	for (size_t i = 0; i < t->n_used; i++)
		linetab_index_insert(t, i);
}

void
linetab_reset(struct linetab *t, unsigned page_shift)
{
	memset(t->slots, 0, sizeof(t->slots));
	memset(t->index, 0, sizeof(t->index));
	memset(t->filter, 0, sizeof(t->filter));
	t->n_used = 0;
	t->page_shift = page_shift;
}

size_t
linetab_count(const struct linetab *t)
{
	return t->n_used;
}
