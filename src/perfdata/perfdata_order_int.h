/*
 * The time order's insides, shared by perfdata_order.c (records in and
 * out: the FIFO's runs, the order itself) and perfdata_order_hold.c (the
 * heap, and the FIFO's growth and byte ring).  Not for other modules: see
 * perfdata_order.h.
 */
#ifndef MEMTOP_PERFDATA_ORDER_INT_H
#define MEMTOP_PERFDATA_ORDER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata_order.h"
#include "perfdata_read.h"

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
/* A stable entry's run: its records go up to end (NULL: one record), the
 * TIME of each at time_at. */
struct order_run {
	const unsigned char *end;
	uint32_t time_at;
};

struct order_fifo {
	struct order_ent *ent;	/* each run's first record not yet out */
	uint64_t *at;		/* byte offset of each entry's record, or
				 * ORDER_STABLE: ent.hdr is the record */
	struct order_run *run;
	size_t ent_cap, first, n;
	size_t held;		/* records in the entries */
	/* The newest entry's run, tail_run, may grow by a stable SAMPLE of
	 * tail_event at tail_end (NULL: it may not). */
	const unsigned char *tail_end;
	struct order_run *tail_run;
	uint32_t tail_event;
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
	 * or two events, so this spares a layout walk a record.  A record
	 * shorter than time_need has no TIME there (UINT32_MAX without
	 * TIME: every record). */
	uint32_t time_event;
	uint32_t time_at;
	uint32_t time_need;
	struct perfdata_order_stats stats;
};

#define ORDER_ALIGN(n)	(((size_t)(n) + 7) & ~(size_t)7)

static inline bool
order_less(const struct order_ent *a, const struct order_ent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

/* perfdata_order_hold.c */
/* rec into the heap (in: its time, seq, offset and event): its pointer
 * when it is stable, else a copy.  0 or -ENOMEM. */
int order_heap_push(struct perfdata_order *o, const struct order_ent *in,
		    const struct perfdata_record *rec);
/* The heap's top, taken out (the heap holds one at least). */
struct order_ent order_heap_pop(struct perfdata_order *o);
/* Where n bytes fit in the byte ring, SIZE_MAX when they do not. */
size_t order_fifo_place(const struct order_fifo *f, size_t n);
/* Twice the entries.  0 or -ENOMEM. */
int order_fifo_grow_entries(struct order_fifo *f);
/* A byte ring with room for n more bytes.  0 or -ENOMEM. */
int order_fifo_grow_bytes(struct order_fifo *f, size_t n);

#endif
