/*
 * perf.data feature sections that memtop reads: topology (NUMA_TOPOLOGY,
 * MEM_TOPOLOGY, NRCPUS, CPU_TOPOLOGY), event names (EVENT_DESC), dynamic
 * PMU types (PMU_MAPPINGS), compression (COMPRESSED) and the host strings.
 * The same parser serves a file's feature sections and pipe mode's
 * HEADER_FEATURE records.  Owned by whoever owns the reader.
 */
#ifndef MEMTOP_PERFDATA_FEAT_H
#define MEMTOP_PERFDATA_FEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct topo;

struct perfdata_numa_node {
	int32_t node;
	uint64_t mem_total_kb;
	uint64_t mem_free_kb;
	char *cpus;		/* kernel cpulist, "0-3,8"; "" when none */
};

/* MEM_TOPOLOGY: memory block b (phys / block_size) is on `node` when bit
 * b of bitmap is set. */
struct perfdata_mem_node {
	uint64_t node;
	uint64_t nr_bits;
	uint64_t *bitmap;	/* (nr_bits + 63) / 64 words, host order */
};

struct perfdata_pmu {
	uint32_t type;
	char name[64];
};

/* BUILD_ID entry (perfdata_buildid.c): the file at path had this id. */
struct perfdata_build_id {
	int32_t pid;
	uint8_t id[20];
	uint8_t size;
	char *path;
};

/* EVENT_DESC entry: a name for the attr that owns first_id. */
struct perfdata_event_name {
	char name[128];
	uint64_t first_id;
	bool has_id;
};

struct perfdata_info {
	uint64_t present[4];		/* feature bits parsed */
	char hostname[128];
	char os_release[128];
	char perf_version[64];
	char arch[32];
	/* CMDLINE: the recording command's arguments joined by spaces (as
	 * perf report --header shows them), cut at the end. */
	char cmdline[1024];
	uint32_t nr_cpus_avail;		/* NRCPUS; 0 = unknown */
	uint32_t nr_cpus_online;
	bool has_cpu_topology;

	struct perfdata_numa_node *nodes;
	size_t n_nodes;

	uint64_t mem_block_size;	/* 0 = no MEM_TOPOLOGY */
	struct perfdata_mem_node *mem;
	size_t n_mem;

	struct perfdata_pmu *pmus;
	size_t n_pmus;

	struct perfdata_event_name *names;
	size_t n_names;

	struct perfdata_build_id *build_ids;	/* BUILD_ID */
	size_t n_build_ids;

	bool compressed;
	uint32_t comp_type;		/* PERFDATA_COMP_ZSTD */
	uint32_t comp_level;
	uint32_t comp_mmap_len;

	uint64_t unknown_features;	/* skipped: memtop does not read them */
	uint64_t bad_features;		/* optional ones that did not parse */
};

/*
 * Parses feature `bit` from body[0..len) in the file's byte order.  Known
 * features replace what an earlier copy of the same feature gave.  0, or
 * -EPROTO with a one-line reason in err when a feature memtop depends on
 * (NUMA_TOPOLOGY, MEM_TOPOLOGY, PMU_MAPPINGS, COMPRESSED) is malformed; a
 * malformed optional one only counts in bad_features.  -ENOMEM.
 */
int perfdata_feat_parse(struct perfdata_info *info, unsigned bit,
			const void *body, size_t len, bool swap, char *err,
			size_t errlen);

/* perf's name of a feature bit ("NUMA_TOPOLOGY"), "bit N" if unnamed. */
const char *perfdata_feat_name(unsigned bit, char *buf, size_t len);

/* The node holding physical address phys per MEM_TOPOLOGY, or -1. */
int perfdata_info_phys_node(const struct perfdata_info *info, uint64_t phys);

/*
 * The topology the recording describes: NUMA_TOPOLOGY's nodes, CPUs and
 * memory, with at least NRCPUS CPUs; without NUMA_TOPOLOGY one node 0
 * holding NRCPUS CPUs (this machine's count when that is missing too).
 * NULL on ENOMEM or a malformed cpu list, with a reason in err.
 */
struct topo *perfdata_info_topo(const struct perfdata_info *info, char *err,
				size_t errlen);

/* Frees what info owns and zeroes it.  NULL-safe, idempotent. */
void perfdata_info_fini(struct perfdata_info *info);

/* perfdata_buildid.c: BUILD_ID's entries from c (replacing earlier
 * ones); 0, -EINVAL (malformed) or -ENOMEM. */
struct perfdata_cursor;
int perfdata_parse_build_ids(struct perfdata_info *info,
			     struct perfdata_cursor *c);
void perfdata_free_build_ids(struct perfdata_info *info);

#endif
