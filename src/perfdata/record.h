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
	/* attr.branch_sample_type: HW_INDEX and COUNTERS size BRANCH_STACK */
	uint64_t branch_sample_type;
	/* attr.sample_regs_user / _intr: their popcount sizes REGS_* */
	uint64_t sample_regs_user;
	uint64_t sample_regs_intr;
};

/* Not in every uapi header memtop builds with (Linux 6.8). */
#define RECORD_BRANCH_COUNTERS	(UINT64_C(1) << 19)

/* A field of variable size: where it sits in the record, and its count
 * (u64 words, or bytes for RAW, STACK_USER and AUX). */
struct record_span {
	const void *p;		/* NULL when absent */
	uint64_t n;
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
	uint64_t id, stream_id;	/* ID and STREAM_ID as written */
	uint64_t transaction;
	uint64_t cgroup;
	uint64_t code_page_size;
	/*
	 * The first user frame of the call chain beyond the sampled ip
	 * (record_callchain_caller); 0 without one.  Only
	 * record_parse_sample fills it and the fields below: the fixed
	 * layouts have none of them.
	 */
	uint64_t caller;
	struct record_span read;	/* u64 words as read_format says */
	struct record_span callchain;	/* ips[n] */
	struct record_span branches;	/* n entries of 3 u64 (from, to,
					 * flags) */
	uint64_t branch_hw_idx;		/* with BRANCH_HW_INDEX, else 0 */
	struct record_span branch_counters;	/* u64[n] with COUNTERS */
	uint64_t regs_user_abi;		/* 0: no registers (kernel thread) */
	struct record_span regs_user;	/* u64 regs[popcount(mask)] */
	struct record_span stack_user;	/* bytes as the kernel sized it */
	uint64_t stack_user_dyn;	/* dyn_size: bytes of it filled */
	uint64_t regs_intr_abi;
	struct record_span regs_intr;
	struct record_span aux;		/* bytes */
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
 * A SAMPLE body's fields in the order perf_output_sample() writes them
 * (record.c lists them with the sample_type bit that puts each in).  One
 * list drives record_parse_sample, the fixed layouts of the live fast
 * path (collector/live/ingest.c) and of replay (collector/replay/).
 */
enum record_field {
	RECORD_F_IDENTIFIER,
	RECORD_F_IP,
	RECORD_F_TID,		/* u32 pid, u32 tid */
	RECORD_F_TIME,
	RECORD_F_ADDR,
	RECORD_F_ID,
	RECORD_F_STREAM_ID,
	RECORD_F_CPU,		/* u32 cpu, u32 reserved */
	RECORD_F_PERIOD,
	RECORD_F_READ,		/* size from read_format */
	RECORD_F_CALLCHAIN,	/* u64 nr; u64 ips[nr] */
	RECORD_F_RAW,		/* u32 size; size bytes */
	RECORD_F_BRANCH_STACK,	/* u64 nr; [hw_idx]; nr x 24; [nr x 8] */
	RECORD_F_REGS_USER,	/* u64 abi; abi ? popcount(mask) x 8 */
	RECORD_F_STACK_USER,	/* u64 size; size bytes; size ? dyn_size */
	RECORD_F_WEIGHT,	/* WEIGHT or WEIGHT_STRUCT */
	RECORD_F_DATA_SRC,
	RECORD_F_TRANSACTION,
	RECORD_F_REGS_INTR,	/* as REGS_USER, sample_regs_intr */
	RECORD_F_PHYS_ADDR,
	RECORD_F_CGROUP,
	RECORD_F_DATA_PAGE_SIZE,
	RECORD_F_CODE_PAGE_SIZE,
	RECORD_F_AUX,		/* u64 size; size bytes */
	RECORD_F__N
};

/*
 * Where each field of a SAMPLE record laid out for l sits when its RAW
 * payload (if any) is raw_size bytes: off[f] bytes from the record's
 * start, -1 when absent (RAW's offset is that of its u32 size).  Returns
 * the record's size, or 0 when the layout has no fixed offsets: a
 * CALLCHAIN, BRANCH_STACK, REGS_*, STACK_USER or AUX, a READ group, a
 * layout record_parse_sample refuses, or more than 65535 bytes.
 */
uint32_t record_fixed_layout(const struct record_layout *l, uint32_t raw_size,
			     int32_t off[RECORD_F__N]);

/*
 * Fills out from the u64 each field of sample_type st holds (v[f], 0 for
 * absent ones), as record_parse_sample does: pid and tid, cpu, the
 * identifier (IDENTIFIER, else ID), the WEIGHT_STRUCT halves.  raw and
 * raw_size are left as they are.  Inline: replay calls it per sample.
 */
static inline void
record_sample_fill(const uint64_t v[RECORD_F__N], uint64_t st,
		   struct record_sample *out)
{
	/* {pid, tid} and {cpu, res}: the first u32 is the low half of the
	 * u64 in host (little-endian) order, as the kernel writes it. */
	out->identifier = (st & PERF_SAMPLE_IDENTIFIER) ?
			  v[RECORD_F_IDENTIFIER] : v[RECORD_F_ID];
	out->ip = v[RECORD_F_IP];
	out->pid = (uint32_t)v[RECORD_F_TID];
	out->tid = (uint32_t)(v[RECORD_F_TID] >> 32);
	out->time = v[RECORD_F_TIME];
	out->addr = v[RECORD_F_ADDR];
	out->cpu = (uint32_t)v[RECORD_F_CPU];
	out->period = v[RECORD_F_PERIOD];
	/* union perf_sample_weight: var1_dw is the low 32 bits and var2_w
	 * the next 16 of the u64 on either byte order. */
	if (st & PERF_SAMPLE_WEIGHT_STRUCT) {
		out->weight = v[RECORD_F_WEIGHT] & UINT32_MAX;
		out->weight_var2 = (v[RECORD_F_WEIGHT] >> 32) & UINT16_MAX;
	} else {
		out->weight = v[RECORD_F_WEIGHT];
		out->weight_var2 = 0;
	}
	out->data_src = v[RECORD_F_DATA_SRC];
	out->phys_addr = v[RECORD_F_PHYS_ADDR];
	out->data_page_size = v[RECORD_F_DATA_PAGE_SIZE];
	out->present = st;
	out->id = v[RECORD_F_ID];
	out->stream_id = v[RECORD_F_STREAM_ID];
	out->transaction = v[RECORD_F_TRANSACTION];
	out->cgroup = v[RECORD_F_CGROUP];
	out->code_page_size = v[RECORD_F_CODE_PAGE_SIZE];
}

/*
 * Decodes a PERF_RECORD_SAMPLE of `size` bytes (header included) laid out
 * for `l`.  0, or -EINVAL when the record is shorter than its fields or has
 * bytes left over (attr and parser drifted), or -ENOTSUP for sample_type
 * bits no kernel defines (or read_format bits), so the record cannot be
 * walked.  Every field of Linux 6.18's perf_output_sample() is walked.
 */
int record_parse_sample(const struct record_layout *l,
			const struct perf_event_header *hdr,
			struct record_sample *out);

/*
 * The first user-space frame of a call chain (ips[n], context markers
 * included) past the sampled ip: the user context's first entry is the ip
 * itself when the sample was taken in user space, so the entry after it;
 * 0 when there is none.  Entries before any marker count as user space
 * when they lie in the lower half (a chain without markers).
 */
uint64_t record_callchain_caller(const void *ips, uint64_t n, uint64_t ip);

/*
 * The TIME of any record laid out for l: a SAMPLE's TIME field, another
 * record's sample_id_all trailer.  0 with *time, or -ENOENT when the
 * record carries none (no TIME, no sample_id_all, too short).
 */
int record_time(const struct record_layout *l,
		const struct perf_event_header *hdr, uint64_t *time);

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
