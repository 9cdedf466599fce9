/* Collector thread only.  See sitetab.h. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sitetab.h"

/*
 * One page: 80 bytes.  An entry is free when used == 0.  rank[i] is
 * count[i] plus what slot i inherited when its ip took it.
 */
struct sitetab_entry {
	uint64_t page;
	int32_t pid;
	uint32_t used;		/* slots in use, 0..SITETAB_SITES */
	uint64_t ip[SITETAB_SITES];
	uint32_t count[SITETAB_SITES];
	uint32_t rank[SITETAB_SITES];
};

struct sitetab {
	struct sitetab_entry *e;	/* n_sets * SITETAB_WAYS */
	size_t n_sets;			/* power of two */
	uint64_t evicted;
};

struct sitetab *
sitetab_new(size_t max_pages)
{
	struct sitetab *t = calloc(1, sizeof(*t));
	size_t sets = 1;

	if (!t)
		return NULL;
	while (sets * SITETAB_WAYS < max_pages)
		sets <<= 1;
	t->n_sets = sets;
	/* calloc of a large block maps zero pages lazily: sets never used
	 * cost no memory. */
	t->e = calloc(sets * SITETAB_WAYS, sizeof(*t->e));
	if (!t->e) {
		free(t);
		return NULL;
	}
	return t;
}

void
sitetab_free(struct sitetab *t)
{
	if (!t)
		return;
	free(t->e);
	free(t);
}

static size_t
sitetab_set(const struct sitetab *t, int32_t pid, uint64_t page)
{
	uint64_t h = (page ^ ((uint64_t)(uint32_t)pid << 40)) *
		     0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (t->n_sets - 1);
}

static uint64_t
sitetab_weight(const struct sitetab_entry *e)
{
	uint64_t w = 0;

	for (uint32_t i = 0; i < e->used; i++)
		w += e->rank[i];
	return w;
}

/* The entry of (pid, page), claiming one when absent (evicting the set's
 * lightest page when the set is full). */
static struct sitetab_entry *
sitetab_claim(struct sitetab *t, int32_t pid, uint64_t page)
{
	struct sitetab_entry *set = &t->e[sitetab_set(t, pid, page) *
					  SITETAB_WAYS];
	struct sitetab_entry *victim = NULL;
	uint64_t vw = UINT64_MAX;

	/* A page that has its entry (nearly every sample) costs only the
	 * key compares; weights are summed only to pick a victim. */
	for (size_t w = 0; w < SITETAB_WAYS; w++)
		if (set[w].used && set[w].page == page && set[w].pid == pid)
			return &set[w];
	for (size_t w = 0; w < SITETAB_WAYS; w++) {
		struct sitetab_entry *e = &set[w];
		uint64_t ew;

		ew = e->used ? sitetab_weight(e) : 0;
		if (ew < vw) {
			vw = ew;
			victim = e;
		}
	}
	if (victim->used)
		t->evicted++;
	memset(victim, 0, sizeof(*victim));
	victim->page = page;
	victim->pid = pid;
	return victim;
}

/*
 * A sample (merge false: Space-Saving, the newcomer takes the weakest
 * slot and adds to its rank) or n samples of rank `rank` from a folded
 * page (merge true: they replace the weakest slot only if they outrank
 * it, and are otherwise left to sites_other).
 */
static void
sitetab_slot_add(struct sitetab_entry *e, uint64_t ip, uint32_t n,
		 uint32_t rank, bool merge)
{
	uint32_t min = 0;

	for (uint32_t i = 0; i < e->used; i++) {
		if (e->ip[i] == ip) {
			e->count[i] += n;
			e->rank[i] += rank;
			return;
		}
		if (e->rank[i] < e->rank[min])
			min = i;
	}
	if (e->used < SITETAB_SITES) {
		uint32_t i = e->used++;

		e->ip[i] = ip;
		e->count[i] = n;
		e->rank[i] = rank;
		return;
	}
	if (merge) {
		if (rank <= e->rank[min])
			return;
		e->rank[min] = rank;
	} else {
		e->rank[min] += rank;
	}
	e->ip[min] = ip;
	e->count[min] = n;
}

void
sitetab_add_n(struct sitetab *t, int32_t pid, uint64_t page, uint64_t ip,
	      uint32_t n, uint32_t inherit)
{
	if (ip == 0 || n == 0)
		return;
	sitetab_slot_add(sitetab_claim(t, pid, page), ip, n, n + inherit,
			 true);
}

void
sitetab_prefetch(const struct sitetab *t, int32_t pid, uint64_t page)
{
	const unsigned char *set = (const unsigned char *)
		&t->e[sitetab_set(t, pid, page) * SITETAB_WAYS];

	for (size_t off = 0; off < SITETAB_WAYS * sizeof(*t->e); off += 64)
		__builtin_prefetch(set + off, 1);
}

void
sitetab_add(struct sitetab *t, int32_t pid, uint64_t page, uint64_t ip)
{
	if (ip == 0)
		return;
	sitetab_slot_add(sitetab_claim(t, pid, page), ip, 1, 1, false);
}

static const struct sitetab_entry *
sitetab_find(const struct sitetab *t, int32_t pid, uint64_t page)
{
	const struct sitetab_entry *set = &t->e[sitetab_set(t, pid, page) *
						SITETAB_WAYS];

	for (size_t w = 0; w < SITETAB_WAYS; w++)
		if (set[w].used && set[w].page == page && set[w].pid == pid)
			return &set[w];
	return NULL;
}

size_t
sitetab_get(const struct sitetab *t, int32_t pid, uint64_t page,
	    struct sitetab_site *out)
{
	const struct sitetab_entry *e = sitetab_find(t, pid, page);
	size_t n;

	if (!e)
		return 0;
	n = e->used;
	for (size_t i = 0; i < n; i++) {
		out[i].ip = e->ip[i];
		out[i].count = e->count[i];
	}
	/* Insertion sort of at most SITETAB_SITES: count desc, ip asc. */
	for (size_t i = 1; i < n; i++) {
		struct sitetab_site s = out[i];
		size_t j = i;

		while (j > 0 && (out[j - 1].count < s.count ||
				 (out[j - 1].count == s.count &&
				  out[j - 1].ip > s.ip))) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = s;
	}
	return n;
}

void
sitetab_fold(struct sitetab *dst, const struct sitetab *src,
	     unsigned shift_delta)
{
	for (size_t i = 0; i < src->n_sets * SITETAB_WAYS; i++) {
		const struct sitetab_entry *e = &src->e[i];

		for (uint32_t k = 0; k < e->used; k++)
			sitetab_add_n(dst, e->pid, e->page >> shift_delta,
				      e->ip[k], e->count[k],
				      e->rank[k] - e->count[k]);
	}
	dst->evicted += src->evicted;
}

void
sitetab_reset(struct sitetab *t)
{
	size_t n = t->n_sets * SITETAB_WAYS;
	/* A fresh zeroed block instead of memset, which would make every
	 * page of the table resident. */
	struct sitetab_entry *e = calloc(n, sizeof(*e));

	if (e) {
		free(t->e);
		t->e = e;
	} else {
		memset(t->e, 0, n * sizeof(*t->e));
	}
	t->evicted = 0;
}

size_t
sitetab_capacity(const struct sitetab *t)
{
	return t->n_sets * SITETAB_WAYS;
}

uint64_t
sitetab_evicted(const struct sitetab *t)
{
	return t->evicted;
}
