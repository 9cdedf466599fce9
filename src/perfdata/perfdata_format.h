/*
 * perf.data version 2 on disk: the constants and layouts the reader and
 * the writer share (tools/perf/Documentation/perf.data-file-format.txt,
 * tools/perf/util/header.c; docs/kernel.md, "perf.data").  Plain data.
 *
 * File mode:
 *   struct perfdata_file_header (104 bytes) at offset 0
 *   attrs:  attrs.size / attr_size entries of
 *           { perf_event_attr (attr_size - 16 bytes); perfdata_section ids }
 *   ids:    u64 arrays the attr entries point at
 *   data:   records (kernel ones and perf's user types, 64 and up)
 *   features: right after the data section, one perfdata_section per bit
 *           set in the header's feature bitmap, in ascending bit order,
 *           each pointing at that feature's bytes
 * Pipe mode:
 *   { u64 magic; u64 size = 16 } then records only; attrs arrive as
 *   HEADER_ATTR records and features as HEADER_FEATURE records.
 *
 * Every integer is in the byte order of the machine that wrote the file;
 * the magic read as a u64 tells which.
 */
#ifndef MEMTOP_PERFDATA_FORMAT_H
#define MEMTOP_PERFDATA_FORMAT_H

#include <stdint.h>

/* "PERFILE2" read as a little-endian u64; swapped = other byte order. */
#define PERFDATA_MAGIC		UINT64_C(0x32454c4946524550)
#define PERFDATA_MAGIC_SWAPPED	UINT64_C(0x50455246494c4532)

#define PERFDATA_HEADER_SIZE	104
#define PERFDATA_PIPE_HEADER_SIZE 16
#define PERFDATA_FEAT_BITS	256

/*
 * perf 6.1 refuses attrs larger than the struct it was built with (128
 * bytes, PERF_ATTR_SIZE_VER7): "file uses a more recent and unsupported
 * ABI".  The writer never writes more.
 */
#define PERFDATA_ATTR_SIZE_MAX_WRITE 128
/* The first published perf_event_attr; attr.size 0 means this. */
#define PERFDATA_ATTR_SIZE_VER0	64

struct perfdata_section {
	uint64_t offset;
	uint64_t size;
};

struct perfdata_file_header {
	uint64_t magic;
	uint64_t size;			/* 104 */
	uint64_t attr_size;		/* one attrs entry: attr + 16 */
	struct perfdata_section attrs;
	struct perfdata_section data;
	struct perfdata_section event_types;	/* unused: {0, 0} */
	uint64_t features[PERFDATA_FEAT_BITS / 64];
};

_Static_assert(sizeof(struct perfdata_file_header) == PERFDATA_HEADER_SIZE,
	       "perf.data header is 104 bytes");

/* perf's own record types (tools/lib/perf/include/perf/event.h). */
enum perfdata_user_type {
	PERFDATA_REC_HEADER_ATTR = 64,
	PERFDATA_REC_HEADER_EVENT_TYPE = 65,
	PERFDATA_REC_HEADER_TRACING_DATA = 66,	/* u32 size; payload after */
	PERFDATA_REC_HEADER_BUILD_ID = 67,
	PERFDATA_REC_FINISHED_ROUND = 68,
	PERFDATA_REC_ID_INDEX = 69,
	PERFDATA_REC_AUXTRACE_INFO = 70,
	PERFDATA_REC_AUXTRACE = 71,		/* u64 size; payload after */
	PERFDATA_REC_AUXTRACE_ERROR = 72,
	PERFDATA_REC_THREAD_MAP = 73,
	PERFDATA_REC_CPU_MAP = 74,
	PERFDATA_REC_STAT_CONFIG = 75,
	PERFDATA_REC_STAT = 76,
	PERFDATA_REC_STAT_ROUND = 77,
	PERFDATA_REC_EVENT_UPDATE = 78,
	PERFDATA_REC_TIME_CONV = 79,
	PERFDATA_REC_HEADER_FEATURE = 80,	/* u64 feature bit; body */
	PERFDATA_REC_COMPRESSED = 81,		/* zstd bytes */
	PERFDATA_REC_FINISHED_INIT = 82,
	PERFDATA_REC_COMPRESSED2 = 83,		/* u64 data_size; zstd bytes */
	PERFDATA_REC_USER_END = 84,
};

/* EVENT_UPDATE sub-type that carries an event name. */
#define PERFDATA_EVENT_UPDATE_NAME 2

/* Feature bits (tools/perf/util/header.h, enum HEADER_*). */
enum perfdata_feature {
	PERFDATA_FEAT_TRACING_DATA = 1,
	PERFDATA_FEAT_BUILD_ID = 2,
	PERFDATA_FEAT_HOSTNAME = 3,
	PERFDATA_FEAT_OSRELEASE = 4,
	PERFDATA_FEAT_VERSION = 5,
	PERFDATA_FEAT_ARCH = 6,
	PERFDATA_FEAT_NRCPUS = 7,
	PERFDATA_FEAT_CPUDESC = 8,
	PERFDATA_FEAT_CPUID = 9,
	PERFDATA_FEAT_TOTAL_MEM = 10,
	PERFDATA_FEAT_CMDLINE = 11,
	PERFDATA_FEAT_EVENT_DESC = 12,
	PERFDATA_FEAT_CPU_TOPOLOGY = 13,
	PERFDATA_FEAT_NUMA_TOPOLOGY = 14,
	PERFDATA_FEAT_BRANCH_STACK = 15,
	PERFDATA_FEAT_PMU_MAPPINGS = 16,
	PERFDATA_FEAT_GROUP_DESC = 17,
	PERFDATA_FEAT_MEM_TOPOLOGY = 22,
	PERFDATA_FEAT_COMPRESSED = 27,
};

/* COMPRESSED feature: { u32 version, type, level, ratio, mmap_len }. */
#define PERFDATA_COMP_ZSTD	1

/* MEM_TOPOLOGY feature version perf writes and reads. */
#define PERFDATA_MEM_TOPOLOGY_VERSION 1

#endif
