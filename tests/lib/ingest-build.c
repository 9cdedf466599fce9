#include "config.h"

/* See ingest-build.h. */

#include <string.h>

#include "ingest-build.h"

void
rec_start(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	r->n = sizeof(struct perf_event_header);
}

void
rec_u64(struct rec *r, uint64_t v)
{
	memcpy(r->b + r->n, &v, 8);
	r->n += 8;
}

static void
rec_u32x2(struct rec *r, uint32_t a, uint32_t b)
{
	memcpy(r->b + r->n, &a, 4);
	memcpy(r->b + r->n + 4, &b, 4);
	r->n += 8;
}

const struct perf_event_header *
rec_end(struct rec *r)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
				       .size = (uint16_t)r->n };

	memcpy(r->b, &h, sizeof(h));
	return (const void *)r->b;
}

const struct perf_event_header *
rec_tp(struct rec *r, uint32_t pid, uint64_t addr, uint64_t err,
       uint32_t raw_size)
{
	unsigned char raw[64] = { 0 };
	uint64_t ip = 0x401000;

	rec_start(r);
	rec_u64(r, 7);
	rec_u64(r, 0xffffffff81000000ull);
	rec_u32x2(r, pid, TID);
	rec_u64(r, 1000);
	rec_u32x2(r, 1, 0);
	memcpy(raw + 8, &addr, 8);
	memcpy(raw + 16, &ip, 8);
	memcpy(raw + 24, &err, 8);
	memcpy(r->b + r->n, &raw_size, 4);
	memcpy(r->b + r->n + 4, raw, raw_size);
	r->n += 4 + raw_size;
	return rec_end(r);
}

const struct perf_event_header *
rec_sw(struct rec *r, uint32_t pid, uint64_t addr)
{
	rec_start(r);
	rec_u64(r, 7);
	rec_u64(r, 0x401000);
	rec_u32x2(r, pid, TID);
	rec_u64(r, 2000);
	rec_u64(r, addr);
	rec_u32x2(r, 0, 0);
	return rec_end(r);
}

const struct perf_event_header *
rec_pebs(struct rec *r, uint64_t id, uint64_t addr, uint64_t weight)
{
	rec_start(r);
	rec_u64(r, id);
	rec_u64(r, 0x401000);
	rec_u32x2(r, PID, TID);
	rec_u64(r, addr);
	rec_u32x2(r, 1, 0);
	rec_u64(r, 20011);
	rec_u64(r, weight);
	rec_u64(r, 0x68100142);
	return rec_end(r);
}

void
rec_setup(struct source *src, struct channel_events *ch, int layout)
{
	const uint64_t common = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
				PERF_SAMPLE_TID | PERF_SAMPLE_CPU;
	struct event_spec *ev = &src->events[0];

	memset(src, 0, sizeof(*src));
	memset(ch, 0, sizeof(*ch));
	src->n_events = 1;
	ev->leader = -1;
	ev->tp_addr_off = ev->tp_ip_off = ev->tp_error_off = -1;
	if (layout == 0) {
		ev->attr.sample_type = common | PERF_SAMPLE_TIME |
				       PERF_SAMPLE_RAW;
		ev->role = ROLE_FAULT_TP;
		ev->tp_addr_off = 8;
		ev->tp_ip_off = 16;
		ev->tp_error_off = 24;
	} else if (layout == 1) {
		ev->attr.sample_type = common | PERF_SAMPLE_TIME |
				       PERF_SAMPLE_ADDR;
		ev->role = ROLE_FAULT;
	} else {
		ev->attr.sample_type = common | PERF_SAMPLE_ADDR |
				       PERF_SAMPLE_PERIOD |
				       PERF_SAMPLE_WEIGHT_STRUCT |
				       PERF_SAMPLE_DATA_SRC;
		ev->role = ROLE_LOAD;
		src->events[1] = *ev;
		src->events[1].role = ROLE_STORE;
		src->events[2] = *ev;
		src->events[2].role = ROLE_AUX;
		src->n_events = 3;
		src->period_in_sample = true;
		ch->ids[0] = 11;
		ch->ids[1] = 12;
		ch->ids[2] = 13;
		if (layout == 3) {
			/* IBS-like: the same records from one event whose
			 * kind comes from DATA_SRC. */
			ev->role = ROLE_OP;
			src->n_events = 1;
		}
	}
	ch->src = src;
	ch->n = src->n_events;
}
