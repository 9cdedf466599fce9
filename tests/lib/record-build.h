/*
 * Records laid out by hand for the record_* decoder tests (test-record,
 * test-record-variable, test-record-nonsample), field by field in the
 * order perf_output_sample() writes them (docs/kernel.md, "SAMPLE records").
 */
#ifndef MEMTOP_RECORD_BUILD_H
#define MEMTOP_RECORD_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* A record under construction; u64 storage keeps it 8-byte aligned. */
struct rb {
	uint64_t buf[128];
	size_t len;
};

struct perf_event_header *rb_hdr(struct rb *b);
void rb_begin(struct rb *b, uint32_t type);
void rb_bytes(struct rb *b, const void *p, size_t len);
void rb_u64(struct rb *b, uint64_t v);
void rb_u32(struct rb *b, uint32_t v);
/* Sets the header's size to what was written; returns the header. */
const struct perf_event_header *rb_end(struct rb *b);

/*
 * Every shorter 8-byte-aligned size and one 8 bytes longer must be
 * refused, and a refusal leaves nothing behind in out.
 */
void check_size_exact(const struct record_layout *l, struct rb *b);

#endif
