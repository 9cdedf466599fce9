/*
 * Page table: open addressing with linear probing, keyed by (pid, page),
 * entries stored inline.  Collector thread only; the UI never reads this
 * table, it gets frames.
 *
 * Layout.  The table is PAGETAB_SUBS subtables; the top bits of a key's
 * hash pick the subtable, the low 32 bits its home slot (range-reduced by
 * a multiply, so a capacity need not be a power of two).  A slot is one
 * struct page_entry (24 bytes, local/remote included) followed by the
 * weight extension when the table has it (stride = 24 or 32 bytes); key
 * 0 marks an empty slot.
 *
 * Growth (src/tables/pagetab_grow.c; the top-K scan is in
 * src/tables/pagetab_topk.c).
 * A subtable whose load would pass 7/8 is rebuilt into an array
 * 7/6 as large.  Only that subtable moves, so one insert never rehashes
 * more than 1/PAGETAB_SUBS of the table (at 10 Mi pages about 10 K
 * entries, a few hundred microseconds), and memory follows the page count
 * closely: between 24 / (7/8) = 27.4 and 24 * 7/6 / (7/8) = 32.0 bytes a
 * page at the base stride, with no moment where an old and a new copy of
 * the whole table coexist.  (A single array that doubles needs 2-3 times
 * the live data while it grows.)  Arrays of PAGETAB_MMAP_BYTES and more
 * come straight from mmap, rounded up to whole pages that the capacity
 * then fills, so freeing one returns it to the system at once.
 *
 * Counts.  kinds[] are u16 and saturate: a kind that reaches 65535 on one
 * page in one interval leaves its field there and continues, exactly, in
 * a side map keyed like the table (a handful of pages ever get there).
 * total (u16) and local/remote (12 bits) carry instead: from half their
 * range on, the side map may hold a base the field counts on from, and
 * the field's upper half takes the next samples inline again, so a hot
 * page costs one side-map update per 2048 (local/remote) or 32768 (total)
 * samples, and a read looks in the side map only for a field in its upper
 * half.  A local/remote base belongs to the interval it was made in.
 *
 * Interval counts are valid for the interval in the low 8 bits of ivl; so
 * that an entry idle for exactly 256 intervals cannot look current, every
 * interval zeroes the interval counts of PAGETAB_SWEEP subtables in turn,
 * which visits each one every PAGETAB_SUBS / PAGETAB_SWEEP = 256
 * intervals, by the time the epoch wraps.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pagetab_int.h"

/* Subtables whose interval counts each interval zeroes (see "Counts"). */
#define PAGETAB_SWEEP	(PAGETAB_SUBS / 256)

static size_t
pagetab_sub_bytes(const struct pagetab *t, const struct pagetab_sub *s)
{
	return s->mapped ? s->mapped : (size_t)s->cap * t->stride;
}

struct pagetab *
pagetab_new(unsigned page_shift, size_t max_pages)
{
	struct pagetab *t;

	if (page_shift >= 64) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	t->max_pages = max_pages;
	t->page_shift = page_shift;
	t->epoch = 1;
	pagetab_layout(0, &t->stride, &t->weight_off);
	return t;
}

static void
pagetab_free_arrays(struct pagetab *t)
{
	for (unsigned i = 0; i < PAGETAB_SUBS; i++) {
		struct pagetab_sub *s = &t->subs[i];

		if (s->slots)
			pagetab_array_free(s->slots, s->mapped);
		memset(s, 0, sizeof(*s));
	}
	free(t->ovf);
	t->ovf = NULL;
	t->ovf_cap = t->ovf_count = 0;
}

void
pagetab_free(struct pagetab *t)
{
	if (!t)
		return;
	pagetab_free_arrays(t);
	free(t);
}

unsigned
pagetab_page_shift(const struct pagetab *t)
{
	return t->page_shift;
}

unsigned
pagetab_ext(const struct pagetab *t)
{
	return t->ext;
}

unsigned
pagetab_weight_off(const struct pagetab *t)
{
	return t->weight_off;
}

/* Zeroes the interval counts of e (kinds, local, remote). */
static inline void
pagetab_clear_interval(struct page_entry *e)
{
	e->kinds[0] = e->kinds[1] = e->kinds[2] = 0;
	e->ivl &= PAGETAB_IVL_EPOCH;
}

