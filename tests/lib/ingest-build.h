/*
 * Kernel SAMPLE records built by hand for the collector's per-sample path
 * (test-ingest, test-ingest-drain), in the three layouts memtop opens, and
 * the source and the channel's events (channel_events) that read them:
 *   layout 0: the faults tracepoint (TIME, RAW with address, ip and
 *             error_code);
 *   layout 1: the software page-fault event (TIME, ADDR);
 *   layout 2: a PEBS-like load/store pair and an aux leader told apart by
 *             IDENTIFIER 11, 12 and 13 (ADDR, PERIOD, WEIGHT_STRUCT,
 *             DATA_SRC);
 *   layout 3: layout 2's records from one IBS-like event whose kind comes
 *             from DATA_SRC.
 */
#ifndef MEMTOP_INGEST_BUILD_H
#define MEMTOP_INGEST_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "channel.h"
#include "source.h"

#define PID	4242
#define TID	4243

/* A record under construction. */
struct rec {
	unsigned char b[256];
	size_t n;
};

void rec_start(struct rec *r);
void rec_u64(struct rec *r, uint64_t v);
/* Sets the header (a SAMPLE of what was written); returns it. */
const struct perf_event_header *rec_end(struct rec *r);

/* exceptions:page_fault_user: RAW = common header, address, ip,
 * error_code (+ padding and later fields up to raw_size bytes). */
const struct perf_event_header *rec_tp(struct rec *r, uint32_t pid,
				       uint64_t addr, uint64_t err,
				       uint32_t raw_size);
const struct perf_event_header *rec_sw(struct rec *r, uint32_t pid,
				       uint64_t addr);
const struct perf_event_header *rec_pebs(struct rec *r, uint64_t id,
					 uint64_t addr, uint64_t weight);

/* A source of the layout (0 to 3) and its events, everything else 0. */
void rec_setup(struct source *src, struct channel_events *ch, int layout);

#endif
