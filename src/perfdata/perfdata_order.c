#include "config.h"

/*
 * Time order for perf.data records.  See perfdata_order.h.
 *
 * Held records are ordered by (time, the order they were read), so equal
 * times keep file order.  Most captures are nearly sorted, so a record no
 * older than the last one queued goes to a FIFO (entries in a ring, bytes
 * in a ring: no allocation, no comparisons); any other goes to a binary
 * min-heap (of pointers into the file image for stable records, else of
 * malloc'd copies).  The next record out is the older of the FIFO's head
 * and the heap's top.  The record handed out last stays alive
 * until the next call (`out` for a heap copy, its place in the byte ring
 * for a FIFO one: nothing is written there before the next call).
 *
 * A capture in time order (one thread's faults: the common case) never
 * fills the heap, and then the FIFO's head goes out with one time check
 * (order_try_out); while that head may not go yet, the records read
 * behind it in the FIFO cannot change that, so they are read without
 * asking again until a round, the end, or one that goes to the heap.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata_format.h"
#include "perfdata_order.h"
#include "record.h"

struct order_ent {
	uint64_t time;
	uint64_t seq;
	uint64_t offset;
	uint32_t event_idx;
	bool owned;			/* hdr is a malloc'd copy (heap) */
	struct perf_event_header *hdr;
};

/*
 * The FIFO: entries in a ring of ent_cap (a power of two, so a position
 * wraps with a mask, not a division); the bytes of the records that
 * are not stable (perfdata_record.stable: in the file image, which
 * outlives the order) in a ring of byte_cap, in entry order.  A stable
 * record is not copied: its entry keeps the pointer.
 */
struct order_fifo {
	struct order_ent *ent;
	uint64_t *at;		/* byte offset of each entry's record, or
				 * ORDER_STABLE: ent.hdr is the record */
	size_t ent_cap, first, n;
	unsigned char *bytes;
	size_t byte_cap;
	size_t byte_n;		/* entries with bytes in the ring */
	size_t byte_head;	/* the oldest such entry's bytes, or before */
	size_t tail;		/* where the next record's bytes go */
	uint64_t last_time;	/* of the newest entry */
};

#define ORDER_STABLE	UINT64_MAX
/* Entries ahead of the one handed out whose record is prefetched. */
#define ORDER_AHEAD	8

struct perfdata_order {
	struct order_ent *heap;
	size_t n, cap;
	struct order_fifo fifo;
	uint64_t bytes, max_bytes;
	uint64_t seq;
	uint64_t seen_max;	/* newest time read */
	uint64_t flush_next;	/* seen_max at the last FINISHED_ROUND */
	uint64_t flush_to;	/* records up to this time may go out */
	bool flushing;		/* flush_to is valid */
	uint64_t out_time;	/* newest time handed out */
	bool ended;		/* the reader is done */
	int end_ret;		/* and returned this */
	char end_err[256];
	struct perf_event_header *out;	/* handed out last */
	/* The event whose SAMPLE records' TIME was looked up last, and
	 * where it sits (0: the event has no TIME): most captures have one
	 * or two events, so this spares a layout walk a record. */
	uint32_t time_event;
	uint32_t time_at;
	struct perfdata_order_stats stats;
};

int
perfdata_order_new(struct perfdata_order **out, uint64_t max_bytes)
{
	struct perfdata_order *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->max_bytes = max_bytes;
	o->time_event = PERFDATA_NO_EVENT;
	*out = o;
	return 0;
}

void
perfdata_order_free(struct perfdata_order *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n; i++)
		if (o->heap[i].owned)
			free(o->heap[i].hdr);
	free(o->heap);
	free(o->fifo.ent);
	free(o->fifo.at);
	free(o->fifo.bytes);
	free(o->out);
	free(o);
}

const struct perfdata_order_stats *
perfdata_order_stats(const struct perfdata_order *o)
{
	return &o->stats;
}

