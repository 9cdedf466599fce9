/*
 * The perf.data reader's insides, shared by its three files:
 * perfdata_read.c (the file: header, attrs, features, opening),
 * perfdata_events.c (events: attrs, ids, names, which event a record
 * belongs to) and perfdata_records.c (the data: records, pipe-mode header
 * records, compressed data).  Not for other modules: see perfdata_read.h.
 */
#ifndef MEMTOP_PERFDATA_READER_INT_H
#define MEMTOP_PERFDATA_READER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata_read.h"
#include "perfdata_zstd.h"
#include "u64idx.h"

/* Above any real attr (136 today); the cap keeps a hostile attr_size
 * from making every entry of the attrs section a huge copy. */
#define PERFDATA_MAX_ATTR_SIZE	4096
#define PERFDATA_MAX_EVENTS	1024

enum perfdata_id_mode {
	PERFDATA_ID_SINGLE,	/* one event */
	PERFDATA_ID_IDENTIFIER,
	PERFDATA_ID_POS,	/* ID at id_pos_sample / id_pos_other */
	PERFDATA_ID_FIRST,	/* equal sample_type, no id: event 0 */
	PERFDATA_ID_AMBIGUOUS,
};

struct perfdata_reader {
	const unsigned char *img;
	size_t size;
	void *map;
	unsigned char *owned;
	bool swap;
	bool pipe;

	struct perfdata_event *events;
	size_t n_events;
	enum perfdata_id_mode id_mode;
	unsigned id_pos_sample;	/* u64 index into a SAMPLE body */
	unsigned id_pos_other;	/* u64 index from the end of others */
	/* id -> event index (the kernel's ids start at 1). */
	struct u64idx ids;

	uint64_t pos;		/* next record in the image */
	uint64_t end;		/* end of the data section */
	struct perfdata_zstd *zstd;
	uint64_t zstd_offset;	/* of the COMPRESSED record being read */
	bool done;
	int stop_ret;		/* what next() returns once done */

	struct perfdata_info info;
	struct perfdata_stats stats;
	/* One record, aligned: perf_event_header.size is a u16. */
	uint64_t scratch[(PERFDATA_MAX_RECORD + 8) / 8];
};


/* Formats err (one line) and returns ret. */
int perfdata_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* [off, off + len) lies inside the image, without overflow. */
bool perfdata_in_image(const struct perfdata_reader *r, uint64_t off,
		       uint64_t len);
/* The u64 at off of the image, in host order (off checked by caller). */
uint64_t perfdata_u64_at(const struct perfdata_reader *r, uint64_t off);

/* perfdata_events.c */
int perfdata_take_attr(struct perfdata_reader *r, struct perfdata_event *ev,
		       const unsigned char *p, size_t avail, char *err,
		       size_t errlen);
int perfdata_add_event(struct perfdata_reader *r, struct perfdata_event **out,
		       char *err, size_t errlen);
int perfdata_set_ids(struct perfdata_reader *r, struct perfdata_event *ev,
		     const unsigned char *p, size_t n);
int perfdata_id_index(struct perfdata_reader *r, size_t first);
int perfdata_id_mode(struct perfdata_reader *r, char *err, size_t errlen);
uint32_t perfdata_event_of(const struct perfdata_reader *r,
			   const struct perf_event_header *hdr);
int perfdata_header_attr(struct perfdata_reader *r,
			 const struct perf_event_header *hdr, char *err,
			 size_t errlen);
void perfdata_event_update(struct perfdata_reader *r,
			   const struct perf_event_header *hdr);
void perfdata_apply_names(struct perfdata_reader *r);

/* perfdata_records.c */
int perfdata_prime_pipe(struct perfdata_reader *r, char *err, size_t errlen);

#endif
