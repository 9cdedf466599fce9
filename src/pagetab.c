/*
 * Page table: open addressing with linear probing, keyed by (pid, page),
 * entries stored inline.  Collector thread only; the UI never reads this
 * table, it gets frames.
 *
 * A slot is empty when its epoch is 0.  The table's epoch starts at 1 and
 * skips 0 when it wraps, so a live entry never has epoch 0.  The slot
 * arrays come straight from mmap, whose zero pages are empty slots: a new
 * array costs no up-front clearing, only a page fault per 4 KiB on first
 * touch.  Transparent huge pages are not requested: zeroing a 2 MiB page
 * in one fault is a millisecond-scale stall on a VM, and measured warm
 * lookups gained little.
 *
 * Growth is incremental.  When an insert would pass the load limit, a
 * twice larger array becomes `slots` and the previous one becomes
 * `old_slots`.  Every later insert moves the next PAGETAB_MIGRATE_SLOTS
 * slots of the old array, in index order, into the new one, so no insert
 * rehashes more than a handful of entries.  Until the old array is drained:
 *   - old slots below `old_pos` hold stale copies that stay in place, so
 *     the probe chains of the old entries not yet moved remain intact;
 *   - a key lives in exactly one place: `slots`, or `old_slots` at an
 *     index >= old_pos;
 *   - lookups try `slots` first and `old_slots` second; a key found in the
 *     old array is therefore one not yet moved;
 *   - new keys always go to `slots`.
 * One old array holds at most 0.7 * C entries for C old slots, and the new
 * array's limit is 1.4 * C, so moving >= 2 slots per insert always drains
 * the old array before the next growth is due.
 *
 * The old array is also unmapped piecemeal, so that tearing down a
 * gigabyte at the end never stalls one insert.  An old key not yet moved
 * sits at s >= old_pos, and its probe chain [home, s] lies in one run of
 * occupied slots.  Unless the chain wraps past the array's end, that run
 * starts at or after the start of the run holding old_pos, so every slot
 * below that start is dead: [old_keep, old_released) is unmapped, in
 * pieces, up to it.  Wrapping chains end before the first empty slot,
 * which is why the pieces start after it (at old_keep).  A lookup whose
 * home lies in (first empty, old_released) is known absent from the old
 * array and does not touch it; every other probe stays in mapped slots,
 * since it ends at the latest at the first empty slot.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pagetab.h"

#define PAGETAB_MIN_SLOTS	256
#define PAGETAB_MIGRATE_SLOTS	8
/* Load limit: count <= slots * 7 / 10. */
#define PAGETAB_LOAD_NUM	7
#define PAGETAB_LOAD_DEN	10
/* Old arrays go back in pieces of this size; reset drops the pages of
 * arrays at least this large instead of writing zeroes. */
#define PAGETAB_RELEASE_BYTES	(1u << 20)
#define PAGETAB_RELEASE_SLOTS	(PAGETAB_RELEASE_BYTES / \
				 sizeof(struct page_entry))

struct pagetab {
	struct page_entry *slots;
	size_t mask;		/* number of slots - 1; a power of two - 1 */
	struct page_entry *old_slots;	/* NULL unless migrating */
	size_t old_mask;
	size_t old_pos;		/* old slots below this have been moved */
	size_t old_first_empty;	/* first empty old slot */
	size_t old_keep;	/* old slots from here to old_released */
	size_t old_released;	/* are unmapped */
	size_t count;		/* distinct keys, old and new arrays together */
	size_t grow_at;		/* count that triggers the next growth */
	size_t max_pages;	/* 0 = unlimited */
	unsigned page_shift;
	uint32_t epoch;		/* never 0 */
};

/*
 * The pid is spread over all 64 bits by the golden-ratio multiplier before
 * the splitmix64 finaliser, a bijection whose every output bit depends on
 * every input bit; consecutive pages therefore land on unrelated slots and
 * the low bits can index the array directly.
 */
