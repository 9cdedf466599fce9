/* Collector thread only.  See codetab.h. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "codetab.h"

/* Slots are at most half full, so linear probes stay short (the table
 * doubles in codetab_insert, up to twice CODETAB_CAPACITY slots). */
#define CODETAB_MIN_BITS 10
#define CODETAB_MIN_SLOTS (1u << CODETAB_MIN_BITS)

/* Makes e, zeroed CODETAB_MIN_SLOTS slots, t's array (the old one is
 * the caller's to free). */
static void
codetab_use_min(struct codetab *t, struct codetab_entry *e)
{
	t->e = e;
	t->mask = CODETAB_MIN_SLOTS - 1;
	t->shift = 64 - CODETAB_MIN_BITS;
}

struct codetab *
codetab_new(void)
{
	struct codetab *t = calloc(1, sizeof(*t));
	struct codetab_entry *e = calloc(CODETAB_MIN_SLOTS, sizeof(*e));

	if (!t || !e) {
		free(t);
		free(e);
		return NULL;
	}
	codetab_use_min(t, e);
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

/* Twice the slots, every entry moved; -1 (table unchanged) on ENOMEM. */
static int
codetab_grow(struct codetab *t)
{
	size_t mask = t->mask * 2 + 1;
	struct codetab_entry *e = calloc(mask + 1, sizeof(*e));

	if (!e)
		return -1;
	for (size_t i = 0; i <= t->mask; i++) {
		size_t j;

		if (!t->e[i].ip)
			continue;
		for (j = codetab_hash(t->e[i].pid, t->e[i].ip,
				      t->shift - 1);
		     e[j].ip; j = (j + 1) & mask)
			;
		e[j] = t->e[i];
	}
	free(t->e);
	t->e = e;
	t->mask = mask;
	t->shift--;
	t->last = NULL;
	return 0;
}

/* The slot of (pid, ip): its entry, or the free slot where it goes. */
static struct codetab_entry *
codetab_probe(const struct codetab *t, int32_t pid, uint64_t ip)
{
	for (size_t i = codetab_hash(pid, ip, t->shift);;
	     i = (i + 1) & t->mask) {
		struct codetab_entry *e = &t->e[i];

		if ((e->ip == ip && e->pid == pid) || e->ip == 0)
			return e;
	}
}

/* A new entry for (pid, ip), which has none, in free slot e (the table
 * doubles first when it is half full); NULL (counted untracked) when
 * the table is full or cannot grow.  Out of line: once per code
 * address. */
static __attribute__((noinline)) struct codetab_entry *
codetab_insert(struct codetab *t, int32_t pid, uint64_t ip,
	       struct codetab_entry *e)
{
	if ((t->n + 1) * 2 > t->mask + 1) {
		if (t->n == CODETAB_CAPACITY || codetab_grow(t) < 0) {
			t->interval.untracked++;
			return NULL;
		}
		e = codetab_probe(t, pid, ip);
	}
	e->ip = ip;
	e->pid = pid;
	e->epoch = t->epoch;
	e->samples = 0;
	e->total = 0;
	t->n++;
	return e;
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
	e = codetab_probe(t, pid, ip);
	if (e->ip == 0 && !(e = codetab_insert(t, pid, ip, e)))
		return;
	if (e->epoch != t->epoch) {
		e->epoch = t->epoch;
		e->samples = 0;
	}
	e->samples++;
	e->total++;
	t->last = e;
}

void
codetab_merge(struct codetab *dst, const struct codetab *src)
{
	for (size_t i = 0; i <= src->mask; i++) {
		const struct codetab_entry *s = &src->e[i];
		struct codetab_entry *e;

		if (s->ip == 0 || s->epoch != src->epoch || !s->samples)
			continue;
		e = codetab_probe(dst, s->pid, s->ip);
		if (e->ip == 0 && !(e = codetab_insert(dst, s->pid, s->ip, e))) {
			/* One counted by codetab_insert. */
			dst->interval.untracked += s->samples - 1;
			continue;
		}
		if (e->epoch != dst->epoch) {
			e->epoch = dst->epoch;
			e->samples = 0;
		}
		e->samples += s->samples;
		e->total += s->samples;
	}
	dst->interval.unknown += src->interval.unknown;
	dst->interval.untracked += src->interval.untracked;
	dst->last = NULL;
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
	/* Back to the smallest table when there is memory for it (a table
	 * grown for a large run does not stay resident after it). */
	struct codetab_entry *e = calloc(CODETAB_MIN_SLOTS, sizeof(*e));

	if (e) {
		free(t->e);
		codetab_use_min(t, e);
	} else {
		memset(t->e, 0, (t->mask + 1) * sizeof(*t->e));
	}
	t->last = NULL;
	t->n = 0;
	memset(&t->interval, 0, sizeof(t->interval));
	memset(&t->cumulative, 0, sizeof(t->cumulative));
}

void
codetab_clear(struct codetab *t)
{
	memset(t->e, 0, (t->mask + 1) * sizeof(*t->e));
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
	for (size_t i = 0; i <= t->mask; i++) {
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

size_t
codetab_bytes(const struct codetab *t)
{
	return sizeof(*t) + (t->mask + 1) * sizeof(*t->e);
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