static bool
order_less(const struct order_ent *a, const struct order_ent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void
order_swap(struct order_ent *a, struct order_ent *b)
{
	struct order_ent t = *a;

	*a = *b;
	*b = t;
}

/* rec into the heap: its pointer when it is stable (in the file image,
 * which outlives the order), else a copy. */
static int
heap_push(struct perfdata_order *o, const struct order_ent *in,
	  const struct perfdata_record *rec)
{
	const struct perf_event_header *hdr = rec->hdr;
	struct order_ent *e;
	size_t i;

	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 1024;
		struct order_ent *h = realloc(o->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		o->heap = h;
		o->cap = cap;
	}
	e = &o->heap[o->n];
	*e = *in;
	if (rec->stable) {
		e->hdr = (struct perf_event_header *)(uintptr_t)hdr;
	} else {
		e->hdr = malloc(hdr->size);
		if (!e->hdr)
			return -ENOMEM;
		memcpy(e->hdr, hdr, hdr->size);
		e->owned = true;
	}
	for (i = o->n++; i > 0 && order_less(&o->heap[i],
					     &o->heap[(i - 1) / 2]);
	     i = (i - 1) / 2)
		order_swap(&o->heap[i], &o->heap[(i - 1) / 2]);
	return 0;
}

static struct order_ent
heap_pop(struct perfdata_order *o)
{
	struct order_ent top = o->heap[0];
	size_t i = 0;

	o->heap[0] = o->heap[--o->n];
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < o->n && order_less(&o->heap[l], &o->heap[m]))
			m = l;
		if (l + 1 < o->n && order_less(&o->heap[l + 1], &o->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		order_swap(&o->heap[i], &o->heap[m]);
		i = m;
	}
	return top;
}

#define ORDER_ALIGN(n)	(((size_t)(n) + 7) & ~(size_t)7)

/* Where n bytes fit in the byte ring, SIZE_MAX when they do not.  The
 * bytes in use run from the first entry's to tail, maybe wrapping; tail
 * never reaches the first entry's bytes again (strictly below them). */
static size_t
fifo_place(const struct order_fifo *f, size_t n)
{
	size_t head = f->byte_head;

	if (f->byte_n == 0)
		return n <= f->byte_cap ? 0 : SIZE_MAX;
	if (f->tail > head) {
		if (f->tail + n <= f->byte_cap)
			return f->tail;
		return n < head ? 0 : SIZE_MAX;
	}
	return f->tail + n < head ? f->tail : SIZE_MAX;
}

/* Twice the entries, copied in order to the start.  0 or -ENOMEM. */
static int
fifo_grow_entries(struct order_fifo *f)
{
	size_t cap = f->ent_cap ? 2 * f->ent_cap : 1024;
	struct order_ent *ent = malloc(cap * sizeof(*ent));
	uint64_t *at = malloc(cap * sizeof(*at));

	if (!ent || !at) {
		free(ent);
		free(at);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->n; i++) {
		size_t k = (f->first + i) & (f->ent_cap - 1);

		ent[i] = f->ent[k];
		at[i] = f->at[k];
	}
	free(f->ent);
	free(f->at);
	f->ent = ent;
	f->at = at;
	f->ent_cap = cap;
	f->first = 0;
	return 0;
}

/* A byte ring with room for n more bytes, the records held copied in
 * order to its start.  0 or -ENOMEM. */
static int
fifo_grow_bytes(struct order_fifo *f, size_t n)
{
	size_t cap = 2 * f->byte_cap + 2 * n + ((size_t)1 << 20), pos = 0;
	unsigned char *bytes = malloc(cap);

	if (!bytes)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++) {
		size_t k = (f->first + i) & (f->ent_cap - 1), len;

		if (f->at[k] == ORDER_STABLE)
			continue;
		len = ORDER_ALIGN(((const struct perf_event_header *)(void *)
				   (f->bytes + f->at[k]))->size);
		memcpy(bytes + pos, f->bytes + f->at[k], len);
		f->at[k] = pos;
		pos += len;
	}
	free(f->bytes);
	f->bytes = bytes;
	f->byte_cap = cap;
	f->byte_head = 0;
	f->tail = pos;
	return 0;
}

static int
fifo_push(struct order_fifo *f, const struct perfdata_record *rec,
	  uint64_t time, uint64_t seq)
{
	size_t n, k, at = ORDER_STABLE;

	if (f->n == f->ent_cap && fifo_grow_entries(f) < 0)
		return -ENOMEM;
	if (!rec->stable) {
		n = ORDER_ALIGN(rec->hdr->size);
		at = fifo_place(f, n);
		if (at == SIZE_MAX) {
			if (fifo_grow_bytes(f, n) < 0)
				return -ENOMEM;
			at = fifo_place(f, n);
		}
		memcpy(f->bytes + at, rec->hdr, rec->hdr->size);
		f->tail = at + n;
		if (f->byte_n++ == 0)
			f->byte_head = at;
	}
	k = (f->first + f->n++) & (f->ent_cap - 1);
	/* Field by field: no copy of a whole entry through the stack. */
	f->ent[k].time = time;
	f->ent[k].seq = seq;
	f->ent[k].offset = rec->offset;
	f->ent[k].event_idx = rec->event_idx;
	f->ent[k].owned = false;
	/* A stable record's pointer: its place in the file image. */
	f->ent[k].hdr = (struct perf_event_header *)(uintptr_t)rec->hdr;
	f->at[k] = at;
	f->last_time = time;
	return 0;
}