static inline uint64_t
pagetab_hash(int32_t pid, uint64_t page)
{
	uint64_t x = page + (uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ull;

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static size_t
pagetab_array_bytes(size_t mask)
{
	return (mask + 1) * sizeof(struct page_entry);
}

static struct page_entry *
pagetab_array_map(size_t mask)
{
	size_t bytes = pagetab_array_bytes(mask);
	void *p;

	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void
pagetab_array_unmap(struct page_entry *slots, size_t mask)
{
	if (slots)
		munmap(slots, pagetab_array_bytes(mask));
}

static size_t
pagetab_grow_limit(size_t mask)
{
	return (mask + 1) / PAGETAB_LOAD_DEN * PAGETAB_LOAD_NUM;
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
	if (!t)
		goto out_err;
	t->mask = PAGETAB_MIN_SLOTS - 1;
	t->slots = pagetab_array_map(t->mask);
	if (!t->slots)
		goto out_free;
	t->grow_at = pagetab_grow_limit(t->mask);
	t->max_pages = max_pages;
	t->page_shift = page_shift;
	t->epoch = 1;
	return t;

out_free:
	free(t);
out_err:
	errno = ENOMEM;
	return NULL;
}

void
pagetab_free(struct pagetab *t)
{
	if (!t)
		return;
	pagetab_array_unmap(t->old_slots, t->old_mask);
	pagetab_array_unmap(t->slots, t->mask);
	free(t);
}

unsigned
pagetab_page_shift(const struct pagetab *t)
{
	return t->page_shift;
}

/*
 * Slot holding (pid, page) in `slots`, or the empty slot that ends its
 * probe chain.  Terminates because every array keeps empty slots.
 */
static inline struct page_entry *
pagetab_probe(struct page_entry *slots, size_t mask, uint64_t hash,
	      int32_t pid, uint64_t page)
{
	size_t i = hash & mask;

	for (;;) {
		struct page_entry *e = &slots[i];

		if (e->epoch == 0 || (e->page == page && e->pid == pid))
			return e;
		i = (i + 1) & mask;
	}
}

static inline struct page_entry *
pagetab_lookup(const struct pagetab *t, uint64_t hash, int32_t pid,
	       uint64_t page, struct page_entry **empty)
{
	struct page_entry *e;

	e = pagetab_probe(t->slots, t->mask, hash, pid, page);
	if (e->epoch != 0)
		return e;
	*empty = e;
	if (t->old_slots) {
		size_t home = hash & t->old_mask;
		struct page_entry *o;

		if (t->old_released > t->old_keep &&
		    home > t->old_first_empty && home < t->old_released)
			return NULL;
		o = pagetab_probe(t->old_slots, t->old_mask, hash, pid, page);
		if (o->epoch != 0)
			return o;
	}
	return NULL;
}

/* Moves a key known to be absent from `slots` into it. */
static void
pagetab_place(struct page_entry *slots, size_t mask,
	      const struct page_entry *src)
{
	size_t i = pagetab_hash(src->pid, src->page) & mask;

	while (slots[i].epoch != 0)
		i = (i + 1) & mask;
	slots[i] = *src;
}

/* Unmaps whole pieces of the old array that no lookup can reach. */
static void
pagetab_release(struct pagetab *t)
{
	size_t run, upto;

	if (t->old_pos < t->old_released + PAGETAB_RELEASE_SLOTS)
		return;
	/* Slots below old_released may be gone; stopping there only makes
	 * the run look shorter, which releases less. */
	for (run = t->old_pos; run > t->old_released &&
	     t->old_slots[run - 1].epoch != 0; run--)
		;
	upto = run - run % PAGETAB_RELEASE_SLOTS;
	if (upto <= t->old_released)
		return;
	/* On failure the pages just stay until the final unmap. */
	if (munmap(t->old_slots + t->old_released,
		   (upto - t->old_released) * sizeof(struct page_entry)) == 0)
		t->old_released = upto;
}

static void
pagetab_migrate(struct pagetab *t, size_t n_slots)
{
	size_t end = t->old_pos + n_slots;

	if (end > t->old_mask + 1 || end < t->old_pos)
		end = t->old_mask + 1;
	for (size_t i = t->old_pos; i < end; i++)
		if (t->old_slots[i].epoch != 0)
			pagetab_place(t->slots, t->mask, &t->old_slots[i]);
	t->old_pos = end;
	if (end == t->old_mask + 1) {
		pagetab_array_unmap(t->old_slots, t->old_mask);
		t->old_slots = NULL;
		t->old_mask = 0;
		t->old_pos = 0;
	} else {
		pagetab_release(t);
	}
}

/* 0 or -ENOMEM; on failure the table is unchanged. */
static int
pagetab_grow(struct pagetab *t)
{
	size_t new_mask = t->mask * 2 + 1;
	struct page_entry *new_slots;

	if (new_mask < t->mask ||
	    pagetab_array_bytes(new_mask) / 2 != pagetab_array_bytes(t->mask))
		return -ENOMEM;
	/* Cannot happen at the migration rate above; kept as a safety net. */
	if (t->old_slots)
		pagetab_migrate(t, SIZE_MAX);
	new_slots = pagetab_array_map(new_mask);
	if (!new_slots)
		return -ENOMEM;
	t->old_slots = t->slots;
	t->old_mask = t->mask;
	t->old_pos = 0;
	t->old_first_empty = 0;
	while (t->old_slots[t->old_first_empty].epoch != 0)
		t->old_first_empty++;
	t->old_keep = t->old_first_empty + PAGETAB_RELEASE_SLOTS -
		      t->old_first_empty % PAGETAB_RELEASE_SLOTS;
	t->old_released = t->old_keep;
	t->slots = new_slots;
	t->mask = new_mask;
	t->grow_at = pagetab_grow_limit(new_mask);
	return 0;
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
	uint64_t page = addr >> t->page_shift;
	uint64_t hash = pagetab_hash(pid, page);
	struct page_entry *empty = NULL;
	struct page_entry *e;

	e = pagetab_lookup(t, hash, pid, page, &empty);
	if (e) {
		if (e->epoch != t->epoch) {
			e->epoch = t->epoch;
			e->loads = 0;
			e->stores = 0;
			e->other = 0;
			e->local = 0;
			e->remote = 0;
		}
		if (inserted)
			*inserted = false;
		return e;
	}

	if (t->max_pages && t->count >= t->max_pages)
		return NULL;
	if (t->count >= t->grow_at) {
		/* Without a larger array, keep filling this one up to 15/16;
		 * past that probes get long and the insert is refused. */
		if (pagetab_grow(t) != 0 &&
		    t->count >= t->mask - t->mask / 16) {
			errno = ENOMEM;
			return NULL;
		}
		/* Growth, or moving entries before it, may fill `empty`. */
		empty = pagetab_probe(t->slots, t->mask, hash, pid, page);
	}

	e = empty;
	memset(e, 0, sizeof(*e));
	e->page = page;
	e->pid = pid;
	e->node = PAGE_NODE_UNQUERIED;
	e->epoch = t->epoch;
	t->count++;
	/* Moving entries never relocates the one just placed in `slots`. */
	if (t->old_slots)
		pagetab_migrate(t, PAGETAB_MIGRATE_SLOTS);
	pagetab_debug_check(t);
	if (inserted)
		*inserted = true;
	return e;
}

struct page_entry *
pagetab_find(struct pagetab *t, int32_t pid, uint64_t page)
{
	struct page_entry *empty;

	return pagetab_lookup(t, pagetab_hash(pid, page), pid, page, &empty);
}

uint64_t
pagetab_interval_samples(const struct pagetab *t, const struct page_entry *e)
{
	if (e->epoch != t->epoch)
		return 0;
	return (uint64_t)e->loads + e->stores + e->other;
}

void
pagetab_next_interval(struct pagetab *t)
{
	/* 0 marks empty slots; at one interval per ms the wrap is 49 days
	 * away, and an entry idle for exactly 2^32-1 intervals would then
	 * read as current. */
	if (++t->epoch == 0)
		t->epoch = 1;
}

uint32_t
pagetab_epoch(const struct pagetab *t)
{
	return t->epoch;
}

void
pagetab_reset(struct pagetab *t)
{
	size_t bytes = pagetab_array_bytes(t->mask);

	pagetab_array_unmap(t->old_slots, t->old_mask);
	t->old_slots = NULL;
	t->old_mask = 0;
	t->old_pos = 0;
	/* Dropping the pages of a private anonymous mapping refills them with
	 * zeroes on the next touch, far cheaper than writing gigabytes. */
	if (bytes < PAGETAB_RELEASE_BYTES ||
	    madvise(t->slots, bytes, MADV_DONTNEED) != 0)
		memset(t->slots, 0, bytes);
	t->count = 0;
}

size_t
pagetab_count(const struct pagetab *t)
{
	return t->count;
}

size_t
pagetab_capacity(const struct pagetab *t)
{
	return t->mask + 1;
}

size_t
pagetab_bytes(const struct pagetab *t)
{
	size_t bytes = sizeof(*t) + pagetab_array_bytes(t->mask);

	if (t->old_slots)
		bytes += pagetab_array_bytes(t->old_mask) -
			 (t->old_released - t->old_keep) *
			 sizeof(struct page_entry);
	return bytes;
}

/*
 * Interval keys are masked rather than branched on: in a topk scan about
 * half the slots are empty or stale, a coin flip for a branch predictor.
 */
static inline uint64_t
pagetab_key(const struct page_entry *e, enum sort_key key, uint32_t epoch)
{
	uint64_t current = -(uint64_t)(e->epoch == epoch);

	switch (key) {
	case SORT_SAMPLES:
		return ((uint64_t)e->loads + e->stores + e->other) & current;
	case SORT_TOTAL:
		return e->total;
	case SORT_LOADS:
		return e->loads & current;
	case SORT_STORES:
		return e->stores & current;
	case SORT_LATENCY:
		return e->weight_n ? e->weight_sum / e->weight_n : 0;
	default:
		return 0;
	}
}

/* a ranks below b: smaller key, or equal key and larger (pid, page). */
static inline bool
pagetab_worse(const struct page_entry *a, uint64_t ka,
	      const struct page_entry *b, uint64_t kb)
{
	if (ka != kb)
		return ka < kb;
	if (a->pid != b->pid)
		return a->pid > b->pid;
	return a->page > b->page;
}

/*
 * heap[0..n) is a min-heap under pagetab_worse: heap[0] is the entry that
 * drops out first.  Keys are recomputed from the copies, whose interval
 * counters are already zeroed when stale.
 */
static void
pagetab_heap_down(struct page_entry *heap, size_t n, size_t i,
		  enum sort_key key, uint32_t epoch)
{
	struct page_entry moving = heap[i];
	uint64_t km = pagetab_key(&moving, key, epoch);

	for (;;) {
		size_t c = 2 * i + 1;
		uint64_t kc;

		if (c >= n)
			break;
		kc = pagetab_key(&heap[c], key, epoch);
		if (c + 1 < n) {
			uint64_t kr = pagetab_key(&heap[c + 1], key, epoch);

			if (pagetab_worse(&heap[c + 1], kr, &heap[c], kc)) {
				c++;
				kc = kr;
			}
		}
		if (!pagetab_worse(&heap[c], kc, &moving, km))
			break;
		heap[i] = heap[c];
		i = c;
	}
	heap[i] = moving;
}

static void
pagetab_heap_up(struct page_entry *heap, size_t i, enum sort_key key,
		uint32_t epoch)
{
	struct page_entry moving = heap[i];
	uint64_t km = pagetab_key(&moving, key, epoch);

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!pagetab_worse(&moving, km, &heap[p],
				   pagetab_key(&heap[p], key, epoch)))
			break;
		heap[i] = heap[p];
		i = p;
	}
	heap[i] = moving;
}

struct pagetab_topk_state {
	struct page_entry *heap;
	size_t n;
	size_t k;
	/* Keys below this cannot enter: 1 until the heap is full (zero keys
	 * never take part), then the key of heap[0]. */
	uint64_t min_key;
	enum sort_key key;
	uint32_t epoch;
};

/* e, whose key ke is >= min_key, enters unless it loses a tie to heap[0]. */
static void
pagetab_topk_offer(struct pagetab_topk_state *s, const struct page_entry *e,
		   uint64_t ke)
{
	struct page_entry *dst;

	if (s->n == s->k) {
		if (!pagetab_worse(&s->heap[0], s->min_key, e, ke))
			return;
		dst = &s->heap[0];
	} else {
		dst = &s->heap[s->n];
	}
	*dst = *e;
	if (dst->epoch != s->epoch) {
		dst->loads = 0;
		dst->stores = 0;
		dst->other = 0;
		dst->local = 0;
		dst->remote = 0;
	}
	if (s->n == s->k) {
		pagetab_heap_down(s->heap, s->n, 0, s->key, s->epoch);
	} else {
		s->n++;
		pagetab_heap_up(s->heap, s->n - 1, s->key, s->epoch);
	}
	if (s->n == s->k)
		s->min_key = pagetab_key(&s->heap[0], s->key, s->epoch);
}

/*
 * The scan is bound by memory bandwidth only if rejecting an entry costs
 * a few instructions, so it is inlined once per constant key: the switch
 * in pagetab_key folds away and most entries end at one well-predicted
 * compare.  Empty slots need no test of their own: they are all zeroes
 * and epoch 0 is never current, so every key of an empty slot is 0.
 */
static inline __attribute__((always_inline)) void
pagetab_topk_scan(struct pagetab_topk_state *s,
		  const struct page_entry *slots, size_t from, size_t to,
		  enum sort_key key)
{
	for (size_t i = from; i < to; i++) {
		const struct page_entry *e = &slots[i];
		uint64_t ke = pagetab_key(e, key, s->epoch);

		/* 1 KiB ahead hides DRAM latency the hardware prefetcher
		 * leaves exposed (about 20% at 1 Mi pages); prefetches
		 * past the end of the array never fault. */
		__builtin_prefetch(e + 16);
		if (ke >= s->min_key)
			pagetab_topk_offer(s, e, ke);
	}
}

static inline __attribute__((always_inline)) void
pagetab_topk_all(struct pagetab_topk_state *s, const struct pagetab *t,
		 enum sort_key key)
{
	pagetab_topk_scan(s, t->slots, 0, t->mask + 1, key);
	if (t->old_slots)
		pagetab_topk_scan(s, t->old_slots, t->old_pos,
				  t->old_mask + 1, key);
}

size_t
pagetab_topk(const struct pagetab *t, enum sort_key key, size_t k,
	     struct page_entry *out)
{
	struct pagetab_topk_state s = {
		.heap = out, .n = 0, .k = k, .min_key = 1, .key = key,
		.epoch = t->epoch,
	};

	if (k == 0)
		return 0;
	switch (key) {
	case SORT_SAMPLES:
		pagetab_topk_all(&s, t, SORT_SAMPLES);
		break;
	case SORT_TOTAL:
		pagetab_topk_all(&s, t, SORT_TOTAL);
		break;
	case SORT_LOADS:
		pagetab_topk_all(&s, t, SORT_LOADS);
		break;
	case SORT_STORES:
		pagetab_topk_all(&s, t, SORT_STORES);
		break;
	case SORT_LATENCY:
		pagetab_topk_all(&s, t, SORT_LATENCY);
		break;
	default:
		return 0;
	}

	/* Heap sort: each pass parks the worst remaining entry at the end,
	 * which leaves out[] best first. */
	for (size_t end = s.n; end > 1; end--) {
		struct page_entry tmp = out[0];

		out[0] = out[end - 1];
		out[end - 1] = tmp;
		pagetab_heap_down(out, end - 1, 0, key, t->epoch);
	}
	return s.n;
}

int
pagetab_foreach(struct pagetab *t,
		int (*fn)(struct page_entry *e, void *ctx), void *ctx)
{
	int rc;

	for (size_t i = 0; i <= t->mask; i++) {
		if (t->slots[i].epoch == 0)
			continue;
		rc = fn(&t->slots[i], ctx);
		if (rc)
			return rc;
	}
	if (!t->old_slots)
		return 0;
	for (size_t i = t->old_pos; i <= t->old_mask; i++) {
		if (t->old_slots[i].epoch == 0)
			continue;
		rc = fn(&t->old_slots[i], ctx);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Every live entry must be the first match on the probe chain from its
 * home slot (reachable, and no duplicate before it), and the live entries
 * must number `count`.  An entry still in the old array must not also be
 * in the new one.
 */
int
pagetab_check(const struct pagetab *t)
{
	size_t live = 0, empty = 0;

	if (t->epoch == 0 || t->mask + 1 < PAGETAB_MIN_SLOTS ||
	    ((t->mask + 1) & t->mask) != 0)
		return -EINVAL;
	for (size_t i = 0; i <= t->mask; i++) {
		const struct page_entry *e = &t->slots[i];

		if (e->epoch == 0) {
			empty++;
			continue;
		}
		if (pagetab_probe(t->slots, t->mask,
				  pagetab_hash(e->pid, e->page), e->pid,
				  e->page) != e)
			return -EINVAL;
		live++;
	}
	if (empty == 0)
		return -EINVAL;
	if (t->old_slots) {
		if (t->old_pos > t->old_mask || t->old_mask >= t->mask)
			return -EINVAL;
		for (size_t i = t->old_pos; i <= t->old_mask; i++) {
			const struct page_entry *e = &t->old_slots[i];
			uint64_t h;

			if (e->epoch == 0)
				continue;
			h = pagetab_hash(e->pid, e->page);
			if (pagetab_probe(t->old_slots, t->old_mask, h,
					  e->pid, e->page) != e)
				return -EINVAL;
			if (pagetab_probe(t->slots, t->mask, h, e->pid,
					  e->page)->epoch != 0)
				return -EINVAL;
			live++;
		}
	}
	if (live != t->count)
		return -EINVAL;
	if (t->max_pages && t->count > t->max_pages)
		return -EINVAL;
	return 0;
}
