/*
 * Collector thread only.  See ingest.h.
 *
 * Two decoders give the same struct sample.  The general one walks any
 * record with record_parse_sample() and source_decode().  The fast one
 * serves the records the kernel actually writes: for one event every
 * SAMPLE has the same size and field offsets (memtop never asks for
 * CALLCHAIN, group READ or other variable fields; a tracepoint's RAW has
 * one size in practice), so the offsets are computed once per event and
 * a record of exactly that size is read field by field from them.  A
 * record of any other size goes the general way, which also judges
 * whether it is malformed.  tests/unit/collector/test-ingest.c checks that both decoders
 * agree on every field.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "aggr.h"
#include "channel.h"
#include "ingest.h"
#include "lathist.h"
#include "record.h"
#include "source.h"

void
ingest_init(struct ingest *in, struct aggr *a)
{
	memset(in, 0, sizeof(*in));
	in->aggr = a;
}

static void
ingest_field(struct ingest_fast *f, enum ingest_field k, int off,
	     uint64_t mask)
{
	f->off[k] = off >= 0 ? (uint16_t)off : 0;
	f->mask[k] = off >= 0 ? mask : 0;
}

/* The field at byte off of a tracepoint's RAW data, if it fits there (the
 * general decoder reads 0 for those that do not). */
static int
ingest_raw_field(int raw, uint32_t raw_size, int off)
{
	if (raw < 0 || off < 0 || (uint32_t)off + 8 > raw_size)
		return -1;
	return raw + 4 + off;
}

/*
 * Offsets of ev's fields in a SAMPLE record (record_fixed_layout); raw_size
 * is the RAW payload size of the record the layout is learnt from.  Leaves
 * f->size 0 when there is no fixed layout.
 */
static void
ingest_fast_build(struct ingest_fast *f, const struct source *src,
		  const struct event_spec *ev, uint32_t raw_size)
{
	struct record_layout l;
	int32_t off[RECORD_F__N];
	uint32_t size;
	int ip, addr, raw;

	memset(f, 0, sizeof(*f));
	f->learnt = true;
	source_layout(ev, &l);
	size = record_fixed_layout(&l, raw_size, off);
	if (size == 0)
		return;
	ip = off[RECORD_F_IP];
	addr = off[RECORD_F_ADDR];
	raw = off[RECORD_F_RAW];
	if (ev->role == ROLE_FAULT_TP) {
		addr = ingest_raw_field(raw, raw_size, ev->tp_addr_off);
		ip = ingest_raw_field(raw, raw_size, ev->tp_ip_off);
		ingest_field(f, INGEST_ERROR, ingest_raw_field(raw, raw_size,
					ev->tp_error_off), UINT64_MAX);
	} else {
		ingest_field(f, INGEST_ERROR, -1, 0);
	}
	ingest_field(f, INGEST_IP, ip, UINT64_MAX);
	ingest_field(f, INGEST_TID, off[RECORD_F_TID], UINT64_MAX);
	ingest_field(f, INGEST_TIME, off[RECORD_F_TIME], UINT64_MAX);
	ingest_field(f, INGEST_ADDR, addr, UINT64_MAX);
	ingest_field(f, INGEST_CPU, off[RECORD_F_CPU], UINT32_MAX);
	/* A source whose samples' PERIOD does not count reads it as 0,
	 * which means "the configured period" below. */
	ingest_field(f, INGEST_PERIOD, src->period_in_sample ?
		     off[RECORD_F_PERIOD] : -1, UINT64_MAX);
	/* WEIGHT_STRUCT: var1_dw is the low 32 bits (record.c). */
	ingest_field(f, INGEST_WEIGHT, off[RECORD_F_WEIGHT],
		     (l.sample_type & PERF_SAMPLE_WEIGHT_STRUCT) ?
		     UINT32_MAX : UINT64_MAX);
	ingest_field(f, INGEST_DATA_SRC, off[RECORD_F_DATA_SRC], UINT64_MAX);
	ingest_field(f, INGEST_PHYS, off[RECORD_F_PHYS_ADDR], UINT64_MAX);
	f->cpu_absent = off[RECORD_F_CPU] < 0 ? UINT32_MAX : 0;
	f->bare = !f->mask[INGEST_WEIGHT] && !f->mask[INGEST_DATA_SRC] &&
		  !f->mask[INGEST_PHYS];
	f->raw = (int16_t)raw;
	f->raw_size = raw_size;
	f->size = (uint16_t)size;
}

static inline uint64_t
ingest_get(const unsigned char *rec, const struct ingest_fast *f,
	   enum ingest_field k)
{
	uint64_t v;

