/* Collector thread (setup: main thread).  See recorder.h. */
#include "config.h"

#include <string.h>
#include <time.h>

#include "channel.h"
#include "perfdata_write.h"
#include "record.h"
#include "recorder.h"
#include "source.h"

/* The SAMPLE fields perf_output_sample() writes before ADDR. */
#define RECORDER_BEFORE_ADDR (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | \
			      PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

/* An event whose samples are written with an ADDR field the kernel did
 * not give them: the faults tracepoint, whose address is in its RAW
 * payload. */
static bool
recorder_adds_addr(const struct event_spec *ev)
{
	return ev->role == ROLE_FAULT_TP && ev->tp_addr_off >= 0 &&
	       !(ev->attr.sample_type & PERF_SAMPLE_ADDR);
}

int
recorder_add_source(struct perfdata_writer *w, const struct source *src,
		    uint64_t period)
{
	for (size_t i = 0; i < src->n_events; i++) {
		struct perf_event_attr attr = src->events[i].attr;
		int ret;

		/* As source_open_event() opens it; perf reads sample_id_all
		 * to find the trailer of every non-sample record. */
		attr.size = sizeof(attr);
		attr.sample_period = period;
		attr.freq = 0;
		attr.sample_id_all = 1;
		attr.task = i == 0;
		attr.comm = i == 0;
		attr.use_clockid = 1;
		attr.clockid = CLOCK_MONOTONIC;
		/* The data address belongs in every sample's ADDR, whatever
		 * the source (perf script -F addr, perf report --mem-mode):
		 * recorder_record() puts it there. */
		if (recorder_adds_addr(&src->events[i]))
			attr.sample_type |= PERF_SAMPLE_ADDR;
		ret = perfdata_writer_add_event(w, &attr,
						src->events[i].name);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * A tracepoint sample rewritten with ADDR (taken from its RAW payload) in
 * its place after TIME, as the attr written by recorder_add_source() says.
 * NULL when hdr is not such a sample.  Collector thread only.
 */
static const struct perf_event_header *
recorder_with_addr(const struct source *src, const struct channel *ch,
		   const struct perf_event_header *hdr)
{
	static uint64_t buf[(UINT16_MAX + 1) / 8];
	unsigned char *out = (unsigned char *)buf;
	struct perf_event_header *nh = (struct perf_event_header *)buf;
	const struct channel_events *evs = channel_events(ch);

	if (hdr->type != PERF_RECORD_SAMPLE)
		return NULL;
	for (size_t i = 0; i < evs->n && i < src->n_events; i++) {
		const struct event_spec *ev = &src->events[i];
		struct record_layout l;
		struct record_sample rs;
		uint64_t addr = 0;
		size_t at;

		if (!recorder_adds_addr(ev))
			continue;
		source_layout(ev, &l);
		if (record_parse_sample(&l, hdr, &rs) < 0 ||
		    rs.identifier != evs->ids[i] ||
		    (size_t)hdr->size + 8 > UINT16_MAX)
			continue;
		if (rs.raw && (size_t)ev->tp_addr_off + 8 <= rs.raw_size)
			memcpy(&addr, (const unsigned char *)rs.raw +
			       ev->tp_addr_off, 8);
		at = sizeof(*hdr) + 8 * (size_t)__builtin_popcountll(
			l.sample_type & RECORDER_BEFORE_ADDR);
		memcpy(out, hdr, at);
		memcpy(out + at, &addr, 8);
		memcpy(out + at + 8, (const unsigned char *)hdr + at,
		       hdr->size - at);
		nh->size = (uint16_t)(hdr->size + 8);
		return nh;
	}
	return NULL;
}

void
recorder_record(struct perfdata_writer *w, const struct source *src,
		const struct channel *ch, const struct perf_event_header *hdr)
{
	const struct channel_events *ev = channel_events(ch);
	const struct perf_event_header *with_addr;
	uint64_t task_id;

	for (size_t i = 0; i < ev->n; i++)
		perfdata_writer_add_id(w, i, ev->ids[i]);
	/* The task ring's dummy event shares the first event's sample_type,
	 * so its records read as that event's. */
	if (channel_task_id(ch, &task_id))
		perfdata_writer_add_id(w, 0, task_id);
	with_addr = src ? recorder_with_addr(src, ch, hdr) : NULL;
	perfdata_writer_write(w, with_addr ? with_addr : hdr);
}
