/*
 * The per-sample path of the collector: one PERF_RECORD_SAMPLE from a
 * channel's ring -> its event -> struct sample -> the aggregation.
 * Collector thread only (the benchmarks call it the same way).
 *
 * Every record ends in exactly one place: queued for the page table,
 * counted unattributed (no address, pid -1), counted lost (unknown
 * event id, a body that does not match the event's sample_type), or
 * ignored (ROLE_AUX group leaders, whose samples carry nothing).
 */
#ifndef MEMTOP_INGEST_H
#define MEMTOP_INGEST_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include "ring.h"
#include "sample.h"
#include "source.h"

struct aggr;
struct channel_events;
struct lathist;

/* The fields the fast decoder reads; ERROR is the tracepoint's
 * error_code, ADDR and IP come from RAW for the tracepoint. */
enum ingest_field {
	INGEST_IP, INGEST_TID, INGEST_TIME, INGEST_ADDR, INGEST_CPU,
	INGEST_PERIOD, INGEST_WEIGHT, INGEST_DATA_SRC, INGEST_PHYS,
	INGEST_ERROR, INGEST_FIELDS
};

/*
 * Where one event's fields sit in its SAMPLE records of exactly `size`
 * bytes (RAW, if any, of raw_size bytes, its u32 size at `raw`): a field
 * is the u64 at off[] masked with mask[].  A field the event does not
 * carry reads the header (off 0) under mask 0, so every field is one
 * load and one AND, without a branch.  size 0: no fixed layout (learnt,
 * or not yet learnt when !learnt).
 */
struct ingest_fast {
	uint16_t size;
	bool learnt;
	bool bare;		/* no WEIGHT, DATA_SRC, PHYS_ADDR: read as 0 */
	int16_t raw;
	uint32_t raw_size;
	uint32_t cpu_absent;		/* 0xffffffff without CPU: cpu -1 */
	uint16_t off[INGEST_FIELDS];
	uint64_t mask[INGEST_FIELDS];
};

struct ingest_stats {
	uint64_t samples;	/* queued */
	uint64_t unattributed;
	uint64_t bad;		/* counted lost */
	uint64_t ignored;
};

struct ingest {
	struct aggr *aggr;
	struct lathist *lat;	/* sample -> frame latency; NULL = off */
	struct ingest_stats stats;
	/* Fixed layouts of fast_src's events, learnt from the first record
	 * of each that the general decoder accepts. */
	const struct source *fast_src;
	struct ingest_fast fast[SOURCE_MAX_EVENTS];
};

void ingest_init(struct ingest *in, struct aggr *a);

/*
 * Decodes hdr, a SAMPLE record of ch, into s: 1 usable, 0 unattributed,
 * -1 ignored (as source_decode), -EINVAL malformed or of no known event.
 */
int ingest_decode(struct ingest *in, const struct channel_events *ch,
		  const struct perf_event_header *hdr, uint64_t period,
		  struct sample *s);

/*
 * hdr is a SAMPLE record of ch; period is the configured period (the
 * weight of sources whose samples carry none).  Returns 1 queued, 0
 * unattributed, -1 ignored, -EINVAL bad.
 */
int ingest_sample(struct ingest *in, const struct channel_events *ch,
		  const struct perf_event_header *hdr, uint64_t period);

/*
 * ring_drain(r) with ingest_sample for every SAMPLE record, without a
 * call per record; every other record goes to other (NULL: skipped),
 * which stops the drain by returning non-zero, as with ring_drain.  The
 * caller learns of malformed samples from in->stats.bad.  Returns the
 * number of records read.  The samples it queues carry no time or period
 * (the aggregation reads neither; the latency histogram gets the time).
 */
size_t ingest_drain(struct ingest *in, const struct channel_events *ch,
		    struct ring *r, uint64_t period, ring_record_fn other,
		    void *ctx, struct ring_stats *stats);

#endif