	memcpy(&v, rec + f->off[k], sizeof(v));
	return v & f->mask[k];
}

/*
 * Decodes a record of exactly f->size bytes; as source_classify().  With
 * !all, leaves out what the aggregation does not read (time, period):
 * ingest_drain's batch slots.
 */
static inline __attribute__((always_inline)) int
ingest_fast_fill(const struct event_spec *ev, const struct ingest_fast *f,
		 const unsigned char *rec, uint64_t period, struct sample *s,
		 bool all)
{
	uint64_t tid = ingest_get(rec, f, INGEST_TID);

	if (all) {
		uint64_t v = ingest_get(rec, f, INGEST_PERIOD);

		s->time = ingest_get(rec, f, INGEST_TIME);
		s->period = v ? v : period;
	}
	s->ip = ingest_get(rec, f, INGEST_IP);
	s->pid = (int32_t)(uint32_t)tid;
	s->tid = (int32_t)(uint32_t)(tid >> 32);
	s->cpu = (int32_t)((uint32_t)ingest_get(rec, f, INGEST_CPU) |
			   f->cpu_absent);
	if (f->bare) {
		s->weight = s->data_src = s->phys_addr = 0;
	} else {
		s->weight = ingest_get(rec, f, INGEST_WEIGHT);
		s->data_src = ingest_get(rec, f, INGEST_DATA_SRC);
		s->phys_addr = ingest_get(rec, f, INGEST_PHYS);
	}
	s->addr = ingest_get(rec, f, INGEST_ADDR);
	return source_classify(ev, s, ingest_get(rec, f, INGEST_ERROR));
}

static inline int
ingest_fast_decode(const struct event_spec *ev, const struct ingest_fast *f,
		   const unsigned char *rec, uint64_t period, struct sample *s)
{
	return ingest_fast_fill(ev, f, rec, period, s, true);
}

/* The event a record of ch belongs to, or NULL. */
static inline const struct event_spec *
ingest_event(const struct channel_events *ch, const struct perf_event_header *hdr)
{
	uint64_t id;

	if (ch->src->n_events == 1)
		return &ch->src->events[0];
	/* record_identifier for a SAMPLE (ingest sees no other), inline:
	 * IDENTIFIER is the first field of the body. */
	if (hdr->size < sizeof(*hdr) + sizeof(id))
		return NULL;
	memcpy(&id, hdr + 1, sizeof(id));
	/* Sources of several events have two at most in practice (loads,
	 * stores): those without a call per record. */
	if (ch->n >= 2 && id == ch->ids[1])
		return &ch->src->events[1];
	if (ch->n >= 1 && id == ch->ids[0])
		return &ch->src->events[0];
	return channel_events_find(ch, id);
}

/*
 * The general way, and where each event's fixed layout is learnt.  Kept
 * out of line: its big locals would otherwise make every fast decode
 * save and restore registers it does not use.
 */
static __attribute__((noinline)) int
ingest_decode_slow(struct ingest *in, const struct channel_events *ch,
		   const struct event_spec *ev, struct ingest_fast *f,
		   const struct perf_event_header *hdr, uint64_t period,
		   struct sample *s)
{
	struct record_layout layout;
	struct record_sample rs;

	if (in->fast_src != ch->src) {
		memset(in->fast, 0, sizeof(in->fast));
		in->fast_src = ch->src;
	}
	source_layout(ev, &layout);
	if (record_parse_sample(&layout, hdr, &rs) < 0)
		return -EINVAL;
	if (!f->learnt)
		ingest_fast_build(f, ch->src, ev, rs.raw_size);
	return source_decode(ch->src, ev, &rs, period, s);
}

static inline __attribute__((always_inline)) int
ingest_decode_inline(struct ingest *in, const struct channel_events *ch,
		     const struct perf_event_header *hdr, uint64_t period,
		     struct sample *s)
{
	const struct event_spec *ev = ingest_event(ch, hdr);
	struct ingest_fast *f;

	if (!ev)
		return -EINVAL;
	f = &in->fast[ev - ch->src->events];
	if (in->fast_src == ch->src && f->size == hdr->size) {
		const unsigned char *rec = (const void *)hdr;
		uint32_t raw_size = f->raw_size;

		if (f->raw >= 0)
			memcpy(&raw_size, rec + f->raw, sizeof(raw_size));
		if (raw_size == f->raw_size)
			return ingest_fast_decode(ev, f, rec, period, s);
	}
	return ingest_decode_slow(in, ch, ev, f, hdr, period, s);
}

int
ingest_decode(struct ingest *in, const struct channel_events *ch,
	      const struct perf_event_header *hdr, uint64_t period,
	      struct sample *s)
{
	return ingest_decode_inline(in, ch, hdr, period, s);
}