static inline struct page_entry *
pagetab_find_hashed(const struct pagetab *t, uint64_t key, uint64_t hash)
{
	const struct pagetab_sub *s = pagetab_sub_of(t, hash);
	struct page_entry *e;

	if (!s->cap)
		return NULL;
	e = pagetab_probe(s->slots, s->cap, t->stride, hash, key);
	return e->key == key ? e : NULL;
}

static inline __attribute__((always_inline)) struct page_entry *
pagetab_get_hashed(struct pagetab *t, uint64_t key, uint64_t hash,
		   bool *inserted)
{
	struct pagetab_sub *s = pagetab_sub_of(t, hash);
	uint32_t epoch = t->epoch;
	struct page_entry *e = NULL;

	*inserted = false;
	if (s->cap) {
		e = pagetab_probe(s->slots, s->cap, t->stride, hash, key);
		if (e->key == key) {
			if (!pagetab_current(e, epoch)) {
				pagetab_clear_interval(e);
				e->ivl = epoch & PAGETAB_IVL_EPOCH;
			}
			return e;
		}
	}
	if (t->max_pages && t->count >= t->max_pages)
		return NULL;
	if (s->count >= s->grow_at) {
		/* Without a larger array, keep filling this one up to 15/16;
		 * past that probes get long and the insert is refused. */
		if (pagetab_sub_grow(t, s) != 0 &&
		    (!s->cap || s->count >= s->cap - s->cap / 16)) {
			errno = ENOMEM;
			return NULL;
		}
		e = pagetab_probe(s->slots, s->cap, t->stride, hash, key);
	}
	memset(e, 0, t->stride);
	e->key = key;
	e->node = PAGE_NODE_UNQUERIED;
	e->ivl = epoch & PAGETAB_IVL_EPOCH;
	s->count++;
	t->count++;
	*inserted = true;
	return e;
}

static void
pagetab_debug_check(const struct pagetab *t)
{
	if (MEMTOP_EXPENSIVE_CHECKS && pagetab_check(t) != 0)
		abort();
}

struct page_entry *
pagetab_get(struct pagetab *t, int32_t pid, uint64_t addr, bool *inserted)
{
	uint64_t key = pagetab_key(pid, addr >> t->page_shift);
	struct page_entry *e;
	bool ins;

	if (inserted)
		*inserted = false;
	if (key == 0)
		return NULL;
	e = pagetab_get_hashed(t, key, pagetab_hash(key), &ins);
	if (inserted)
		*inserted = ins;
	if (ins)
		pagetab_debug_check(t);
	return e;
}

/*
 * What pagetab_get_hashed_many keeps of a key served PAGETAB_PREFETCH
 * keys ahead: its home slot, fetched into the cache then, so that the
 * lookup starts there without computing it again (unless a subtable has
 * grown since: t->gen says).
 */
static inline unsigned char *
pagetab_home_slot(const struct pagetab *t, uint64_t hash)
{
	const struct pagetab_sub *s = pagetab_sub_of(t, hash);
	unsigned char *p;

	if (!s->cap)
		return NULL;
	p = s->slots + pagetab_home(s->cap, hash) * t->stride;
	__builtin_prefetch(p, 1);
	/* A slot may straddle two cache lines. */
	__builtin_prefetch(p + t->stride - 1, 1);
	return p;
}

/* pagetab_probe from the slot after e, a slot of hash's array that does
 * not hold key. */
static inline struct page_entry *
pagetab_probe_on(const struct pagetab *t, struct page_entry *e,
		 uint64_t hash, uint64_t key)
{
	const struct pagetab_sub *s = pagetab_sub_of(t, hash);
	unsigned char *p = (unsigned char *)e, *end;
	unsigned stride = t->stride;

	end = s->slots + (size_t)s->cap * stride;
	do {
		p += stride;
		if (p == end)
			p = s->slots;
		e = (struct page_entry *)p;
	} while (e->key != key && e->key != 0);
	return e;
}

/*
 * The rest of a lookup that did not find the key of the current
 * interval on its probe chain: a new interval's first touch, an insert,
 * an untrackable key (0).  Out of line: the loop keeps only the
 * common case.
 */
static __attribute__((noinline)) struct page_entry *
pagetab_get_rest(struct pagetab *t, uint64_t key, uint64_t hash,
		 bool *inserted)
{
	*inserted = false;
	if (!key)
		return NULL;
	return pagetab_get_hashed(t, key, hash, inserted);
}

