/* Collector thread only.  See codetab.h. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "codetab.h"

/* Twice the capacity: linear probes stay short at the 50 % fill cap. */
#define CODETAB_SLOTS (CODETAB_CAPACITY * 2)

struct codetab *
codetab_new(void)
{
	struct codetab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->e = calloc(CODETAB_SLOTS, sizeof(*t->e));
	if (!t->e) {
		free(t);
		return NULL;
	}
	return t;
}

void
codetab_free(struct codetab *t)
{
	if (!t)
		return;
	free(t->e);
	free(t);
}

static size_t
codetab_hash(int32_t pid, uint64_t ip)
{
	uint64_t h = (ip ^ ((uint64_t)(uint32_t)pid << 44)) *
		     0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (CODETAB_SLOTS - 1);
}

/* codetab_add when the sample is not of the entry counted last in this
 * interval. */
void
codetab_add_slow(struct codetab *t, int32_t pid, uint64_t ip)
{
	struct codetab_entry *e;

	if (ip == 0) {
		t->interval.unknown++;
		return;
	}
	for (size_t i = codetab_hash(pid, ip);;
	     i = (i + 1) & (CODETAB_SLOTS - 1)) {
		e = &t->e[i];
		if (e->ip == ip && e->pid == pid)
			break;
		if (e->ip != 0)
			continue;
		if (t->n == CODETAB_CAPACITY) {
			t->interval.untracked++;
			return;
		}
		e->ip = ip;
		e->pid = pid;
		e->epoch = t->epoch;
		e->samples = 0;
		e->total = 0;
		t->n++;
		break;
	}
	if (e->epoch != t->epoch) {
		e->epoch = t->epoch;
		e->samples = 0;
	}
	e->samples++;
	e->total++;
	t->last = e;
}

void
codetab_next_interval(struct codetab *t)
{
	t->epoch++;
	t->cumulative.unknown += t->interval.unknown;
	t->cumulative.untracked += t->interval.untracked;
	memset(&t->interval, 0, sizeof(t->interval));
}

void
codetab_reset(struct codetab *t)
{
	memset(t->e, 0, CODETAB_SLOTS * sizeof(*t->e));
	t->last = NULL;
	t->n = 0;
	memset(&t->interval, 0, sizeof(t->interval));
	memset(&t->cumulative, 0, sizeof(t->cumulative));
}

void
codetab_foreach(const struct codetab *t,
		void (*fn)(const struct codetab_entry *e, uint64_t samples,
			   void *ctx),
		void *ctx)
{
	if (t->n == 0)
		return;
	for (size_t i = 0; i < CODETAB_SLOTS; i++) {
		const struct codetab_entry *e = &t->e[i];

		if (e->ip)
			fn(e, e->epoch == t->epoch ? e->samples : 0, ctx);
	}
}

size_t
codetab_count(const struct codetab *t)
{
	return t->n;
}

void
codetab_counts(const struct codetab *t, struct codetab_counts *interval,
	       struct codetab_counts *cumulative)
{
	*interval = t->interval;
	cumulative->unknown = t->cumulative.unknown + t->interval.unknown;
	cumulative->untracked = t->cumulative.untracked +
				t->interval.untracked;
}