/* Where a sample that is not queued ends: ret as ingest_decode's, <= 0. */
static __attribute__((noinline)) int
ingest_not_queued(struct ingest *in, int ret)
{
	struct aggr *a = in->aggr;

	if (ret == 0) {
		aggr_count_unattributed(a, 1);
		in->stats.unattributed++;
		return 0;
	}
	if (ret == -1) {
		in->stats.ignored++;
		return -1;
	}
	aggr_count_lost(a, 1);
	in->stats.bad++;
	return -EINVAL;
}

int
ingest_sample(struct ingest *in, const struct channel_events *ch,
	      const struct perf_event_header *hdr, uint64_t period)
{
	struct aggr *a = in->aggr;
	struct sample *s = aggr_slot(a);
	int ret;

	ret = ingest_decode_inline(in, ch, hdr, period, s);
	if (ret <= 0)
		return ingest_not_queued(in, ret);
	if (in->lat)
		lathist_add(in->lat, s->time);
	aggr_commit(a);
	in->stats.samples++;
	return 1;
}

/*
 * The drain's copy of the fixed layouts of a source's first two events
 * (one, or loads and stores), in locals so that nothing the loop stores
 * into a sample can alias them and force a reload per record.  size 0:
 * no fixed layout (yet); records take the general way, which learns it.
 */
static inline __attribute__((always_inline)) void
ingest_drain_layouts(const struct ingest *in, const struct channel_events *ch,
		     struct ingest_fast *lf)
{
	for (unsigned k = 0; k < 2; k++) {
		if (in->fast_src == ch->src && k < ch->src->n_events &&
		    k < ch->n) {
			lf[k] = in->fast[k];
			/* The loop fills slots without aggr_commit. */
			if (lf[k].mask[INGEST_WEIGHT] && in->aggr)
				aggr_weights_possible(in->aggr);
		} else {
			/* learnt kept: the drain relearns when it changes. */
			memset(&lf[k], 0, sizeof(lf[k]));
			lf[k].raw = -1;
			lf[k].learnt = in->fast[k].learnt;
		}
	}
}

/*
 * ring_next for the drain: the common record here, from the cursor and
 * the ring's data area held in the loop's locals, which ring_next would
 * turn into memory by handing their address to ring_next_slow; any other
 * record (wrapped, misaligned, malformed) through ring_next on a copy.
 */
static inline const struct perf_event_header *
ingest_next(struct ring *r, const unsigned char *data, uint64_t data_size,
	    struct ring_pos *pos)
{
	uint64_t off = pos->tail & (data_size - 1);
	uint64_t avail = pos->head - pos->tail;
	const struct perf_event_header *rec = (const void *)(data + off);
	struct ring_pos copy;

	if (avail == 0)
		return NULL;
	if (__builtin_expect(off % 8 == 0 && rec->size >= sizeof(*rec) &&
			     rec->size % 8 == 0 && rec->size <= avail &&
			     off + rec->size <= data_size, 1)) {
		pos->tail += rec->size;
		pos->n++;
		return rec;
	}
	copy = *pos;
	rec = ring_next(r, &copy);
	*pos = copy;
	return rec;
}

/* ingest_drain_loop's role argument besides an enum event_role. */
#define INGEST_TWO	(-1)	/* two events, told apart by IDENTIFIER */
#define INGEST_ONE	(-2)	/* one event, of any role */

/*
 * ingest_drain's loop, compiled for sources of one event and for the
 * others, with and without the latency histogram (role and timed are
 * constants).  A role >= 0 is the one event's, known to the compiler so
 * that source_classify() keeps only its rule.  Long on purpose: the ring
 * cursor, the batch fill and both events' layouts stay in registers for
 * the whole loop, which a call per part would spill per record.
 */
