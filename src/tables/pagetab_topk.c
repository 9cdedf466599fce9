/*
 * Page table: top-K selection.  One pass over every slot array keeps the
 * K best entries in a min-heap, then a heap sort leaves them best first;
 * the same pass may hand every entry with samples this interval to a
 * visitor (the frame's objects view).  Collector thread only (frame
 * building).
 */
#include "config.h"

#include <stdint.h>

#include "pagetab_int.h"

static void
pagetab_info(const struct pagetab *t, const struct page_entry *e,
	     struct page_info *p)
{
	p->pid = pagetab_entry_pid(e);
	p->page = pagetab_entry_page(e);
	p->node = e->node;
	pagetab_read(t, e, &p->c);
}

static inline uint64_t
pagetab_info_key(const struct page_info *p, enum sort_key key)
{
	switch (key) {
	case SORT_SAMPLES:
		return p->c.loads + p->c.stores + p->c.other;
	case SORT_TOTAL:
		return p->c.total;
	case SORT_LOADS:
		return p->c.loads;
	case SORT_STORES:
		return p->c.stores;
	case SORT_LATENCY:
		return p->c.weight_n ? p->c.weight_sum / p->c.weight_n : 0;
	default:
		return 0;
	}
}

/* a ranks below b: smaller key, or equal key and larger (pid, page). */
static inline bool
pagetab_worse(const struct page_info *a, uint64_t ka,
	      const struct page_info *b, uint64_t kb)
{
	if (ka != kb)
		return ka < kb;
	if (a->pid != b->pid)
		return a->pid > b->pid;
	return a->page > b->page;
}

/* heap[0..n) is a min-heap under pagetab_worse: heap[0] drops out first. */
static void
pagetab_heap_down(struct page_info *heap, size_t n, size_t i,
		  enum sort_key key)
{
	struct page_info moving = heap[i];
	uint64_t km = pagetab_info_key(&moving, key);

	for (;;) {
		size_t c = 2 * i + 1;
		uint64_t kc;

		if (c >= n)
			break;
		kc = pagetab_info_key(&heap[c], key);
		if (c + 1 < n) {
			uint64_t kr = pagetab_info_key(&heap[c + 1], key);

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
pagetab_heap_up(struct page_info *heap, size_t i, enum sort_key key)
{
	struct page_info moving = heap[i];
	uint64_t km = pagetab_info_key(&moving, key);

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!pagetab_worse(&moving, km, &heap[p],
				   pagetab_info_key(&heap[p], key)))
			break;
		heap[i] = heap[p];
		i = p;
	}
	heap[i] = moving;
}

struct pagetab_topk_state {
	const struct pagetab *t;
	struct page_info *heap;
	size_t n;
	size_t k;
	/* Keys below this cannot enter: 1 until the heap is full (zero keys
	 * never take part), then the key of heap[0]. */
	uint64_t min_key;
	enum sort_key key;
	int32_t pid;		/* only this pid's pages; -1 every page */
	void (*visit)(const struct page_entry *e, void *ctx);
	void *ctx;
};

/* Samples this interval: a carried kind is at least PAGETAB_KIND_HALF,
 * so kinds all 0 means none. */
static inline bool
pagetab_touched(const struct page_entry *e, uint32_t epoch)
{
	return e->key != 0 && pagetab_current(e, epoch) &&
	       (e->kinds[0] | e->kinds[1] | e->kinds[2]) != 0;
}

/* p, whose key kp is >= min_key, enters unless it loses a tie. */
static void
pagetab_topk_offer(struct pagetab_topk_state *s, const struct page_info *p,
		   uint64_t kp)
{
	if (s->n == s->k) {
		if (!pagetab_worse(&s->heap[0], s->min_key, p, kp))
			return;
		s->heap[0] = *p;
		pagetab_heap_down(s->heap, s->n, 0, s->key);
	} else {
		s->heap[s->n++] = *p;
		pagetab_heap_up(s->heap, s->n - 1, s->key);
	}
	if (s->n == s->k)
		s->min_key = pagetab_info_key(&s->heap[0], s->key);
}

/*
 * Rare: a count past its field (slot key ke UINT64_MAX), or an entry that
 * may enter the heap.  Once the heap is full, an exact key equal to
 * min_key enters only if its (pid, page) beats heap[0]'s: that is decided
 * here from the slot's own key, before the full counts are read, since
 * with a wide working set and a short interval most slots tie at 1 or 2.
 */
static void
pagetab_topk_full(struct pagetab_topk_state *s, const struct page_entry *e,
		  uint64_t ke)
{
	struct page_info p;
	int32_t pid = pagetab_entry_pid(e);
	uint64_t kp;

	/* Here, off the scan's fast path: a filter costs nothing without
	 * one, and with one only what passes min_key. */
	if (s->pid >= 0 && pid != s->pid)
		return;
	if (ke == s->min_key && s->n == s->k &&
	    (s->heap[0].pid < pid || (s->heap[0].pid == pid &&
				      s->heap[0].page <= pagetab_entry_page(e))))
		return;
	pagetab_info(s->t, e, &p);
	kp = pagetab_info_key(&p, s->key);
	if (kp && kp >= s->min_key)
		pagetab_topk_offer(s, &p, kp);
}

/*
 * The key of a slot from its fields alone, or UINT64_MAX when a field is
 * saturated or carried (the full count needs the side map).  Interval keys are
 * masked rather than branched on: about half the slots are stale or
 * empty, a coin flip for a branch predictor; empty slots are all zeroes,
 * so every key of theirs is 0.
 */
static inline __attribute__((always_inline)) uint64_t
pagetab_slot_key(const struct pagetab *t, const struct page_entry *e,
		 enum sort_key key, uint32_t epoch)
{
	uint64_t current = -(uint64_t)pagetab_current(e, epoch), v;
	const struct pagetab_weight *w;

