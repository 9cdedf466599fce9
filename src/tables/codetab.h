/*
 * Samples per code address (pid, ip), for the frame's code view: which
 * functions cause the most samples.  Collector thread only.
 *
 * A hash table of at most CODETAB_CAPACITY entries that starts small and
 * doubles as entries come (an allocation per doubling, none per sample):
 * the entries of a few thousand code addresses then sit in a few pages
 * of memory instead of spread over the whole capacity, which cost a TLB
 * and cache miss a sample.  Interval counts reset lazily by epoch, like
 * pagetab.  Samples without an
 * ip count as `unknown`; samples of a new ip when the table is full count
 * as `untracked`; both reach the frame, so no sample leaves the code view
 * unaccounted.
 */
#ifndef MEMTOP_CODETAB_H
#define MEMTOP_CODETAB_H

#include <stddef.h>
#include <stdint.h>

#define CODETAB_CAPACITY 65536	/* distinct (pid, ip) */

struct codetab_entry {
	uint64_t ip;
	int32_t pid;
	uint32_t epoch;
	uint64_t samples;	/* this interval, when epoch is current */
	uint64_t total;		/* since reset */
};

struct codetab_counts {
	uint64_t unknown;	/* samples without an ip */
	uint64_t untracked;	/* table full */
};

struct codetab {
	struct codetab_entry *e;	/* ip 0 = free */
	size_t mask;			/* slots - 1 */
	unsigned shift;			/* 64 - log2(slots) */
	/* The entry counted last: a loop samples the same ip many times in
	 * a row.  NULL after reset. */
	struct codetab_entry *last;
	size_t n;
	uint32_t epoch;
	struct codetab_counts interval;
	struct codetab_counts cumulative;	/* before this interval */
};

struct codetab *codetab_new(void);		/* NULL on ENOMEM */
void codetab_free(struct codetab *t);		/* NULL-safe */

void codetab_add_slow(struct codetab *t, int32_t pid, uint64_t ip);

/* The slot where (pid, ip) starts probing in a table of 2^(64 - shift)
 * slots: the product's top bits, which every bit of the key reaches
 * (its middle bits, at a small table, put code addresses a fixed stride
 * apart into a few long runs). */
static inline size_t
codetab_hash(int32_t pid, uint64_t ip, unsigned shift)
{
	uint64_t h = (ip ^ ((uint64_t)(uint32_t)pid << 44)) *
		     0x9e3779b97f4a7c15ull;

	return (size_t)(h >> shift);
}

/* Tables of more slots than this (128 KiB) are prefetched: a smaller
 * one (a few thousand code addresses) stays in the cache anyway. */
#define CODETAB_PREFETCH_SLOTS 4096

/* Fetches the slot where (pid, ip) starts probing into the cache, a few
 * samples ahead of codetab_add (always_inline: see sides_prefetch). */
static inline __attribute__((always_inline)) void
codetab_prefetch(const struct codetab *t, int32_t pid, uint64_t ip)
{
	if (t->mask >= CODETAB_PREFETCH_SLOTS)
		__builtin_prefetch(&t->e[codetab_hash(pid, ip, t->shift)], 1);
}

/* One sample at (pid, ip); inline for a run of samples at one ip, and
 * for an ip counted this interval in its home slot (most of them: the
 * table is at most half full), so that a page's few code sites taking
 * turns cost no call. */
static inline void
codetab_add(struct codetab *t, int32_t pid, uint64_t ip)
{
	struct codetab_entry *e = t->last;

	if (e && e->ip == ip && e->pid == pid && e->epoch == t->epoch) {
		e->samples++;
		e->total++;
		return;
	}
	e = &t->e[codetab_hash(pid, ip, t->shift)];
	if (ip && e->ip == ip && e->pid == pid && e->epoch == t->epoch) {
		e->samples++;
		e->total++;
		t->last = e;
		return;
	}
	codetab_add_slow(t, pid, ip);
}
/* Adds src's interval (entries, unknown, untracked) to dst's. */
void codetab_merge(struct codetab *dst, const struct codetab *src);
void codetab_next_interval(struct codetab *t);
void codetab_reset(struct codetab *t);
/* The same at the size it has (sitetab_clear). */
void codetab_clear(struct codetab *t);

/* Calls fn for each entry with its interval count (0 when old). */
void codetab_foreach(const struct codetab *t,
		     void (*fn)(const struct codetab_entry *e,
				uint64_t samples, void *ctx),
		     void *ctx);
size_t codetab_count(const struct codetab *t);
/* Bytes the table holds (struct and slots). */
size_t codetab_bytes(const struct codetab *t);
/* This interval's and the cumulative unknown/untracked counts. */
void codetab_counts(const struct codetab *t, struct codetab_counts *interval,
		    struct codetab_counts *cumulative);

#endif
