/*
 * Inside the perfdata room: the layout of struct perfdata_writer, shared
 * by perfdata_write.c (records) and perfdata_write_trailer.c (what close
 * writes after them).
 */
#ifndef MEMTOP_PERFDATA_WRITE_INT_H
#define MEMTOP_PERFDATA_WRITE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata_featw.h"
#include "perfdata_format.h"
#include "perfdata_write.h"
#include "record.h"
#include "u64idx.h"

#define PERFDATA_WBUF		(1u << 20)
#define PERFDATA_MAX_WEVENTS	64

struct perfdata_wevent {
	unsigned char attr[PERFDATA_ATTR_SIZE_MAX_WRITE];	/* host order */
	struct record_layout layout;
	char name[128];
	uint64_t *ids;
	size_t n_ids;
	size_t cap_ids;
};

struct perfdata_writer {
	int fd;
	char *path;
	struct perfdata_writer_opts opts;
	unsigned char *buf;
	size_t buf_len;
	int error;		/* first write error, sticky */

	struct perfdata_wevent events[PERFDATA_MAX_WEVENTS];
	size_t n_events;
	/* Every listed id, for repeats and for the swap's layout lookup:
	 * open addressing, key 0 = empty, value = event index. */
	struct u64idx ids;

	uint64_t block_size;
	int16_t *block_node;
	size_t n_blocks;
	struct perfdata_pmu_map *pmus;
	size_t n_pmus;
	/* BUILD_ID: the files MMAP2 records gave a build id, one each. */
	struct perfdata_build_id *build_ids;
	size_t n_build_ids;

	struct perfdata_writer_stats stats;
	uint64_t round_at;	/* stats.records at the last round */
	uint64_t scratch[(65536 + 8) / 8];
};

struct perfdata_bytes;

/* perfdata_buildid.c: notes the build id a host-order MMAP2 record
 * carries (PERF_RECORD_MISC_MMAP_BUILD_ID) for the BUILD_ID feature. */
void perfdata_w_note_build_id(struct perfdata_writer *w,
			      const struct perf_event_header *hdr);

/*
 * Everything after the data section, as one buffer: feature index and
 * bodies, attrs, ids.  Fills h's sections and feature bits.  0 or
 * -ENOMEM.
 */
int perfdata_w_trailer(struct perfdata_writer *w, struct perfdata_bytes *out,
		       struct perfdata_file_header *h);
/* h as the file's first PERFDATA_HEADER_SIZE bytes, in the byte order
 * asked for. */
void perfdata_w_header_bytes(const struct perfdata_file_header *h, bool swap,
			     unsigned char out[PERFDATA_HEADER_SIZE]);

#endif
