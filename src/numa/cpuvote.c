#include "config.h"

/*
 * Per-page CPU-node majority vote.  See cpuvote.h.
 *
 * Open addressing with linear probing over a power-of-two array; grows
 * (rehash) at 1/2 load; entries are never deleted, only forgotten all at
 * once by cpuvote_reset().  An entry's vote belongs to interval `epoch`;
 * one from an older interval reads as no vote and restarts on its next
 * sample, so starting an interval costs nothing.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpuvote.h"

#define CPUVOTE_MIN_SLOTS 1024u

struct cpuvote_entry {
	uint64_t page;
	int32_t pid;		/* 0 = empty slot (no process has pid 0) */
	uint32_t epoch;
	int16_t cand[2];	/* surviving node indexes */
	uint16_t count[2];	/* their leads; 0 = free counter */
};

struct cpuvote {
	struct cpuvote_entry *slots;
	size_t mask;		/* slots - 1 */
	size_t count;
	size_t max_pages;
	uint32_t epoch;
};

static size_t
cpuvote_hash(int32_t pid, uint64_t page)
{
	uint64_t h = page * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)pid *
		     0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ (h >> 29));
}

struct cpuvote *
cpuvote_new(size_t max_pages)
{
	struct cpuvote *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->slots = calloc(CPUVOTE_MIN_SLOTS, sizeof(*v->slots));
	if (!v->slots) {
		free(v);
		return NULL;
	}
	v->mask = CPUVOTE_MIN_SLOTS - 1;
	v->max_pages = max_pages;
	v->epoch = 1;
	return v;
}

void
cpuvote_free(struct cpuvote *v)
{
	if (!v)
		return;
	free(v->slots);
	free(v);
}

static struct cpuvote_entry *
cpuvote_probe(struct cpuvote_entry *slots, size_t mask, int32_t pid,
	      uint64_t page)
{
	size_t i = cpuvote_hash(pid, page) & mask;

	while (slots[i].pid != 0 &&
	       (slots[i].pid != pid || slots[i].page != page))
		i = (i + 1) & mask;
	return &slots[i];
}

static int
cpuvote_grow(struct cpuvote *v)
{
	size_t n = (v->mask + 1) * 2;
	struct cpuvote_entry *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i <= v->mask; i++)
		if (v->slots[i].pid != 0)
			*cpuvote_probe(slots, n - 1, v->slots[i].pid,
				       v->slots[i].page) = v->slots[i];
	free(v->slots);
	v->slots = slots;
	v->mask = n - 1;
	return 0;
}

/* Misra-Gries with two counters: a node holding more than a third of the
 * samples always keeps a counter. */
static void
cpuvote_count_one(struct cpuvote_entry *e, int16_t node)
{
	for (int i = 0; i < 2; i++) {
		if (e->count[i] && e->cand[i] == node) {
			if (e->count[i] < UINT16_MAX)
				e->count[i]++;
			return;
		}
	}
	for (int i = 0; i < 2; i++) {
		if (e->count[i] == 0) {
			e->cand[i] = node;
			e->count[i] = 1;
			return;
		}
	}
	e->count[0]--;
	e->count[1]--;
}

int
cpuvote_add(struct cpuvote *v, int32_t pid, uint64_t page, int node_idx)
{
	struct cpuvote_entry *e;

	if (pid == 0 || node_idx < 0 || node_idx > INT16_MAX)
		return -EINVAL;
	e = cpuvote_probe(v->slots, v->mask, pid, page);
	if (e->pid == 0) {
		if (v->max_pages && v->count >= v->max_pages)
			return -ENOSPC;
		if ((v->count + 1) * 2 > v->mask + 1) {
			if (cpuvote_grow(v) < 0)
				return -ENOMEM;
			e = cpuvote_probe(v->slots, v->mask, pid, page);
		}
		e->pid = pid;
		e->page = page;
		e->count[0] = e->count[1] = 0;
		v->count++;
	}
	if (e->epoch != v->epoch) {
		e->epoch = v->epoch;
		e->count[0] = e->count[1] = 0;
	}
	cpuvote_count_one(e, (int16_t)node_idx);
	return 0;
}

int
cpuvote_top(const struct cpuvote *v, int32_t pid, uint64_t page)
{
	const struct cpuvote_entry *e;

	if (!v || pid == 0)
		return -1;
	e = cpuvote_probe(v->slots, v->mask, pid, page);
	if (e->pid == 0 || e->epoch != v->epoch)
		return -1;
	if (e->count[0] == 0 && e->count[1] == 0)
		return -1;	/* every vote cancelled out: no leader */
	return e->count[1] > e->count[0] ? e->cand[1] : e->cand[0];
}

void
cpuvote_next_interval(struct cpuvote *v)
{
	if (v)
		v->epoch++;
}

void
cpuvote_reset(struct cpuvote *v)
{
	if (!v)
		return;
	memset(v->slots, 0, (v->mask + 1) * sizeof(*v->slots));
	v->count = 0;
	v->epoch++;
}

size_t
cpuvote_count(const struct cpuvote *v)
{
	return v ? v->count : 0;
}