static inline struct order_ent
fifo_pop(struct order_fifo *f)
{
	struct order_ent e = f->ent[f->first];
	uint64_t at = f->at[f->first];

	f->first = (f->first + 1) & (f->ent_cap - 1);
	f->n--;
	/* A record read a window ago is cold: fetch one a few ahead. */
	if (f->n > ORDER_AHEAD) {
		size_t k = (f->first + ORDER_AHEAD) & (f->ent_cap - 1);

		__builtin_prefetch(f->at[k] == ORDER_STABLE ? f->ent[k].hdr :
				   (void *)(f->bytes + f->at[k]));
	}
	if (at == ORDER_STABLE)
		return e;
	e.hdr = (void *)(f->bytes + at);
	/* The ring's bytes in use now start past this record's (or, when
	 * the next one wrapped to 0, at a gap that frees with it). */
	f->byte_head = at + ORDER_ALIGN(e.hdr->size);
	if (--f->byte_n == 0)
		f->tail = f->byte_head = 0;
	return e;
}

static size_t
order_held(const struct perfdata_order *o)
{
	return o->n + o->fifo.n;
}

/* Whether the oldest record held is the heap's top (else the FIFO's
 * head, when there is one). */
static bool
order_heap_first(const struct perfdata_order *o)
{
	return o->n > 0 && (o->fifo.n == 0 ||
			    order_less(&o->heap[0],
				       &o->fifo.ent[o->fifo.first]));
}

/* The oldest record held, NULL when none is. */
static const struct order_ent *
order_oldest(const struct perfdata_order *o)
{
	if (order_heap_first(o))
		return &o->heap[0];
	return o->fifo.n ? &o->fifo.ent[o->fifo.first] : NULL;
}

/* Holds a copy of rec: in the FIFO when it is no older than the FIFO's
 * newest, else in the heap. */
static int
order_push(struct perfdata_order *o, const struct perfdata_record *rec,
	   uint64_t time)
{
	uint64_t seq = o->seq++;
	int ret;

	if (o->fifo.n == 0 || time >= o->fifo.last_time) {
		ret = fifo_push(&o->fifo, rec, time, seq);
	} else {
		struct order_ent e = {
			.time = time, .seq = seq, .offset = rec->offset,
			.event_idx = rec->event_idx,
		};

		ret = heap_push(o, &e, rec);
	}
	if (ret < 0)
		return ret;
	o->bytes += rec->hdr->size;
	if (order_held(o) > o->stats.held_max)
		o->stats.held_max = order_held(o);
	return 0;
}

/* top, just taken from the heap or the FIFO, out into rec. */
static inline void
order_hand_out(struct perfdata_order *o, const struct order_ent *top,
	       struct perfdata_record *rec)
{
	o->bytes -= top->hdr->size;
	if (top->time < o->out_time)
		o->stats.unordered++;
	else
		o->out_time = top->time;
	rec->hdr = top->hdr;
	rec->event_idx = top->event_idx;
	rec->offset = top->offset;
}

/* The oldest record out into rec, valid until the next call. */
static void
order_pop(struct perfdata_order *o, struct perfdata_record *rec)
{
	struct order_ent top;

	if (o->out) {
		free(o->out);
		o->out = NULL;
	}
	if (order_heap_first(o)) {
		top = heap_pop(o);
		if (top.owned)
			o->out = top.hdr;
	} else {
		top = fifo_pop(&o->fifo);
	}
	order_hand_out(o, &top, rec);
}

/* Whether a record of this time may go out now. */
static inline bool
order_may_go(const struct perfdata_order *o, uint64_t time)
{
	return o->ended || (o->flushing && time <= o->flush_to);
}

/* The oldest record out into rec when it may go: 1, else 0.  With the
 * heap empty (a capture in time order) the FIFO's head is the oldest. */
