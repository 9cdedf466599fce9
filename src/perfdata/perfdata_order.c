#include "config.h"

/*
 * Time order for perf.data records.  See perfdata_order.h.
 *
 * Held records are copies in a binary min-heap keyed by (time, the order
 * they were read), so equal times keep file order.  The record handed out
 * last stays alive in `out` until the next call.
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
	struct perf_event_header *hdr;	/* malloc'd copy */
};

struct perfdata_order {
	struct order_ent *heap;
	size_t n, cap;
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
	struct perfdata_order_stats stats;
};

int
perfdata_order_new(struct perfdata_order **out, uint64_t max_bytes)
{
	struct perfdata_order *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->max_bytes = max_bytes;
	*out = o;
	return 0;
}

void
perfdata_order_free(struct perfdata_order *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n; i++)
		free(o->heap[i].hdr);
	free(o->heap);
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

static int
order_push(struct perfdata_order *o, const struct perfdata_record *rec,
	   uint64_t time)
{
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
	e->hdr = malloc(rec->hdr->size);
	if (!e->hdr)
		return -ENOMEM;
	memcpy(e->hdr, rec->hdr, rec->hdr->size);
	e->time = time;
	e->seq = o->seq++;
	e->offset = rec->offset;
	e->event_idx = rec->event_idx;
	o->bytes += rec->hdr->size;
	for (i = o->n++; i > 0 && order_less(&o->heap[i],
					     &o->heap[(i - 1) / 2]);
	     i = (i - 1) / 2)
		order_swap(&o->heap[i], &o->heap[(i - 1) / 2]);
	if (o->n > o->stats.held_max)
		o->stats.held_max = o->n;
	return 0;
}

/* The oldest record out of the heap into rec (o->out owns it). */
static void
order_pop(struct perfdata_order *o, struct perfdata_record *rec)
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
	o->bytes -= top.hdr->size;
	if (top.time < o->out_time)
		o->stats.unordered++;
	else
		o->out_time = top.time;
	free(o->out);
	o->out = top.hdr;
	rec->hdr = top.hdr;
	rec->event_idx = top.event_idx;
	rec->offset = top.offset;
}

/* The record's time: 0, or -ENOENT when it has none. */
static int
order_time(struct perfdata_reader *r, const struct perfdata_record *rec,
	   uint64_t *time)
{
	const struct perfdata_event *ev;

	if (rec->event_idx == PERFDATA_NO_EVENT ||
	    rec->hdr->type >= PERFDATA_REC_HEADER_ATTR)
		return -ENOENT;
	ev = perfdata_reader_event(r, rec->event_idx);
	return record_time(&ev->layout, rec->hdr, time);
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
	if (o->bytes <= o->max_bytes || o->n < 2)
		return 0;
	o->stats.forced++;
	order_pop(o, rec);
	return 1;
}

int
perfdata_order_next(struct perfdata_order *o, struct perfdata_reader *r,
		    struct perfdata_record *rec, char *err, size_t errlen)
{
	uint64_t time;
	int got;

	for (;;) {
		if (o->n > 0 && (o->ended || (o->flushing &&
					       o->heap[0].time <= o->flush_to))) {
			order_pop(o, rec);
			return 1;
		}
		if (o->ended) {
			if (o->end_ret < 0)
				snprintf(err, errlen, "%s", o->end_err);
			return o->end_ret;
		}
		got = perfdata_reader_next(r, rec, o->end_err,
					   sizeof(o->end_err));
		if (got <= 0) {
			o->ended = true;
			o->end_ret = got;
			continue;
		}
		if (rec->hdr->type == PERFDATA_REC_FINISHED_ROUND) {
			o->stats.rounds++;
			o->flush_to = o->flush_next;
			o->flushing = o->stats.rounds > 1;
			o->flush_next = o->seen_max;
			continue;
		}
		if (order_time(r, rec, &time) < 0) {
			o->stats.untimed++;
			return 1;
		}
		got = order_take(o, rec, time);
		if (got != 0) {
			if (got < 0)
				snprintf(err, errlen, "out of memory ordering "
					 "records by time");
			return got;
		}
	}
}
