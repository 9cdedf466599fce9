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
#include <stdint.h>

struct aggr;
struct channel;
struct lathist;

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
};

void ingest_init(struct ingest *in, struct aggr *a);

/*
 * hdr is a SAMPLE record of ch; period is the configured period (the
 * weight of sources whose samples carry none).  Returns 1 queued, 0
 * unattributed, -1 ignored, -EINVAL bad.
 */
int ingest_sample(struct ingest *in, const struct channel *ch,
		  const struct perf_event_header *hdr, uint64_t period);

#endif