static inline int
order_try_out(struct perfdata_order *o, struct perfdata_record *rec)
{
	struct order_fifo *f = &o->fifo;
	struct order_ent top;

	if (o->n == 0 && !o->out) {
		if (f->n == 0 || !order_may_go(o, f->ent[f->first].time))
			return 0;
		top = fifo_pop(f);
		order_hand_out(o, &top, rec);
		return 1;
	}
	if (order_held(o) == 0 || !order_may_go(o, order_oldest(o)->time))
		return 0;
	order_pop(o, rec);
	return 1;
}

/* The record's time: 0, or -ENOENT when it has none.  A SAMPLE of the
 * event looked up last reads its TIME where record_time() found it. */
static int
order_time(struct perfdata_order *o, struct perfdata_reader *r,
	   const struct perfdata_record *rec, uint64_t *time)
{
	const struct perf_event_header *hdr = rec->hdr;
	const struct perfdata_event *ev;
	uint64_t st;

	if (hdr->type == PERF_RECORD_SAMPLE && rec->event_idx == o->time_event) {
		if (o->time_at == 0 || hdr->size < o->time_at + sizeof(*time))
			return -ENOENT;
		memcpy(time, (const unsigned char *)hdr + o->time_at,
		       sizeof(*time));
		return 0;
	}
	if (rec->event_idx == PERFDATA_NO_EVENT ||
	    hdr->type >= PERFDATA_REC_HEADER_ATTR)
		return -ENOENT;
	ev = perfdata_reader_event(r, rec->event_idx);
	if (hdr->type == PERF_RECORD_SAMPLE) {
		/* As record_time(): IDENTIFIER, IP and TID come before. */
		st = ev->layout.sample_type;
		o->time_event = rec->event_idx;
		o->time_at = !(st & PERF_SAMPLE_TIME) ? 0 :
			     (uint32_t)(sizeof(*hdr) +
			     8 * (!!(st & PERF_SAMPLE_IDENTIFIER) +
				  !!(st & PERF_SAMPLE_IP) +
				  !!(st & PERF_SAMPLE_TID)));
	}
	return record_time(&ev->layout, hdr, time);
}

/* A timed record read: held, or, past the bound, the oldest goes out.
 * 1 when rec now holds a record to hand out, 0 or -ENOMEM. */
static int
order_take(struct perfdata_order *o, struct perfdata_record *rec,
	   uint64_t time)
{
	int ret = order_push(o, rec, time);

	if (ret < 0)
		return ret;
	if (time > o->seen_max)
		o->seen_max = time;
	if (o->bytes <= o->max_bytes || order_held(o) < 2)
		return 0;
	o->stats.forced++;
	order_pop(o, rec);
	return 1;
}

/* A FINISHED_ROUND: what the round before saw may go. */
static void
order_round(struct perfdata_order *o)
{
	o->stats.rounds++;
	o->flush_to = o->flush_next;
	o->flushing = o->stats.rounds > 1;
	o->flush_next = o->seen_max;
}

int
perfdata_order_next(struct perfdata_order *o, struct perfdata_reader *r,
		    struct perfdata_record *rec, char *err, size_t errlen)
{
	uint64_t time;
	bool blocked;
	int got;

	for (;;) {
		if (order_try_out(o, rec))
			return 1;
		if (o->ended) {
			if (o->end_ret < 0)
				snprintf(err, errlen, "%s", o->end_err);
			return o->end_ret;
		}
		/* The heap is empty and the FIFO's head may not go: until a
		 * round or the end, records queued behind it change nothing
		 * (the head stays the oldest), so they are read without
		 * asking again.  A record for the heap may be older. */
		blocked = o->n == 0 && o->fifo.n > 0;
		do {
			got = perfdata_reader_next(r, rec, o->end_err,
						   sizeof(o->end_err));
			if (got <= 0) {
				o->ended = true;
				o->end_ret = got;
				break;
			}
			if (rec->hdr->type == PERFDATA_REC_FINISHED_ROUND) {
				order_round(o);
				break;
			}
			if (order_time(o, r, rec, &time) < 0) {
				o->stats.untimed++;
				return 1;
			}
			got = order_take(o, rec, time);
			if (got != 0) {
				if (got < 0)
					snprintf(err, errlen, "out of memory "
						 "ordering records by time");
				return got;
			}
		} while (blocked && o->n == 0);
	}
}
