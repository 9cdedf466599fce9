/*
 * Decoding of kernel perf records into struct sample and friends.
 * Pure functions over bytes; no thread state.
 */
#ifndef MEMTOP_RECORD_H
#define MEMTOP_RECORD_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"

/* What the attr asked for; needed to walk a record. */
struct record_layout {
	uint64_t sample_type;
	uint64_t read_format;
	bool sample_id_all;
};

/* Everything a SAMPLE record carries that memtop uses. */
struct record_sample {
	uint64_t identifier;	/* IDENTIFIER or ID; 0 when absent */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint32_t cpu;
	uint64_t period;
	uint64_t weight;	/* WEIGHT, or WEIGHT_STRUCT var1_dw */
	uint64_t weight_var2;	/* WEIGHT_STRUCT var2_w (instr latency) */
	uint64_t data_src;
	uint64_t phys_addr;
	uint64_t data_page_size;
	const void *raw;	/* RAW payload inside the record; NULL if none */
	uint32_t raw_size;
	uint64_t present;	/* the sample_type bits that were decoded */
};

/* The sample_id_all trailer of a non-sample record. */
struct record_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t identifier;
};

/*
 * Decodes a PERF_RECORD_SAMPLE of `size` bytes (header included) laid out
 * for `l`.  0, or -EINVAL when the record is shorter than its fields or has
 * bytes left over (attr and parser drifted), or -ENOTSUP for sample_type
 * bits the decoder cannot walk (e.g. REGS_*, STACK_USER, BRANCH_STACK).
 */
int record_parse_sample(const struct record_layout *l,
			const struct perf_event_header *hdr,
			struct record_sample *out);

/* Reads the IDENTIFIER of any record (first u64 of a SAMPLE body, last u64
 * of others with sample_id_all).  0 or -EINVAL. */
int record_identifier(const struct perf_event_header *hdr, uint64_t *id);

/* Decodes the sample_id_all trailer of a non-sample record whose fixed body
 * is body_size bytes.  0 or -EINVAL. */
int record_parse_id(const struct record_layout *l,
		    const struct perf_event_header *hdr, size_t body_size,
		    struct record_id *out);

/* Fixed body sizes (bytes after the header, before the trailer). */
#define RECORD_FORK_BODY	24	/* u32 pid, ppid, tid, ptid; u64 time */
#define RECORD_LOST_BODY	16	/* u64 id, lost */
#define RECORD_LOST_SAMPLES_BODY 8	/* u64 lost */
#define RECORD_THROTTLE_BODY	24	/* u64 time, id, stream_id */

struct record_task {		/* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};
int record_parse_task(const struct perf_event_header *hdr,
		      struct record_task *out);
/* LOST: *lost = lost count.  LOST_SAMPLES likewise. */
int record_parse_lost(const struct perf_event_header *hdr, uint64_t *lost);
/* COMM: pid, tid and the name (NUL-terminated copy, at most 16 bytes). */
int record_parse_comm(const struct perf_event_header *hdr, uint32_t *pid,
		      uint32_t *tid, char comm[16]);

#endif
