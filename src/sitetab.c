/* Collector thread only.  See sitetab.h. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pagetab.h"
#include "sitetab.h"

_Static_assert(sizeof(struct sitetab_rec) == 64,
	       "a page's sites are one cache line");
_Static_assert(SITETAB_WAYS == 4, "sitetab_add compares four keys");

/* calloc, aligned to a cache line by hand: calloc of a large block maps
 * zero pages lazily, so sets never used cost no memory (aligned_alloc
 * plus memset would make every page resident). */
static void *
sitetab_calloc(size_t n, size_t size, void **mem)
{
	unsigned char *p = calloc(n * size + 64, 1);

	*mem = p;
	if (!p)
		return NULL;
	return p + ((64 - ((uintptr_t)p & 63)) & 63);
}

static int
sitetab_alloc(struct sitetab *t)
{
	size_t n = t->n_sets * SITETAB_WAYS;
	void *km, *rm;
	uint64_t *k = sitetab_calloc(n, sizeof(*k), &km);
	struct sitetab_rec *r = sitetab_calloc(n, sizeof(*r), &rm);

	if (!k || !r) {
		free(km);
		free(rm);
		return -1;
	}
	free(t->key_mem);
	free(t->rec_mem);
	t->key = k;
	t->rec = r;
	t->key_mem = km;
	t->rec_mem = rm;
	return 0;
}

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
	if (sitetab_alloc(t) < 0) {
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
	free(t->key_mem);
	free(t->rec_mem);
	free(t);
}

static uint64_t
sitetab_weight(const struct sitetab_rec *r)
{
	uint64_t w = 0;

	for (uint32_t i = 0; i < SITETAB_SITES && r->ip[i]; i++)
		w += r->rank[i];
	return w;
}

/* The record of key, claiming one when absent (evicting the set's
 * lightest page when the set is full). */
struct sitetab_rec *
sitetab_claim(struct sitetab *t, uint64_t key, size_t set)
{
	size_t victim = set;
	uint64_t *k = &t->key[set];
	uint64_t vw = UINT64_MAX;

	/* A page that has its record (nearly every sample) costs only the
	 * key compares; weights are summed only to pick a victim. */
	for (size_t w = 0; w < SITETAB_WAYS; w++)
		if (k[w] == key)
			return &t->rec[set + w];
	for (size_t w = 0; w < SITETAB_WAYS; w++) {
		uint64_t ew = k[w] ? sitetab_weight(&t->rec[set + w]) : 0;

		if (ew < vw) {
			vw = ew;
			victim = set + w;
		}
	}
	if (t->key[victim])
		t->evicted++;
	t->key[victim] = key;
	memset(&t->rec[victim], 0, sizeof(t->rec[victim]));
	return &t->rec[victim];
}

/*
 * A sample (merge false: Space-Saving, the newcomer takes the weakest
 * slot and adds to its rank) or n samples of rank `rank` from a folded
 * page (merge true: they replace the weakest slot only if they outrank
 * it, and are otherwise left to sites_other).  ip != 0.
 */
static void
sitetab_slot_add(struct sitetab_rec *r, uint64_t ip, uint32_t n,
		 uint32_t rank, bool merge)
{
	uint32_t min = 0;

	/* The hit (nearly every sample of a page with few sites): four
	 * compares against one cache line.  Free slots hold 0 and never
	 * match. */
	for (uint32_t i = 0; i < SITETAB_SITES; i++) {
		if (r->ip[i] == ip) {
			r->count[i] += n;
			r->rank[i] += rank;
			return;
		}
	}
	for (uint32_t i = 0; i < SITETAB_SITES; i++) {
		if (r->ip[i] == 0) {
			r->ip[i] = ip;
			r->count[i] = n;
			r->rank[i] = rank;
			return;
		}
		if (r->rank[i] < r->rank[min])
			min = i;
	}
	if (merge) {
		if (rank <= r->rank[min])
			return;
		r->rank[min] = rank;
	} else {
		r->rank[min] += rank;
	}
	r->ip[min] = ip;
	r->count[min] = n;
}

void
sitetab_add_n(struct sitetab *t, int32_t pid, uint64_t page, uint64_t ip,
	      uint32_t n, uint32_t inherit)
{
	uint64_t key = sitetab_key(pid, page);

	if (ip == 0 || n == 0 || key == 0)
		return;
	sitetab_slot_add(sitetab_claim(t, key, sitetab_set(t, key)), ip, n,
			 n + inherit, true);
}

/* sitetab_slot_add of one sample (merge false) after sitetab_add found
 * no slot with ip.  (Testing the last slot first, to skip the free-slot
 * tests when all are taken, ran fewer instructions but took 8 % more CPU
 * time a sample in bench-ingest, faults-tp at 64 Ki pages.) */
void
sitetab_slot_miss(struct sitetab_rec *r, uint64_t ip)
{
	uint32_t min = 0;

	for (uint32_t i = 0; i < SITETAB_SITES; i++) {
		if (r->ip[i] == 0) {
			r->ip[i] = ip;
			r->count[i] = 1;
			r->rank[i] = 1;
			return;
		}
		if (r->rank[i] < r->rank[min])
			min = i;
	}
	r->rank[min]++;
	r->ip[min] = ip;
	r->count[min] = 1;
}

static const struct sitetab_rec *
sitetab_find(const struct sitetab *t, int32_t pid, uint64_t page)
{
	uint64_t key = sitetab_key(pid, page);
	size_t set = sitetab_set(t, key);

	if (key == 0)
		return NULL;
	for (size_t w = 0; w < SITETAB_WAYS; w++)
		if (t->key[set + w] == key)
			return &t->rec[set + w];
	return NULL;
}

size_t
sitetab_get(const struct sitetab *t, int32_t pid, uint64_t page,
	    struct sitetab_site *out)
{
	const struct sitetab_rec *r = sitetab_find(t, pid, page);
	size_t n = 0;

	if (!r)
		return 0;
	while (n < SITETAB_SITES && r->ip[n]) {
		out[n].ip = r->ip[n];
		out[n].count = r->count[n];
		n++;
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
		const struct sitetab_rec *r = &src->rec[i];
		uint64_t key = src->key[i];
		int32_t pid = (int32_t)(key >> PAGETAB_PAGE_BITS) - 1;
		uint64_t page = key & PAGETAB_PAGE_MASK;

		if (key == 0)
			continue;
		for (uint32_t k = 0; k < SITETAB_SITES && r->ip[k]; k++)
			sitetab_add_n(dst, pid, page >> shift_delta,
				      r->ip[k], r->count[k],
				      r->rank[k] - r->count[k]);
	}
	dst->evicted += src->evicted;
}

void
sitetab_reset(struct sitetab *t)
{
	/* Fresh zeroed blocks instead of memset, which would make every
	 * page of the table resident. */
	if (sitetab_alloc(t) < 0) {
		memset(t->key, 0,
		       t->n_sets * SITETAB_WAYS * sizeof(*t->key));
		memset(t->rec, 0,
		       t->n_sets * SITETAB_WAYS * sizeof(*t->rec));
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
