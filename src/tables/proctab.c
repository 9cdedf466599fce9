/*
 * Process table: open addressing with linear probing over pointers to
 * rows, by pid; deletion shifts the rest of a probe chain back, so there
 * are no tombstones.  Plain doubling at 3/4 load (at most `max` rows).
 * Collector thread only.  See proctab.h.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proctab.h"

#define PROCTAB_MIN_SLOTS 64

struct proctab {
	struct proc_entry **slots;
	size_t mask;		/* slots - 1, a power of two - 1 */
	size_t count;
	size_t max;
	int n_nodes;
	struct proc_entry *sink;
};

static size_t
proctab_entry_size(int n_nodes)
{
	return sizeof(struct proc_entry) +
	       ((size_t)n_nodes + 1) * sizeof(uint64_t);
}

static inline size_t
proctab_home(int32_t pid, size_t mask)
{
	return (size_t)(((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ull) >>
			32) & mask;
}

/* The slot holding pid, or the empty slot ending its chain. */
static size_t
proctab_probe(struct proc_entry *const *slots, size_t mask, int32_t pid)
{
	size_t i = proctab_home(pid, mask);

	while (slots[i] && slots[i]->pid != pid)
		i = (i + 1) & mask;
	return i;
}

struct proctab *
proctab_new(int n_nodes, size_t max)
{
	struct proctab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->n_nodes = n_nodes > 0 ? n_nodes : 1;
	t->max = max ? max : 1;
	t->slots = calloc(PROCTAB_MIN_SLOTS, sizeof(*t->slots));
	t->sink = calloc(1, proctab_entry_size(t->n_nodes));
	if (!t->slots || !t->sink) {
		proctab_free(t);
		return NULL;
	}
	t->mask = PROCTAB_MIN_SLOTS - 1;
	t->sink->pid = -1;
	return t;
}

static void
proctab_free_entry(struct proc_entry *e)
{
	if (e) {
		free(e->cgroup);
		free(e);
	}
}

void
proctab_free(struct proctab *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->slots && i <= t->mask; i++)
		proctab_free_entry(t->slots[i]);
	free(t->slots);
	free(t->sink);
	free(t);
}

static int
proctab_grow(struct proctab *t)
{
	size_t mask = t->mask * 2 + 1;
	struct proc_entry **slots = calloc(mask + 1, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i])
			slots[proctab_probe(slots, mask, t->slots[i]->pid)] =
				t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->mask = mask;
	return 0;
}

struct proc_entry *
proctab_get(struct proctab *t, int32_t pid, bool *inserted)
{
	size_t i = proctab_probe(t->slots, t->mask, pid);
	struct proc_entry *e;

	if (inserted)
		*inserted = false;
	if (t->slots[i])
		return t->slots[i];
	if (t->count >= t->max)
		return t->sink;
	if ((t->count + 1) * 4 > (t->mask + 1) * 3) {
		if (proctab_grow(t) < 0)
			return t->sink;
		i = proctab_probe(t->slots, t->mask, pid);
	}
	e = calloc(1, proctab_entry_size(t->n_nodes));
	if (!e)
		return t->sink;
	e->pid = pid;
	t->slots[i] = e;
	t->count++;
	if (inserted)
		*inserted = true;
	return e;
}

struct proc_entry *
proctab_find(struct proctab *t, int32_t pid)
{
	return t->slots[proctab_probe(t->slots, t->mask, pid)];
}

struct proc_entry *
proctab_sink(struct proctab *t)
{
	return t->sink;
}

void
proctab_remove(struct proctab *t, int32_t pid)
{
	size_t i = proctab_probe(t->slots, t->mask, pid), j = i;

	if (!t->slots[i])
		return;
	proctab_free_entry(t->slots[i]);
	t->slots[i] = NULL;
	t->count--;
	/* Backward shift: a later entry of the chain whose home is not
	 * between the hole and it moves into the hole. */
	for (;;) {
		size_t home;

		j = (j + 1) & t->mask;
		if (!t->slots[j])
			break;
		home = proctab_home(t->slots[j]->pid, t->mask);
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		t->slots[i] = t->slots[j];
		t->slots[j] = NULL;
		i = j;
	}
}

void
proctab_foreach(struct proctab *t,
		void (*fn)(struct proc_entry *e, void *ctx), void *ctx)
{
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i])
			fn(t->slots[i], ctx);
}

int32_t *
proctab_pids(const struct proctab *t, size_t *n)
{
	int32_t *pids;
	size_t k = 0;

	*n = 0;
	if (!t->count)
		return NULL;
	pids = malloc(t->count * sizeof(*pids));
	if (!pids)
		return NULL;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i])
			pids[k++] = t->slots[i]->pid;
	*n = k;
	return pids;
}

/* The interval counts of e zeroed, after they went into its total when
 * keep is set. */
static void
proctab_clear(struct proc_entry *e, int n_nodes, bool keep)
{
	if (keep)
		e->total += proctab_samples(e);
	else
		e->total = 0;
	memset(e->kinds, 0, sizeof(e->kinds));
	memset(e->lr, 0, sizeof(e->lr));
	memset(e->nodes, 0, ((size_t)n_nodes + 1) * sizeof(e->nodes[0]));
}

void
proctab_next_interval(struct proctab *t)
{
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i])
			proctab_clear(t->slots[i], t->n_nodes, true);
	proctab_clear(t->sink, t->n_nodes, true);
}

void
proctab_reset(struct proctab *t)
{
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i])
			proctab_clear(t->slots[i], t->n_nodes, false);
	proctab_clear(t->sink, t->n_nodes, false);
}

size_t
proctab_count(const struct proctab *t)
{
	return t->count;
}

size_t
proctab_max(const struct proctab *t)
{
	return t->max;
}

int
proctab_n_nodes(const struct proctab *t)
{
	return t->n_nodes;
}