static inline __attribute__((always_inline)) void
ingest_drain_loop(struct ingest *in, const struct channel_events *ch,
		  struct ring *r, struct ring_pos *pos, uint64_t period,
		  ring_record_fn other, void *ctx, const int role,
		  const bool timed)
{
	const bool one = role != INGEST_TWO;
	const struct perf_event_header *hdr;
	/* The events too: a sample's kind is a u32 like their role, so a
	 * store to it would make the role be read again per record. */
	struct event_spec evs[2];
	/* As ingest_event: IDENTIFIER tells events apart. */
	uint64_t id0 = ch->ids[0], id1 = ch->ids[1];
	struct aggr *a = in->aggr;
	struct lathist *lat = in->lat;
	uint64_t queued = 0;
	struct ingest_fast lf[2];
	const struct source *lsrc = in->fast_src;
	/* The cursor in a local too (ring_begin's pointer escapes), and
	 * the batch's fill: the next slot s, queued since from; a->n_batch
	 * is brought up to date before anything outside the loop may look
	 * at it. */
	struct ring_pos p = *pos;
	const unsigned char *data = r->data;
	uint64_t data_size = r->data_size;
	struct sample *s = &a->batch[a->n_batch], *from = s;
	struct sample *end = &a->batch[AGGR_BATCH];

	ingest_drain_layouts(in, ch, lf);
	evs[0] = ch->src->events[0];
	if (role >= 0)
		evs[0].role = (enum event_role)role;	/* as it was */
	if (!one)
		evs[1] = ch->src->events[1];
	while ((hdr = ingest_next(r, data, data_size, &p)) != NULL) {
		const unsigned char *rec = (const void *)hdr;
		const struct ingest_fast *f = &lf[0];
		uint32_t raw_size;
		int ret, k = 0;

		if (__builtin_expect(hdr->type != PERF_RECORD_SAMPLE, 0)) {
			int stop;

			if (other == NULL)
				continue;
			queued += (uint64_t)(s - from);
			a->n_batch = (size_t)(s - a->batch);
			stop = other(hdr, ctx);
			s = from = &a->batch[a->n_batch];
			if (stop)
				break;
			continue;
		}
		if (!one) {
			uint64_t id;

			k = -1;
			if (hdr->size >= sizeof(*hdr) + sizeof(id)) {
				memcpy(&id, rec + sizeof(*hdr), sizeof(id));
				k = id == id1 && ch->n >= 2 ? 1 :
				    id == id0 && ch->n >= 1 ? 0 : -1;
			}
			/* Pointers, not an index: no multiply per use. */
			f = k == 1 ? &lf[1] : &lf[0];
		}
		raw_size = f->raw_size;
		if (hdr->size == f->size && f->raw >= 0)
			memcpy(&raw_size, rec + f->raw, sizeof(raw_size));
		if ((one || k >= 0) && hdr->size == f->size &&
		    raw_size == f->raw_size) {
			/* The aggregation reads no time: taken here when
			 * the latency histogram wants it. */
			ret = ingest_fast_fill(one || k != 1 ? &evs[0] :
					       &evs[1], f, rec, period, s, false);
			if (timed && ret > 0)
				lathist_add(lat, ingest_get(rec, f,
							    INGEST_TIME));
		} else {
			ret = ingest_decode_inline(in, ch, hdr, period, s);
			a->weights_possible |= ret > 0 && s->weight;
			/* Copied again only when a layout was just
			 * learnt. */
			if (in->fast_src != lsrc ||
			    in->fast[0].learnt != lf[0].learnt ||
			    in->fast[1].learnt != lf[1].learnt) {
				ingest_drain_layouts(in, ch, lf);
				lsrc = in->fast_src;
			}
			if (timed && ret > 0)
				lathist_add(lat, s->time);
		}
		if (__builtin_expect(ret <= 0, 0)) {
			ingest_not_queued(in, ret);
			continue;
		}
		if (__builtin_expect(++s == end, 0)) {
			queued += (uint64_t)(s - from);
			a->n_batch = AGGR_BATCH;
			aggr_flush(a);
			s = from = &a->batch[a->n_batch];
		}
	}
	queued += (uint64_t)(s - from);
	a->n_batch = (size_t)(s - a->batch);
	/* Nothing in the loop reads the count: added once. */
	in->stats.samples += queued;
	*pos = p;
}

size_t
ingest_drain(struct ingest *in, const struct channel_events *ch, struct ring *r,
	     uint64_t period, ring_record_fn other, void *ctx,
	     struct ring_stats *stats)
{
	struct ring_pos pos;

	bool one = ch->src->n_events == 1;
	enum event_role role = ch->src->events[0].role;

	ring_begin(r, &pos);
	if (in->lat)
		ingest_drain_loop(in, ch, r, &pos, period, other, ctx,
				  one ? INGEST_ONE : INGEST_TWO, true);
	else if (!one)
		ingest_drain_loop(in, ch, r, &pos, period, other, ctx,
				  INGEST_TWO, false);
	else if (role == ROLE_FAULT_TP)
		ingest_drain_loop(in, ch, r, &pos, period, other, ctx,
				  ROLE_FAULT_TP, false);
	else if (role == ROLE_FAULT)
		ingest_drain_loop(in, ch, r, &pos, period, other, ctx,
				  ROLE_FAULT, false);
	else
		ingest_drain_loop(in, ch, r, &pos, period, other, ctx,
				  INGEST_ONE, false);
	ring_end(r, &pos, stats);
	return pos.n;
}
