/* Collector thread only.  See sitetab.h. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pagetab.h"
#include "sitetab.h"

_Static_assert(sizeof(struct sitetab_rec) == 64,
	       "a page's sites are one cache line");

/* From this size on a table is mapped on its own, 2 MiB-aligned, and
 * asked for transparent huge pages (where the system grants them on
 * madvise): a table of 256 Ki pages is 16 MiB, and in 4 KiB pages every
 * sample's record would be a TLB miss of its own (issue 15).  memtop's
 * tables stop at 1 MiB (src/aggr/sides.h); a larger capacity still
 * takes this path. */
#define SITETAB_HUGE_BYTES	(4u << 20)
#define SITETAB_HUGE_ALIGN	(2u << 20)
/* The most weight a page inherits: ranks are 32-bit and still count. */
#define SITETAB_INHERIT_MAX	(1u << 30)

/* calloc, aligned to a pair of cache lines by hand (a way and the one
 * beside it share the pair the hardware fetches together): calloc of a
 * large block maps zero pages lazily, so sets never used cost no memory
 * (aligned_alloc plus memset would make every page resident).  Large
 * tables: a zeroed mapping of their own (*len its length; 0 for calloc). */
static void *
sitetab_calloc(size_t n, size_t size, void **mem, size_t *len)
{
	size_t bytes = n * size;
	unsigned char *p;

	*len = 0;
	if (bytes >= SITETAB_HUGE_BYTES) {
		p = mmap(NULL, bytes + SITETAB_HUGE_ALIGN,
			 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		*mem = p == MAP_FAILED ? NULL : p;
		if (!*mem)
			return NULL;
		*len = bytes + SITETAB_HUGE_ALIGN;
		p += (SITETAB_HUGE_ALIGN -
		      ((uintptr_t)p & (SITETAB_HUGE_ALIGN - 1))) &
		     (SITETAB_HUGE_ALIGN - 1);
		/* Best effort: without huge pages it works as before. */
		(void)madvise(p, bytes, MADV_HUGEPAGE);
		return p;
	}
	p = calloc(bytes + 128, 1);
	*mem = p;
	if (!p)
		return NULL;
	return p + ((128 - ((uintptr_t)p & 127)) & 127);
}

static void
sitetab_mem_free(void *mem, size_t len)
{
	if (len)
		munmap(mem, len);
	else
		free(mem);
}

static int
sitetab_alloc(struct sitetab *t)
{
	void *rm;
	size_t len;
	struct sitetab_rec *r = sitetab_calloc(t->n_sets * SITETAB_WAYS,
					       sizeof(*r), &rm, &len);

	if (!r)
		return -1;
	sitetab_mem_free(t->rec_mem, t->rec_len);
	t->rec = r;
	t->rec_mem = rm;
	t->rec_len = len;
	return 0;
}

static size_t
sitetab_first_sets(const struct sitetab *t)
{
	return t->max_sets < SITETAB_FIRST_SETS ? t->max_sets :
						  SITETAB_FIRST_SETS;
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
	t->max_sets = sets;
	t->room_sets = sets;
	t->n_sets = sitetab_first_sets(t);
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
	sitetab_mem_free(t->rec_mem, t->rec_len);
	sitetab_mem_free(t->old_mem, t->old_len);
	free(t);
}

static uint64_t
sitetab_ip(const struct sitetab_rec *r, unsigned i)
{
	uint64_t v = (uint64_t)r->ip_hi[i] << 32 | r->ip_lo[i];

	return (uint64_t)((int64_t)(v << 16) >> 16);
}

static bool
sitetab_slot_used(const struct sitetab_rec *r, unsigned i)
{
	return r->ip_lo[i] != 0 || r->ip_hi[i] != 0;
}

static void
sitetab_slot_set(struct sitetab_rec *r, unsigned i, uint64_t ip)
{
	r->ip_lo[i] = (uint32_t)ip;
	r->ip_hi[i] = (uint16_t)(ip >> 32);
}

static uint64_t
sitetab_weight(const struct sitetab_rec *r)
{
	uint64_t w = 0;

	for (unsigned i = 0; i < SITETAB_SITES; i++)
		w += r->rank[i];
	return w;
}

/* The way of set (its first record) where key goes: its home way when
 * free, else the first free one (there is one). */
static struct sitetab_rec *
sitetab_free_way(struct sitetab *t, uint64_t key)
{
	size_t home = sitetab_home(t, key);

	for (size_t w = 0; w < SITETAB_WAYS; w++) {
		struct sitetab_rec *r = &t->rec[home ^ w];

		if (r->key == 0)
			return r;
	}
	return NULL;
}

/* Moves the pages of old set i to sets 2i and 2i + 1 of the table (the
 * set is the hash's top bits): at most SITETAB_WAYS pages, and nothing
 * else is in those two sets yet (sitetab_claim moves a key's old set
 * before it puts a page there), so none overflows. */
static void
sitetab_move_set(struct sitetab *t, size_t i)
{
	struct sitetab_rec *o = &t->old[i * SITETAB_WAYS];

	for (size_t w = 0; w < SITETAB_WAYS; w++) {
		if (o[w].key == 0)
			continue;
		*sitetab_free_way(t, o[w].key) = o[w];
		o[w].key = 0;
	}
}

/* Moves n more old sets in order (SIZE_MAX: all); frees the old table
 * once it is empty. */
static void
sitetab_move(struct sitetab *t, size_t n)
{
	while (t->old && n--) {
		sitetab_move_set(t, t->moved++);
		if (t->moved == t->old_sets) {
			sitetab_mem_free(t->old_mem, t->old_len);
			t->old = NULL;
			t->old_mem = NULL;
			t->old_len = 0;
		}
	}
}

/*
 * Doubles the table.  Pages move from the old table a few sets at a time
 * (sitetab_claim: SITETAB_MOVE_SETS a claim, and a key's own set before
 * it is claimed), so no sample pays for the whole table: at 256 Ki pages
 * a doubling at once cost 20-50 ms.  false when the table is at its
 * room or the allocation fails (then it stays as it is).
 */
static bool
sitetab_grow(struct sitetab *t)
{
	void *rm;
	size_t len;
	struct sitetab_rec *r;

	if (t->n_sets >= t->room_sets || t->grow_failed)
		return false;
	r = sitetab_calloc(t->n_sets * 2 * SITETAB_WAYS, sizeof(*r), &rm,
			   &len);
	if (!r) {
		t->grow_failed = true;
		return false;
	}
	/* A doubling still moving finishes first (rare: the table must be
	 * half used again, SITETAB_MOVE_SETS sets a claim, before it grows
	 * on load). */
	sitetab_move(t, SIZE_MAX);
	t->old = t->rec;
	t->old_mem = t->rec_mem;
	t->old_len = t->rec_len;
	t->old_sets = t->n_sets;
	t->moved = 0;
	t->rec = r;
	t->rec_mem = rm;
	t->rec_len = len;
	t->n_sets *= 2;
	t->grown++;
	return true;
}

/* The record of key, whose home way holds another page (or none): the
 * way beside it (on the same 128-byte pair of lines, which the prefetch
 * of the home way often brings along) or another way of the set that
 * has it, else a free way (the same order), else the set's lightest
 * page's, evicted if admit_displace says so (else NULL).  A page found
 * away from home that outweighs the page at home swaps places with it,
 * so the pages with most samples, which take most lookups, are found at
 * home (where sitetab_add_key and sitetab_prefetch_mixed look first). */
struct sitetab_rec *
sitetab_claim(struct sitetab *t, uint64_t key, size_t home, uint32_t total)
{
	size_t victim = home;
	size_t order[SITETAB_WAYS] = { home, home ^ 1, home ^ 2, home ^ 3 };
	struct sitetab_rec *h = &t->rec[home];
	uint64_t vw = UINT64_MAX;

	if (t->old) {
		size_t i = home / SITETAB_WAYS / 2;

		/* key's old set first (its page may be there), then more. */
		if (i >= t->moved)
			sitetab_move_set(t, i);
		sitetab_move(t, SITETAB_MOVE_SETS);
		if (h->key == key)
			return h;
	}
	for (size_t w = 1; w < SITETAB_WAYS; w++) {
		struct sitetab_rec *r = &t->rec[order[w]], tmp;

		if (r->key != key)
			continue;
		if (sitetab_weight(r) <= sitetab_weight(h))
			return r;
		tmp = *h;
		*h = *r;
		*r = tmp;
		return h;
	}
	/* A free way, in the same order, while the table is under half
	 * used; else a larger table, if it may grow.  (Half used: a
	 * refusal below feeds the bar, admit.h.) */
	bool crowded = t->n_used * 2 >= t->n_sets * SITETAB_WAYS;
	if (!crowded) {
		for (size_t w = 0; w < SITETAB_WAYS; w++) {
			struct sitetab_rec *r = &t->rec[order[w]];

			if (r->key == 0) {
				r->key = key;
				t->n_used++;
				return r;
			}
		}
	}
	if (sitetab_grow(t))
		return sitetab_claim(t, key, sitetab_home(t, key), total);
	/* At full size.  Weights are summed only to pick a victim; a free
	 * way weighs 0 and is taken first. */
	for (size_t w = 0; w < SITETAB_WAYS; w++) {
		const struct sitetab_rec *r = &t->rec[order[w]];
		uint64_t ew = r->key ? sitetab_weight(r) : 0;

		if (ew < vw) {
			vw = ew;
			victim = order[w];
		}
		if (ew == 0)
			break;
	}
	if (t->rec[victim].key) {
		if (!admit_displace(&t->admit, total, vw,
				    t->rec[victim].key, crowded))
			return NULL;
		t->evicted++;
	} else {
		t->n_used++;
	}
	memset(&t->rec[victim], 0, sizeof(t->rec[victim]));
	t->rec[victim].key = key;
	/* Space-Saving by page: the newcomer inherits the weight of the
	 * page it displaced, spread evenly over its slots' ranks (a free
	 * slot's rank is added to when the slot is taken), so no slot is
	 * pinned by it and the sites within the page compete as before.
	 * Without it a page that comes late into a set of heavier pages is
	 * the set's lightest at once, and the next newcomer displaces it: a
	 * page hot now never got sites behind pages that were hot earlier. */
	if (vw > SITETAB_INHERIT_MAX)
		vw = SITETAB_INHERIT_MAX;
	for (unsigned i = 0; i < SITETAB_SITES; i++)
		t->rec[victim].rank[i] = (uint32_t)(vw / SITETAB_SITES);
	t->rec[victim].rank[0] += (uint32_t)(vw % SITETAB_SITES);
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

	for (unsigned i = 0; i < SITETAB_SITES; i++) {
		if (sitetab_slot_used(r, i) && sitetab_ip(r, i) == ip) {
			r->count[i] += n;
			r->rank[i] += rank;
			return;
		}
	}
	for (unsigned i = 0; i < SITETAB_SITES; i++) {
		if (!sitetab_slot_used(r, i)) {
			sitetab_slot_set(r, i, ip);
			r->count[i] = n;
			r->rank[i] += rank;	/* 0, or inherited */
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
	sitetab_slot_set(r, min, ip);
	r->count[min] = n;
}

void
sitetab_add_n(struct sitetab *t, int32_t pid, uint64_t page, uint64_t ip,
	      uint32_t n, uint32_t inherit)
{
	uint64_t key = sitetab_key(pid, page);
	size_t home;
	struct sitetab_rec *r;

	if (ip == 0 || n == 0 || key == 0 || !sitetab_ip_fits(ip))
		return;
	home = sitetab_home(t, key);
	r = &t->rec[home];
	if (r->key != key)
		r = sitetab_claim(t, key, home, ADMIT_TOTAL_ANY);
	sitetab_slot_add(r, ip, n, n + inherit, true);
}

/* sitetab_slot_add of one sample (merge false) after sitetab_add found
 * no slot with ip.  The free slots are tested even when all are taken:
 * testing the last slot first to skip them runs fewer instructions but
 * costs more CPU time a sample (bench/bench-ingest.c). */
void
sitetab_slot_miss(struct sitetab_rec *r, uint64_t ip)
{
	uint32_t min = 0;

	for (unsigned i = 0; i < SITETAB_SITES; i++) {
		if (!sitetab_slot_used(r, i)) {
			sitetab_slot_set(r, i, ip);
			r->count[i] = 1;
			r->rank[i]++;		/* from 0, or inherited */
			return;
		}
		if (r->rank[i] < r->rank[min])
			min = i;
	}
	r->rank[min]++;
	sitetab_slot_set(r, min, ip);
	r->count[min] = 1;
}

static const struct sitetab_rec *
sitetab_find(const struct sitetab *t, int32_t pid, uint64_t page)
{
	uint64_t key = sitetab_key(pid, page);
	size_t set;

	if (key == 0)
		return NULL;
	set = sitetab_home(t, key) & ~(size_t)(SITETAB_WAYS - 1);
	for (size_t w = 0; w < SITETAB_WAYS; w++)
		if (t->rec[set + w].key == key)
			return &t->rec[set + w];
	/* Not moved yet from the table before the last doubling. */
	set = set / 2 & ~(size_t)(SITETAB_WAYS - 1);
	for (size_t w = 0; t->old && w < SITETAB_WAYS; w++)
		if (t->old[set + w].key == key)
			return &t->old[set + w];
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
	while (n < SITETAB_SITES && sitetab_slot_used(r, (unsigned)n)) {
		out[n].ip = sitetab_ip(r, (unsigned)n);
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
	size_t n = src->n_sets * SITETAB_WAYS;
	size_t n_old = src->old ? src->old_sets * SITETAB_WAYS : 0;

	/* Every page of both tables (a page is in one of them). */
	for (size_t i = 0; i < n + n_old; i++) {
		const struct sitetab_rec *r = i < n ? &src->rec[i] :
						      &src->old[i - n];
		uint64_t key = r->key;
		int32_t pid = (int32_t)(key >> PAGETAB_PAGE_BITS) - 1;
		uint64_t page = key & PAGETAB_PAGE_MASK;
		uint32_t base = UINT32_MAX;

		if (key == 0)
			continue;
		/* What every slot inherited alike (a displaced page's weight,
		 * sitetab_claim) is the page's, not a site's: it does not
		 * follow the sites into dst, where it would outrank its
		 * sites. */
		for (unsigned k = 0; k < SITETAB_SITES &&
				     sitetab_slot_used(r, k); k++)
			if (r->rank[k] - r->count[k] < base)
				base = r->rank[k] - r->count[k];
		for (unsigned k = 0; k < SITETAB_SITES &&
				     sitetab_slot_used(r, k); k++)
			sitetab_add_n(dst, pid, page >> shift_delta,
				      sitetab_ip(r, k), r->count[k],
				      r->rank[k] - r->count[k] - base);
	}
	dst->evicted += src->evicted;
}

void
sitetab_reset(struct sitetab *t)
{
	size_t sets = t->n_sets;

	/* A fresh zeroed block at the first size instead of memset, which
	 * would make every page of the table resident; the old size when
	 * that allocation fails. */
	t->n_sets = sitetab_first_sets(t);
	if (sitetab_alloc(t) < 0) {
		t->n_sets = sets;
		memset(t->rec, 0,
		       t->n_sets * SITETAB_WAYS * sizeof(*t->rec));
	}
	sitetab_mem_free(t->old_mem, t->old_len);
	t->old = NULL;
	t->old_mem = NULL;
	t->old_len = 0;
	t->n_used = 0;
	t->evicted = 0;
	admit_clear(&t->admit);
	t->grown = 0;
	t->grow_failed = false;
}

void
sitetab_clear(struct sitetab *t)
{
	if (t->old) {
		sitetab_reset(t);
		return;
	}
	memset(t->rec, 0, t->n_sets * SITETAB_WAYS * sizeof(*t->rec));
	t->n_used = 0;
	t->evicted = 0;
	admit_clear(&t->admit);
	t->grown = 0;
	t->grow_failed = false;
}

size_t
sitetab_capacity(const struct sitetab *t)
{
	return t->max_sets * SITETAB_WAYS;
}

void
sitetab_set_room(struct sitetab *t, size_t pages)
{
	size_t sets = pagetab_side_room_sets(sitetab_first_sets(t),
					     t->max_sets, pages);

	/* Room to grow again: new pages take free ways, not a bar. */
	if (sets > t->room_sets && sets > t->n_sets)
		admit_clear(&t->admit);
	t->room_sets = sets;
}

size_t
sitetab_slots(const struct sitetab *t)
{
	return t->n_sets * SITETAB_WAYS;
}

size_t
sitetab_used(const struct sitetab *t)
{
	return t->n_used;
}

size_t
sitetab_bytes(const struct sitetab *t)
{
	return sizeof(*t) + (t->n_sets + (t->old ? t->old_sets : 0)) *
				    SITETAB_WAYS * sizeof(struct sitetab_rec);
}

uint64_t
sitetab_evicted(const struct sitetab *t)
{
	return t->evicted;
}
