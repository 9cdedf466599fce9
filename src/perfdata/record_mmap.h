/*
 * Decoding of the kernel's mapping records, MMAP and MMAP2, the side-band
 * that names memory (names_records.c in src/names takes what this gives).
 * Pure functions over bytes; no thread state.
 */
#ifndef MEMTOP_RECORD_MMAP_H
#define MEMTOP_RECORD_MMAP_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECORD_MMAP_BODY	32	/* u32 pid, tid; u64 addr, len, pgoff */
#define RECORD_MMAP2_BODY	64	/* the above; 24 bytes id; prot, flags */
#define RECORD_BUILD_ID_MAX	20

struct record_mmap {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	/* MMAP2 without PERF_RECORD_MISC_MMAP_BUILD_ID; 0 otherwise. */
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	/* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID (attr.build_id): the
	 * file's build id, build_id_size 0 when the kernel could not read
	 * it. */
	uint8_t build_id[RECORD_BUILD_ID_MAX];
	uint8_t build_id_size;
	bool has_build_id;	/* the record is of the build-id kind */
	bool mmap2;
	uint32_t prot, flags;	/* PROT_*, MAP_*; MMAP: from misc only */
	bool exec;		/* MMAP: not PERF_RECORD_MISC_MMAP_DATA */
	/* Inside the record, NUL-terminated within it; "//anon" for
	 * anonymous memory, "[heap]", "[stack]", or a path. */
	const char *filename;
	size_t filename_len;
	/* Bytes of the record from its start to the sample_id trailer. */
	size_t body_end;
};

/* Decodes an MMAP or MMAP2 record.  0, or -EINVAL when it is shorter than
 * its fixed fields or its file name is not terminated inside it. */
int record_parse_mmap(const struct perf_event_header *hdr,
		      struct record_mmap *out);

/*
 * Builds an MMAP2 record (host order) into buf (at least
 * record_mmap2_size(name) bytes; trailer bytes, tlen of them, copied
 * after the name).  Returns its size, or 0 when it would not fit 64 KiB.
 */
size_t record_mmap2_size(const char *name, size_t tlen);
size_t record_build_mmap2(void *buf, const struct record_mmap *m,
			  const char *name, const void *trailer,
			  size_t tlen);

#endif
