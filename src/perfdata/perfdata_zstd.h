/*
 * The records inside perf.data COMPRESSED / COMPRESSED2 records: one zstd
 * stream that runs across them, whose output is more records.  A record
 * may be split between two compressed records, so undelivered bytes are
 * kept until the next one.  Owned by the reader.
 *
 * Output is bounded: per compressed record by the COMPRESSED feature's
 * mmap_len (perf compresses at most one ring flush into it), and in total
 * by a ratio to the compressed bytes seen, so a zstd bomb ends in -EPROTO
 * instead of memory or time.
 */
#ifndef MEMTOP_PERFDATA_ZSTD_H
#define MEMTOP_PERFDATA_ZSTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perfdata_zstd;

/* Largest record a perf_event_header can describe. */
#define PERFDATA_MAX_RECORD 65535

int perfdata_zstd_new(struct perfdata_zstd **out, uint64_t mmap_len);
void perfdata_zstd_free(struct perfdata_zstd *z);	/* NULL-safe */

/* Takes the payload of one compressed record (not copied: it must stay
 * valid until perfdata_zstd_next() returns 0). */
void perfdata_zstd_feed(struct perfdata_zstd *z, const void *in, size_t len);

/*
 * Copies the next whole decompressed record into out (room for
 * PERFDATA_MAX_RECORD bytes, 8-byte aligned), its header still in the
 * file's byte order (swap says how to read its size).  1 = a record, 0 =
 * the fed payload is used up, -EPROTO with a reason in err.
 */
int perfdata_zstd_next(struct perfdata_zstd *z, void *out, bool swap,
		       char *err, size_t errlen);

/* Bytes of a started record waiting for the next compressed record. */
size_t perfdata_zstd_pending(const struct perfdata_zstd *z);
uint64_t perfdata_zstd_out_bytes(const struct perfdata_zstd *z);

#endif
