/*
 * perf.data reader: version 2 files and pipe mode, either byte order,
 * zstd-compressed data.  Hands out records one at a time in host byte
 * order, each with the event (attr) it belongs to.  One thread at a time
 * (the replay thread once replay starts).
 *
 * Input is not trusted.  Every offset and length is checked against the
 * file and its sections before use, and nothing is allocated beyond a
 * small multiple of the bytes that justify it; decompression is bounded
 * per record and in total.  Bad input gives -EPROTO (malformed) or
 * -EINVAL (not perf.data at all) with a one-line reason.  Records and
 * features memtop does not know are skipped and counted.
 */
#ifndef MEMTOP_PERFDATA_READ_H
#define MEMTOP_PERFDATA_READ_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata_feat.h"
#include "record.h"

struct perfdata_reader;

/* One event of the file: an attr, its name and the ids that point at it. */
struct perfdata_event {
	struct perf_event_attr attr;	/* host order; zero past file size */
	uint32_t file_attr_size;	/* attr.size as written (0 -> 64) */
	char name[128];			/* EVENT_DESC / EVENT_UPDATE, or
					 * derived from type and config */
	uint64_t *ids;
	size_t n_ids;
	struct record_layout layout;
};

#define PERFDATA_NO_EVENT UINT32_MAX

struct perfdata_record {
	/* Host order, 8-byte aligned; valid until the next call. */
	const struct perf_event_header *hdr;
	uint32_t event_idx;		/* PERFDATA_NO_EVENT when unknown */
	uint64_t offset;		/* in the file (of the COMPRESSED
					 * record for decompressed ones) */
	/* hdr lies in the file image itself (host order, aligned, not
	 * compressed): valid until the reader is freed, not just until the
	 * next call. */
	bool stable;
};

struct perfdata_stats {
	uint64_t records;		/* handed out */
	uint64_t skipped_records;	/* perf bookkeeping memtop ignores */
	uint64_t unknown_records;	/* record types this reader lacks */
	uint64_t unmatched;		/* ids that name no event */
	uint64_t bad_records;		/* bodies that could not be swapped */
	uint64_t compressed_records;
	uint64_t compressed_bytes;
	uint64_t decompressed_bytes;
};

/*
 * Opens path ("-" = standard input, read to its end) and reads the header,
 * attrs, ids and features (pipe mode: the leading HEADER_ATTR and
 * HEADER_FEATURE records).  0 or -errno with a one-line reason.
 */
int perfdata_reader_open(struct perfdata_reader **out, const char *path,
			 char *err, size_t errlen);
/* The same over a memory image, which must outlive the reader. */
int perfdata_reader_open_mem(struct perfdata_reader **out, const void *data,
			     size_t size, char *err, size_t errlen);
void perfdata_reader_free(struct perfdata_reader *r);	/* NULL-safe */

/*
 * The next record: 1 with *rec filled, 0 at the end of the data, or
 * -EPROTO / -ENOMEM with a one-line reason (the reader is then done).
 * Records of every kernel type (below 64) and FINISHED_ROUND are handed
 * out; perf's header records are applied or skipped here.
 */
int perfdata_reader_next(struct perfdata_reader *r,
			 struct perfdata_record *rec, char *err,
			 size_t errlen);

/* May grow in pipe mode as HEADER_ATTR records arrive. */
size_t perfdata_reader_n_events(const struct perfdata_reader *r);
const struct perfdata_event *perfdata_reader_event(
	const struct perfdata_reader *r, size_t idx);
const struct perfdata_info *perfdata_reader_info(
	const struct perfdata_reader *r);
const struct perfdata_stats *perfdata_reader_stats(
	const struct perfdata_reader *r);
bool perfdata_reader_is_pipe(const struct perfdata_reader *r);
bool perfdata_reader_is_swapped(const struct perfdata_reader *r);
/* Bytes of input (the file size). */
uint64_t perfdata_reader_size(const struct perfdata_reader *r);

/*
 * A name for an attr without one in the file: "page-faults", "cycles",
 * "ibs_op/config=0x.../" (PMU_MAPPINGS names dynamic types), or
 * "type N/config=0x...".
 */
void perfdata_event_name(const struct perf_event_attr *attr,
			 const struct perfdata_info *info, char *buf,
			 size_t len);

#endif