/* pagetab_get_many's work once the keys (0: untrackable) and their
 * hashes are known; n <= PAGETAB_MANY. */
static void
pagetab_get_hashed_many(struct pagetab *t, const uint64_t *keys,
			uint64_t *hashes, size_t n,
			struct page_entry **out, bool *inserted)
{
	size_t moved = 0;	/* keys before this may have moved */
	uint64_t gen = t->gen;
	uint32_t epoch = t->epoch;
	unsigned char *home[PAGETAB_MANY + PAGETAB_PREFETCH];

	if (n == 0)
		return;
	/* Hashes past the last repeat the first, so that the loop fetches
	 * ahead without asking whether there is a key there. */
	for (size_t i = n; i < n + PAGETAB_PREFETCH; i++)
		hashes[i] = hashes[0];
	for (size_t i = 0; i < PAGETAB_PREFETCH; i++)
		home[i] = pagetab_home_slot(t, hashes[i]);
	for (size_t i = 0; i < n; i++) {
		struct page_entry *e = (struct page_entry *)home[i];
		bool ins;

		home[i + PAGETAB_PREFETCH] = pagetab_home_slot(t,
				hashes[i + PAGETAB_PREFETCH]);
		/* An empty slot holds key 0, the untrackable key: hence
		 * the test of the key itself. */
		if (__builtin_expect(e && keys[i], 1)) {
			if (e->key != keys[i])
				e = pagetab_probe_on(t, e, hashes[i], keys[i]);
			if (__builtin_expect(e->key == keys[i] &&
					     pagetab_current(e, epoch), 1)) {
				out[i] = e;
				inserted[i] = false;
				continue;
			}
		}
		out[i] = pagetab_get_rest(t, keys[i], hashes[i], &ins);
		inserted[i] = ins;
		/* Only an insert grows a subtable, moving the entries of the
		 * keys served before this one and the home slots fetched
		 * for those after it. */
		if (ins && t->gen != gen) {
			gen = t->gen;
			moved = i;
			for (size_t j = i + 1; j <= i + PAGETAB_PREFETCH; j++)
				home[j] = pagetab_home_slot(t, hashes[j]);
		}
	}
	for (size_t i = 0; i < moved; i++)
		if (out[i])
			out[i] = pagetab_find_hashed(t, keys[i], hashes[i]);
	pagetab_debug_check(t);
}

void
pagetab_get_many(struct pagetab *t, const int32_t *pid, const uint64_t *addr,
		 size_t n, struct page_entry **out, bool *inserted)
{
	uint64_t keys[PAGETAB_MANY], hashes[PAGETAB_MANY + PAGETAB_PREFETCH];
	bool ins[PAGETAB_MANY];

	if (n > PAGETAB_MANY) {
		size_t last = (n - 1) % PAGETAB_MANY + 1;
		uint64_t gen0;

		/* In pieces; each piece fixes its own pointers, and those of
		 * the earlier pieces are found again if a later one moved
		 * entries (rare: callers batch PAGETAB_MANY at most). */
		pagetab_get_many(t, pid, addr, PAGETAB_MANY, out, inserted);
		gen0 = t->gen;
		for (size_t i = PAGETAB_MANY; i < n; i += PAGETAB_MANY)
			pagetab_get_many(t, pid + i, addr + i,
					 n - i < PAGETAB_MANY ? n - i :
					 PAGETAB_MANY, out + i,
					 inserted ? inserted + i : NULL);
		for (size_t i = 0; gen0 != t->gen && i < n - last; i++)
			if (out[i])
				out[i] = pagetab_find(t, pid[i],
						      addr[i] >> t->page_shift);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		keys[i] = pagetab_key(pid[i], addr[i] >> t->page_shift);
		hashes[i] = pagetab_hash(keys[i]);
	}
	pagetab_get_hashed_many(t, keys, hashes, n, out,
				inserted ? inserted : ins);
}

void
pagetab_get_samples(struct pagetab *t, const struct sample *s, size_t n,
		    struct page_entry **out, bool *inserted)
{
	uint64_t keys[PAGETAB_MANY], hashes[PAGETAB_MANY + PAGETAB_PREFETCH];
	bool ins[PAGETAB_MANY];
	unsigned shift = t->page_shift;

