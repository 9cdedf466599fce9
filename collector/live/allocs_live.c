/*
 * The live side of the allocation events (issue 18): every record of a
 * channel's allocation ring (collector/channels/channel_alloc.c) into the
 * object table (src/aggr/allocs.c) and, under --record, into the file as
 * the kernel wrote it (recorder_record_alloc).  A drain's records are
 * queued (allocs_queue: their walks go to the unwind helper together) and
 * applied at its end (allocs_flush).  Collector thread only.
 */
#include "config.h"

#include <string.h>

#include "allocs_live.h"
#include "channel.h"
#include "collector_int.h"
#include "record.h"
#include "recorder.h"
#include "ring.h"

struct allocs_drain_ctx {
	struct collector *c;
	struct channel *ch;
};

struct allocs_event
allocs_event_of(const struct event_spec *ev)
{
	return (struct allocs_event){
		.sample_type = ev->attr.sample_type,
		.regs_user = ev->attr.sample_regs_user,
		.ret_off = ev->tp_addr_off,
		.id_off = ev->tp_ip_off,
	};
}

struct heap_event
heap_event_of(const struct event_spec *ev)
{
	return (struct heap_event){
		.fn = ev->heap_fn,
		.ret = ev->heap_ret,
		.sample_type = ev->attr.sample_type,
		.regs_user = ev->attr.sample_regs_user,
	};
}

static int
allocs_on_record(const struct perf_event_header *hdr, void *arg)
{
	struct allocs_drain_ctx *d = arg;
	struct allocs *a = &d->c->allocs;
	const struct event_spec *ev;
	struct allocs_event ae;
	uint64_t id;

	if (d->c->cfg.recorder)
		recorder_record_alloc(d->c->cfg.recorder, d->c->cfg.src, d->ch,
				      hdr);
	if (hdr->type == PERF_RECORD_LOST &&
	    hdr->size >= sizeof(*hdr) + RECORD_LOST_BODY) {
		uint64_t lost;

		memcpy(&lost, (const unsigned char *)(hdr + 1) + 8,
		       sizeof(lost));
		a->st.lost += lost;
		return 0;
	}
	if (hdr->type != PERF_RECORD_SAMPLE)
		return 0;
	if (hdr->size < sizeof(*hdr) + sizeof(id)) {
		a->st.bad++;
		return 0;
	}
	memcpy(&id, hdr + 1, sizeof(id));
	ev = channel_alloc_event(d->ch, id);
	if (!ev) {
		a->st.bad++;
		return 0;
	}
	if (ev->heap_fn != HEAP_NONE) {
		struct heap_event he = heap_event_of(ev);

		heapobjs_record(&d->c->heap_objs, &he, hdr);
		return 0;
	}
	ae = allocs_event_of(ev);
	allocs_queue(a, &ae, hdr);
	return 0;
}

void
collector_allocs_drain(struct collector *c, struct channel *ch)
{
	struct ring *r = channel_alloc_ring(ch);
	struct allocs_drain_ctx d = { c, ch };
	struct ring_stats st = { 0 };

	if (!r || !c->allocs.objs)
		return;
	ring_drain(r, allocs_on_record, &d, &st);
	allocs_flush(&c->allocs);
	c->allocs.st.bad += st.bad_size;
}
