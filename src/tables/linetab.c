/* Collector thread only.  See linetab.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "linetab.h"

_Static_assert(LINETAB_INDEX == 1u << LINETAB_INDEX_BITS, "index bits");
_Static_assert(LINETAB_SLOTS < 0xffff, "slot + 1 fits in 16 bits");
_Static_assert(LINETAB_LINES == 64, "a carry's place is slot << 6 | line");

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
	if (t)
		free(t->carry);
	free(t);
}

static uint32_t
linetab_carry_at(size_t slot, size_t line)
{
	return (uint32_t)(slot << 6 | line);
}

/* The carry of (slot, line), added when absent (NULL: no memory). */
static struct linetab_carry *
linetab_carry_get(struct linetab *t, uint32_t at)
{
	for (size_t i = 0; i < t->n_carry; i++)
		if (t->carry[i].at == at)
			return &t->carry[i];
	if (t->n_carry == t->carry_cap) {
		size_t cap = t->carry_cap ? 2 * t->carry_cap : 16;
		struct linetab_carry *c;

		if (t->carry_failed)
			return NULL;
		c = realloc(t->carry, cap * sizeof(*c));
		if (!c) {
			t->carry_failed = true;
			return NULL;
		}
		t->carry = c;
		t->carry_cap = cap;
	}
	t->carry[t->n_carry].at = at;
	t->carry[t->n_carry].wraps = 0;
	return &t->carry[t->n_carry++];
}

/* wraps more 64 Ki on (slot, line); without memory for it, the counter
 * stays at its largest value instead (the wraps lost: saturated). */
static void
linetab_carry_add(struct linetab *t, size_t slot, size_t line,
		  uint32_t wraps)
{
	struct linetab_carry *c;

	if (!wraps)
		return;
	c = linetab_carry_get(t, linetab_carry_at(slot, line));
	if (c) {
		c->wraps += wraps;
		return;
	}
	t->slots[slot].lines[line] = UINT16_MAX;
	t->saturated += wraps;
}

void
linetab_carry(struct linetab *t, struct linetab_slot *s, size_t line)
{
	linetab_carry_add(t, (size_t)(s - t->slots), line, 1);
}

/* The slot changes owner: its carries go. */
static void
linetab_carry_drop(struct linetab *t, size_t slot)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n_carry; i++)
		if (t->carry[i].at >> 6 != slot)
			t->carry[n++] = t->carry[i];
	t->n_carry = n;
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

	linetab_carry_drop(t, slot);
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
	linetab_count_line(t, s, linetab_line(t, addr));
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
		for (size_t l = 0; l < LINETAB_LINES; l++) {
			uint32_t v = (uint32_t)d->lines[l] + s->lines[l];

			d->lines[l] = (uint16_t)v;
			linetab_carry_add(dst, (size_t)(d - dst->slots), l,
					  v >> 16);
		}
		/* src's own carries of this slot. */
		for (size_t k = 0; k < src->n_carry; k++)
			if (src->carry[k].at >> 6 == i)
				linetab_carry_add(dst, (size_t)(d - dst->slots),
						  src->carry[k].at & 63,
						  src->carry[k].wraps);
	}
}

bool
linetab_get(const struct linetab *t, int32_t pid, uint64_t page,
	    uint32_t *out)
{
	const struct linetab_slot *s = linetab_find(t, pid, page);
	size_t slot;

	if (!s)
		return false;
	slot = (size_t)(s - t->slots);
	for (size_t l = 0; l < LINETAB_LINES; l++)
		out[l] = s->lines[l];
	for (size_t k = 0; k < t->n_carry; k++)
		if (t->carry[k].at >> 6 == slot)
			out[t->carry[k].at & 63] += t->carry[k].wraps << 16;
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
	t->n_carry = 0;
	t->carry_failed = false;
	t->saturated = 0;
	t->page_shift = page_shift;
}

size_t
linetab_count(const struct linetab *t)
{
	return t->n_used;
}

size_t
linetab_bytes(const struct linetab *t)
{
	return sizeof(*t) + t->carry_cap * sizeof(*t->carry);
}
