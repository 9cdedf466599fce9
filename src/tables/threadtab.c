/*
 * Per-thread sample counts: open addressing with linear probing by tid,
 * entries inline, plain doubling (thousands of threads at most).
 * Collector thread only.
 *
 * A slot is empty when its epoch is 0; the table's epoch starts at 1 and
 * skips 0 when it wraps.  Keyed by tid alone because tids are unique
 * system-wide while the thread lives; a tid reused by another process
 * keeps its counts and takes the newest pid.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "keysort.h"
#include "threadtab.h"

#define THREADTAB_MIN_SLOTS	64

struct threadtab {
	struct thread_entry *slots;
	size_t mask;		/* number of slots - 1; a power of two - 1 */
	size_t count;
	uint32_t epoch;		/* never 0 */
	/* The entry added to last: a ring holds one thread's samples, so
	 * runs of the same tid are the rule.  NULL after growth or reset. */
	struct thread_entry *last;
};

static inline size_t
threadtab_slot(int32_t tid, size_t mask)
{
	/* Fibonacci hashing: the high half of the product is well mixed
	 * even for consecutive tids. */
	return (size_t)(((uint64_t)(uint32_t)tid * 0x9e3779b97f4a7c15ull) >>
			32) & mask;
}

/* Slot holding tid, or the empty slot ending its probe chain. */
static struct thread_entry *
threadtab_probe(struct thread_entry *slots, size_t mask, int32_t tid)
{
	size_t i = threadtab_slot(tid, mask);

	while (slots[i].epoch != 0 && slots[i].tid != tid)
		i = (i + 1) & mask;
	return &slots[i];
}

struct threadtab *
threadtab_new(void)
{
	struct threadtab *t = calloc(1, sizeof(*t));

	if (!t)
		goto out_err;
	t->slots = calloc(THREADTAB_MIN_SLOTS, sizeof(*t->slots));
	if (!t->slots)
		goto out_free;
	t->mask = THREADTAB_MIN_SLOTS - 1;
	t->epoch = 1;
	return t;

out_free:
	free(t);
out_err:
	errno = ENOMEM;
	return NULL;
}

void
threadtab_free(struct threadtab *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}

static int
threadtab_grow(struct threadtab *t)
{
	size_t new_mask = t->mask * 2 + 1;
	struct thread_entry *slots;

	if (new_mask + 1 > SIZE_MAX / sizeof(*slots))
		return -ENOMEM;
	slots = calloc(new_mask + 1, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i].epoch != 0)
			*threadtab_probe(slots, new_mask, t->slots[i].tid) =
				t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->mask = new_mask;
	t->last = NULL;
	return 0;
}

int
threadtab_add(struct threadtab *t, int32_t pid, int32_t tid, uint64_t n)
{
	struct thread_entry *e = t->last;
	int rc;

	if (e && e->tid == tid && e->epoch == t->epoch) {
		e->pid = pid;
		e->samples += n;
		e->total += n;
		return 0;
	}
	e = threadtab_probe(t->slots, t->mask, tid);

	if (e->epoch == 0) {
		/* Load stays <= 3/4. */
		if ((t->count + 1) * 4 > (t->mask + 1) * 3) {
			rc = threadtab_grow(t);
			if (rc)
				return rc;
			e = threadtab_probe(t->slots, t->mask, tid);
		}
		memset(e, 0, sizeof(*e));
		e->tid = tid;
		e->epoch = t->epoch;
		t->count++;
	} else if (e->epoch != t->epoch) {
		e->epoch = t->epoch;
		e->samples = 0;
	}
	e->pid = pid;
	e->samples += n;
	e->total += n;
	t->last = e;
	return 0;
}

void
threadtab_next_interval(struct threadtab *t)
{
	if (++t->epoch == 0)
		t->epoch = 1;
}

void
threadtab_reset(struct threadtab *t)
{
	memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
	t->count = 0;
	t->last = NULL;
}

size_t
threadtab_count(const struct threadtab *t)
{
	return t->count;
}

static int
threadtab_cmp(const void *pa, const void *pb)
{
	const struct thread_entry *a = pa, *b = pb;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return 0;
}

static void
threadtab_key(const void *item, const void *ctx, uint64_t *hi, uint64_t *lo)
{
	const struct thread_entry *e = item;

	(void)ctx;
	*hi = UINT64_MAX - e->samples;
	*lo = (uint64_t)((int64_t)e->tid - INT32_MIN);
}

/* Most samples first, then by tid: a radix sort (keysort.h) for a whole
 * machine's thousands, qsort when it has no memory. */
static void
threadtab_sort(struct thread_entry *v, size_t n)
{
	if (keysort_array(v, n, sizeof(*v), threadtab_key, NULL) < 0)
		qsort(v, n, sizeof(*v), threadtab_cmp);
}

struct thread_entry *
threadtab_snapshot(const struct threadtab *t, size_t *n)
{
	struct thread_entry *out;
	size_t used = 0;

	*n = 0;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i].epoch == t->epoch && t->slots[i].samples)
			used++;
	if (used == 0)
		return NULL;
	out = malloc(used * sizeof(*out));
	if (!out) {
		*n = SIZE_MAX;
		return NULL;
	}
	used = 0;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i].epoch == t->epoch && t->slots[i].samples)
			out[used++] = t->slots[i];
	threadtab_sort(out, used);
	*n = used;
	return out;
}