	switch (key) {
	case SORT_SAMPLES:
		/* A field from half on may have a base: read it whole. */
		if ((e->kinds[0] | e->kinds[1] | e->kinds[2]) &
		    PAGETAB_KIND_HALF & current)
			return UINT64_MAX;
		return ((uint64_t)e->kinds[0] + e->kinds[1] + e->kinds[2]) &
		       current;
	case SORT_TOTAL:
		return e->total >= PAGETAB_TOTAL_HALF ? UINT64_MAX : e->total;
	case SORT_LOADS:
		v = e->kinds[SAMPLE_LOAD] & current;
		return v >= PAGETAB_KIND_HALF ? UINT64_MAX : v;
	case SORT_STORES:
		v = e->kinds[SAMPLE_STORE] & current;
		return v >= PAGETAB_KIND_HALF ? UINT64_MAX : v;
	case SORT_LATENCY:
		w = (const void *)((const unsigned char *)e + t->weight_off);
		if (w->sum == PAGETAB_WEIGHT_SAT || w->n == PAGETAB_WEIGHT_SAT)
			return UINT64_MAX;
		return w->n ? w->sum / w->n : 0;
	default:
		return 0;
	}
}

/*
 * The scan is bound by memory bandwidth only if rejecting a slot costs a
 * few instructions, so it is inlined once per constant key: the switch
 * folds away and most slots end at one well-predicted compare.
 */
static inline __attribute__((always_inline)) void
pagetab_topk_scan(struct pagetab_topk_state *s, enum sort_key key)
{
	const struct pagetab *t = s->t;
	uint32_t epoch = t->epoch;

	for (unsigned j = 0; j < PAGETAB_SUBS; j++) {
		const struct pagetab_sub *sub = &t->subs[j];

		for (uint32_t i = 0; i < sub->cap; i++) {
			const struct page_entry *e =
				pagetab_at(sub->slots, t->stride, i);
			uint64_t ke = pagetab_slot_key(t, e, key, epoch);

			/* 1 KiB ahead hides the DRAM latency the hardware
			 * prefetcher leaves exposed; prefetches past the
			 * end of an array never fault. */
			__builtin_prefetch((const unsigned char *)e + 1024);
			if (s->visit && pagetab_touched(e, epoch))
				s->visit(e, s->ctx);
			if (ke >= s->min_key)
				pagetab_topk_full(s, e, ke);
		}
	}
}

size_t
pagetab_topk(const struct pagetab *t, enum sort_key key, size_t k,
	     struct page_info *out)
{
	return pagetab_topk_pid(t, key, k, -1, out);
}

size_t
pagetab_topk_pid(const struct pagetab *t, enum sort_key key, size_t k,
		 int32_t pid, struct page_info *out)
{
	return pagetab_topk_visit(t, key, k, pid, out, NULL, NULL);
}

/* The visitor's walk alone, where no top-K scan runs. */
static void
pagetab_visit_touched(const struct pagetab *t,
		      void (*visit)(const struct page_entry *e, void *ctx),
		      void *ctx)
{
	for (unsigned j = 0; visit && j < PAGETAB_SUBS; j++)
		for (uint32_t i = 0; i < t->subs[j].cap; i++) {
			const struct page_entry *e =
				pagetab_at(t->subs[j].slots, t->stride, i);

			__builtin_prefetch((const unsigned char *)e + 1024);
			if (pagetab_touched(e, t->epoch))
				visit(e, ctx);
		}
}

size_t
pagetab_topk_visit(const struct pagetab *t, enum sort_key key, size_t k,
		   int32_t pid, struct page_info *out,
		   void (*visit)(const struct page_entry *e, void *ctx),
		   void *ctx)
{
	struct pagetab_topk_state s = {
		.t = t, .heap = out, .n = 0, .k = k, .min_key = 1, .key = key,
		.pid = pid, .visit = visit, .ctx = ctx,
	};

	if (k == 0 || (key == SORT_LATENCY && !t->weight_off))
		key = SORT__COUNT;	/* no scan: nothing to select */
	switch (key) {
	case SORT_SAMPLES:
		pagetab_topk_scan(&s, SORT_SAMPLES);
		break;
	case SORT_TOTAL:
		pagetab_topk_scan(&s, SORT_TOTAL);
		break;
	case SORT_LOADS:
		pagetab_topk_scan(&s, SORT_LOADS);
		break;
	case SORT_STORES:
		pagetab_topk_scan(&s, SORT_STORES);
		break;
	case SORT_LATENCY:
		pagetab_topk_scan(&s, SORT_LATENCY);
		break;
	default:
		pagetab_visit_touched(t, visit, ctx);
		return 0;
	}

	/* Heap sort: each pass parks the worst remaining entry at the end,
	 * which leaves out[] best first. */
	for (size_t end = s.n; end > 1; end--) {
		struct page_info tmp = out[0];

		out[0] = out[end - 1];
		out[end - 1] = tmp;
		pagetab_heap_down(out, end - 1, 0, key);
	}
	return s.n;
}
