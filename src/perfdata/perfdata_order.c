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
 *
 * A FIFO entry is a run: SAMPLEs of one event that lie one after another
 * in the file image, each read right after the one before (so their seqs
 * follow too), whose TIME sits at the same place.  A record that extends
 * the newest run costs its end pointer; the head run hands out its first
 * record and then reads the next one's time from the record itself.  A
 * record for the heap ends the newest run (the seqs would not follow).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata_format.h"
#include "perfdata_order_int.h"
#include "record.h"

int
perfdata_order_new(struct perfdata_order **out, uint64_t max_bytes)
{
	struct perfdata_order *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->max_bytes = max_bytes;
	o->time_event = PERFDATA_NO_EVENT;	/* samples of none: untimed */
	o->time_need = UINT32_MAX;
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
	free(o->fifo.run);
	free(o->fifo.bytes);
	free(o->out);
	free(o);
}

const struct perfdata_order_stats *
perfdata_order_stats(const struct perfdata_order *o)
{
	return &o->stats;
}

/* rec into the FIFO: onto the newest run when it extends it, else a new
 * entry.  time_at: where rec's TIME sits (a SAMPLE of the event whose
 * TIME place order_time knew), 0 when not known. */
static int
fifo_push(struct order_fifo *f, const struct perfdata_record *rec,
	  uint64_t time, uint64_t seq, uint32_t time_at)
{
	const unsigned char *hdr = (const unsigned char *)rec->hdr;
	size_t n, k, at = ORDER_STABLE;

	if (hdr == f->tail_end && rec->stable && time_at &&
	    rec->event_idx == f->tail_event) {
		f->tail_end += rec->hdr->size;
		f->tail_run->end = f->tail_end;
		f->held++;
		f->last_time = time;
		return 0;
	}
	if (f->n == f->ent_cap && order_fifo_grow_entries(f) < 0)
		return -ENOMEM;
	f->tail_end = NULL;
	if (!rec->stable) {
		n = ORDER_ALIGN(rec->hdr->size);
		at = order_fifo_place(f, n);
		if (at == SIZE_MAX) {
			if (order_fifo_grow_bytes(f, n) < 0)
				return -ENOMEM;
			at = order_fifo_place(f, n);
		}
		memcpy(f->bytes + at, rec->hdr, rec->hdr->size);
		f->tail = at + n;
		if (f->byte_n++ == 0)
			f->byte_head = at;
	}
	k = (f->first + f->n++) & (f->ent_cap - 1);
	f->run[k].end = NULL;
	if (at == ORDER_STABLE && time_at) {
		/* A run that may grow. */
		f->tail_end = hdr + rec->hdr->size;
		f->tail_event = rec->event_idx;
		f->tail_run = &f->run[k];
		f->run[k].end = f->tail_end;
		f->run[k].time_at = time_at;
	}
	f->held++;
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

/* Bytes past the next record of a run to prefetch. */
#define ORDER_RUN_AHEAD	512

/* The head run's record after the one at its head, NULL when there is
 * none (the run ends there, or the entry is not a run). */
static inline const unsigned char *
fifo_run_next(const struct order_fifo *f)
{
	const struct perf_event_header *hdr = f->ent[f->first].hdr;
	const unsigned char *next = (const unsigned char *)hdr + hdr->size;

	/* A copied record's or a single record's end is NULL. */
	return next < f->run[f->first].end ? next : NULL;
}

/* The head run's next record, next, is its head now. */
static inline void
fifo_run_advance(struct order_fifo *f, const unsigned char *next)
{
	struct order_ent *h = &f->ent[f->first];

	f->held--;
	h->offset += h->hdr->size;
	h->hdr = (struct perf_event_header *)(uintptr_t)next;
	h->seq++;
	memcpy(&h->time, next + f->run[f->first].time_at, sizeof(h->time));
	__builtin_prefetch(next + ORDER_RUN_AHEAD);
}

static inline struct order_ent
fifo_pop(struct order_fifo *f)
{
	struct order_ent e = f->ent[f->first];
	uint64_t at = f->at[f->first];
	const unsigned char *next = fifo_run_next(f);

	if (next) {
		fifo_run_advance(f, next);
		return e;
	}
	f->held--;
	f->first = (f->first + 1) & (f->ent_cap - 1);
	if (--f->n == 0)
		f->tail_end = NULL;
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
	return o->n + o->fifo.held;
}

/* Whether the oldest record held is the heap's top (else the FIFO's
 * head, when there is one). */
static bool
order_heap_first(const struct perfdata_order *o)
{
	return o->n > 0 && (o->fifo.held == 0 ||
			    order_less(&o->heap[0],
				       &o->fifo.ent[o->fifo.first]));
}

/* The oldest record held, NULL when none is. */
static const struct order_ent *
order_oldest(const struct perfdata_order *o)
{
	if (order_heap_first(o))
		return &o->heap[0];
	return o->fifo.held ? &o->fifo.ent[o->fifo.first] : NULL;
}

/* Holds a copy of rec: in the FIFO when it is no older than the FIFO's
 * newest, else in the heap. */
static int
order_push(struct perfdata_order *o, const struct perfdata_record *rec,
	   uint64_t time, uint32_t time_at)
{
	uint64_t seq = o->seq++;
	int ret;

	if (o->fifo.n == 0 || time >= o->fifo.last_time) {
		ret = fifo_push(&o->fifo, rec, time, seq, time_at);
	} else {
		struct order_ent e = {
			.time = time, .seq = seq, .offset = rec->offset,
			.event_idx = rec->event_idx,
		};

		o->fifo.tail_end = NULL;
		ret = order_heap_push(o, &e, rec);
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
		top = order_heap_pop(o);
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

/* order_try_out's FIFO head out when it ends its entry. */
static __attribute__((noinline)) void
order_fifo_out(struct perfdata_order *o, struct perfdata_record *rec)
{
	struct order_ent top = fifo_pop(&o->fifo);

	order_hand_out(o, &top, rec);
}

/* order_try_out with the heap in play (or a heap copy to free). */
static __attribute__((noinline)) int
order_try_any(struct perfdata_order *o, struct perfdata_record *rec)
{
	if (order_held(o) == 0 || !order_may_go(o, order_oldest(o)->time))
		return 0;
	order_pop(o, rec);
	return 1;
}

/* Whether the heap is empty (a capture in time order): then the FIFO's
 * head is the oldest record held. */
static inline bool
order_heap_idle(const struct perfdata_order *o)
{
	return o->n == 0 && !o->out;
}

/* With the heap idle: the FIFO's head out into rec when it may go: 1,
 * else 0. */
static inline int
order_fifo_try(struct perfdata_order *o, struct perfdata_record *rec)
{
	struct order_fifo *f = &o->fifo;
	const unsigned char *next;

	if (f->n == 0 || !order_may_go(o, f->ent[f->first].time))
		return 0;
	/* Inside a run: no entry to take apart. */
	next = fifo_run_next(f);
	if (next) {
		order_hand_out(o, &f->ent[f->first], rec);
		fifo_run_advance(f, next);
	} else {
		order_fifo_out(o, rec);
	}
	return 1;
}

/* The oldest record out into rec when it may go: 1, else 0. */
static inline int
order_try_out(struct perfdata_order *o, struct perfdata_record *rec)
{
	if (order_heap_idle(o))
		return order_fifo_try(o, rec);
	return order_try_any(o, rec);
}

/* The record's time: 0, or -ENOENT when it has none.  A SAMPLE of the
 * event looked up last reads its TIME where record_time() found it, and
 * *at says where (else 0). */
static int
order_time(struct perfdata_order *o, struct perfdata_reader *r,
	   const struct perfdata_record *rec, uint64_t *time, uint32_t *at)
{
	const struct perf_event_header *hdr = rec->hdr;
	const struct perfdata_event *ev;
	uint64_t st;

	*at = 0;
	if (hdr->type == PERF_RECORD_SAMPLE && rec->event_idx == o->time_event) {
		if (hdr->size < o->time_need)
			return -ENOENT;
		memcpy(time, (const unsigned char *)hdr + o->time_at,
		       sizeof(*time));
		*at = o->time_at;
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
		o->time_need = o->time_at ? o->time_at + sizeof(*time) :
			       UINT32_MAX;
	}
	return record_time(&ev->layout, hdr, time);
}

/* A timed record read: held, or, past the bound, the oldest goes out.
 * 1 when rec now holds a record to hand out, 0 or -ENOMEM. */
static int
order_take(struct perfdata_order *o, struct perfdata_record *rec,
	   uint64_t time, uint32_t time_at)
{
	int ret = order_push(o, rec, time, time_at);

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

/* perfdata_order_next when its first look hands out nothing: apart, so
 * that a record handed out at once saves no registers for the reading. */
static __attribute__((noinline)) int
order_read(struct perfdata_order *o, struct perfdata_reader *r,
	   struct perfdata_record *rec, char *err, size_t errlen)
{
	uint64_t time;
	uint32_t time_at;
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
			if (order_time(o, r, rec, &time, &time_at) < 0) {
				o->stats.untimed++;
				return 1;
			}
			got = order_take(o, rec, time, time_at);
			if (got != 0) {
				if (got < 0)
					snprintf(err, errlen, "out of memory "
						 "ordering records by time");
				return got;
			}
		} while (blocked && o->n == 0);
	}
}

int
perfdata_order_next(struct perfdata_order *o, struct perfdata_reader *r,
		    struct perfdata_record *rec, char *err, size_t errlen)
{
	/* The common case inline, the rest (the heap too) in order_read. */
	if (order_heap_idle(o) && order_fifo_try(o, rec))
		return 1;
	return order_read(o, r, rec, err, errlen);
}
