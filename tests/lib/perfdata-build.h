/*
 * perf.data test material built by hand, shared by test-perfdata and
 * test-perfdata-hostile: records (struct rb), whole images in memory
 * (struct buf), the reference file both read back or break, and the
 * temporary directory it is written to.
 */
#ifndef MEMTOP_PERFDATA_BUILD_H
#define MEMTOP_PERFDATA_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata_format.h"

#define ST_SAMPLE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |		\
		   PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |	\
		   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |			\
		   PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |		\
		   PERF_SAMPLE_PHYS_ADDR)
/* The second event: different sample_type, told apart by IDENTIFIER. */
#define ST_SAMPLE2 (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |		\
		    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |	\
		    PERF_SAMPLE_RAW)

/* A record under construction, 8-byte aligned. */
struct rb {
	uint64_t w[64];
	size_t n;		/* u64 words, header included */
};

/* An ST_SAMPLE record. */
const struct perf_event_header *
mk_sample(struct rb *b, uint64_t id, uint32_t pid, uint64_t time,
	  uint64_t addr, uint64_t phys);
struct perf_event_attr mk_attr(uint64_t sample_type, uint64_t config);

/* Appends a record (pipe mode or data) to a byte buffer. */
struct buf {
	unsigned char p[1 << 16];
	size_t len;
};

void buf_put(struct buf *b, const void *p, size_t n);
void buf_u64(struct buf *b, uint64_t v);
void buf_u32(struct buf *b, uint32_t v);
void buf_hdr(struct buf *b, uint32_t type, size_t size);

/* Makes the temporary directory (or skips the test), names a file in
 * it, removes it with all it holds. */
void tmpdir_make(void);
void path_in_tmp(char *buf, size_t len, const char *name);
void tmpdir_remove(void);

/* Writes the reference file: 2 events, 4 nodes, every record type. */
int write_file(const char *path, bool swap);

#endif