	for (size_t i = 0; i < n; i++) {
		keys[i] = pagetab_key(s[i].pid, s[i].addr >> shift);
		hashes[i] = pagetab_hash(keys[i]);
	}
	pagetab_get_hashed_many(t, keys, hashes, n, out,
				inserted ? inserted : ins);
}

struct page_entry *
pagetab_find(struct pagetab *t, int32_t pid, uint64_t page)
{
	uint64_t key = pagetab_key(pid, page);

	return key ? pagetab_find_hashed(t, key, pagetab_hash(key)) : NULL;
}

bool
pagetab_key_peek(const struct pagetab *t, uint64_t key, uint32_t *total)
{
	const struct page_entry *e =
		pagetab_find_hashed(t, key, pagetab_hash(key));

	*total = e ? e->total : 0;
	return e && pagetab_current(e, t->epoch);
}

void
pagetab_next_interval(struct pagetab *t)
{
	t->epoch++;
	/* No entry belongs to the new interval yet: zero the interval
	 * counts of the next PAGETAB_SWEEP subtables, so that none survives
	 * the 8-bit wrap. */
	for (unsigned j = 0; j < PAGETAB_SWEEP; j++) {
		struct pagetab_sub *s = &t->subs[(t->epoch * PAGETAB_SWEEP +
						  j) % PAGETAB_SUBS];

		for (uint32_t i = 0; i < s->cap; i++)
			pagetab_clear_interval(pagetab_at(s->slots, t->stride,
							  i));
	}
}

uint32_t
pagetab_epoch(const struct pagetab *t)
{
	return t->epoch;
}

void
pagetab_reset(struct pagetab *t)
{
	pagetab_free_arrays(t);
	t->count = 0;
	t->gen++;
}

size_t
pagetab_count(const struct pagetab *t)
{
	return t->count;
}

size_t
pagetab_max_pages(const struct pagetab *t)
{
	return t->max_pages;
}

size_t
pagetab_capacity(const struct pagetab *t)
{
	size_t cap = 0;

	for (unsigned i = 0; i < PAGETAB_SUBS; i++)
		cap += t->subs[i].cap;
	return cap;
}

size_t
pagetab_bytes(const struct pagetab *t)
{
	size_t bytes = sizeof(*t) + t->ovf_cap * sizeof(*t->ovf);

	for (unsigned i = 0; i < PAGETAB_SUBS; i++)
		bytes += pagetab_sub_bytes(t, &t->subs[i]);
	return bytes;
}

int
pagetab_foreach(struct pagetab *t,
		int (*fn)(struct page_entry *e, void *ctx), void *ctx)
{
	for (unsigned j = 0; j < PAGETAB_SUBS; j++) {
		struct pagetab_sub *s = &t->subs[j];

		for (uint32_t i = 0; i < s->cap; i++) {
			struct page_entry *e = pagetab_at(s->slots,
							  t->stride, i);
			int rc;

			/* As in the top-K scan (pagetab_topk.c). */
			__builtin_prefetch((const unsigned char *)e + 1024);
			if (e->key == 0)
				continue;
			rc = fn(e, ctx);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/*
 * Every live entry must sit in the subtable its hash names and be the
 * first match on the probe chain from its home slot (reachable, no
 * duplicate before it); each subtable must keep an empty slot and count
 * its entries right, and the counts must add up to `count`.
 */
int
pagetab_check(const struct pagetab *t)
{
	size_t live_all = 0;

	for (unsigned j = 0; j < PAGETAB_SUBS; j++) {
		const struct pagetab_sub *s = &t->subs[j];
		size_t live = 0;

		if (!s->cap) {
			if (s->count || s->slots)
				return -EINVAL;
			continue;
		}
		for (uint32_t i = 0; i < s->cap; i++) {
			struct page_entry *e = pagetab_at(s->slots, t->stride,
							  i);
			uint64_t h;

			if (e->key == 0)
				continue;
			h = pagetab_hash(e->key);
			if (pagetab_sub_of(t, h) != s ||
			    pagetab_probe(s->slots, s->cap, t->stride, h,
					  e->key) != e)
				return -EINVAL;
			live++;
		}
		if (live != s->count || live >= s->cap)
			return -EINVAL;
		live_all += live;
	}
	if (live_all != t->count)
		return -EINVAL;
	if (t->max_pages && t->count > t->max_pages)
		return -EINVAL;
	return 0;
}
