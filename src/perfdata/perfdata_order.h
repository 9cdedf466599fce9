/*
 * Records of a perf.data reader in time order, as perf's ordered events
 * (tools/perf/util/ordered-events.c) hand them to `perf report` and
 * `perf script`.  One thread at a time, with its reader.
 *
 * perf record empties every ring once per pass and then writes a
 * FINISHED_ROUND record; a record of one pass can be older than records
 * of the pass before it (the rings are read one after another), but not
 * older than the newest record of the pass before that.  So at each
 * FINISHED_ROUND the records up to the newest time seen at the previous
 * FINISHED_ROUND are handed out, sorted by time (records of equal time in
 * file order).  A capture without rounds (memtop --record, older perf)
 * goes through the same buffer with no such point: it is held until it
 * reaches the bound, and then the oldest record goes out each time a new
 * one comes in, a sliding window of that many bytes.  At the end of the
 * data, or at an error of the reader, whatever is held goes out first.
 *
 * A record without a time (its event has no TIME, or a non-sample record
 * without sample_id_all, or one that names no event) goes out at once, as
 * perf delivers it.  A record older than one already handed out (the
 * window was too small, or the capture breaks perf's rule) goes out in
 * its turn all the same and is counted in `unordered`.
 */
#ifndef MEMTOP_PERFDATA_ORDER_H
#define MEMTOP_PERFDATA_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata_read.h"

/* Bytes of records held at most by default: about a million samples of
 * a perf mem capture. */
#define PERFDATA_ORDER_MAX_BYTES	(UINT64_C(64) << 20)

struct perfdata_order;

struct perfdata_order_stats {
	uint64_t rounds;	/* FINISHED_ROUND records */
	uint64_t held_max;	/* most records held at once */
	uint64_t forced;	/* handed out early: the bound was reached */
	uint64_t unordered;	/* older than one handed out before */
	uint64_t untimed;	/* handed out at once: no time */
};

/* max_bytes: the bound on held record bytes (at least one record is
 * always held).  0 or -ENOMEM. */
int perfdata_order_new(struct perfdata_order **out, uint64_t max_bytes);
void perfdata_order_free(struct perfdata_order *o);	/* NULL-safe */

/*
 * The next record in time order: as perfdata_reader_next() (1, 0 at the
 * end, -errno with a reason once every record read before the error has
 * gone out), and *rec is valid until the next call.  FINISHED_ROUND is
 * not handed out.
 */
int perfdata_order_next(struct perfdata_order *o, struct perfdata_reader *r,
			struct perfdata_record *rec, char *err,
			size_t errlen);

const struct perfdata_order_stats *perfdata_order_stats(
	const struct perfdata_order *o);

#endif
