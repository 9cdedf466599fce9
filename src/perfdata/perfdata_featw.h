/*
 * Feature sections for the perf.data writer, built into a byte buffer in
 * the file's byte order: host strings, NRCPUS, NUMA_TOPOLOGY (from a
 * struct topo), MEM_TOPOLOGY and PMU_MAPPINGS (from sysfs, honouring
 * MEMTOP_SYSFS_ROOT, or given by the caller).  Layouts in perfdata_feat.c.
 * The writer's thread.
 */
#ifndef MEMTOP_PERFDATA_FEATW_H
#define MEMTOP_PERFDATA_FEATW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct topo;

/* A growing buffer; `oom` is sticky and checked once at the end. */
struct perfdata_bytes {
	unsigned char *p;
	size_t len;
	size_t cap;
	bool swap;
	bool oom;
};

void perfdata_put_bytes(struct perfdata_bytes *b, const void *p, size_t n);
void perfdata_put_u32(struct perfdata_bytes *b, uint32_t v);
void perfdata_put_u64(struct perfdata_bytes *b, uint64_t v);
/* perf's string: u32 length padded to 64 bytes with the NUL, then it. */
void perfdata_put_string(struct perfdata_bytes *b, const char *s);
void perfdata_bytes_fini(struct perfdata_bytes *b);

struct perfdata_build_id;
/* BUILD_ID (perfdata_buildid.c): one entry per file. */
void perfdata_featw_build_ids(struct perfdata_bytes *b,
			      const struct perfdata_build_id *ids, size_t n);

/* NRCPUS: every CPU of topo is counted as available and online. */
void perfdata_featw_nrcpus(struct perfdata_bytes *b, const struct topo *t);
/* NUMA_TOPOLOGY: each node of topo with its memory and cpulist. */
void perfdata_featw_numa(struct perfdata_bytes *b, const struct topo *t);

/*
 * MEM_TOPOLOGY from block_node[b] = node of memory block b (-1 = none):
 * one bitmap per node.  n_blocks 0 writes nothing and returns false.
 */
bool perfdata_featw_mem(struct perfdata_bytes *b, uint64_t block_size,
			const int16_t *block_node, size_t n_blocks);
/*
 * This machine's block map: devices/system/memory/block_size_bytes and
 * devices/system/node/nodeN/memoryM.  0, -ENOENT when sysfs publishes no
 * memory blocks, -ENOMEM.  *block_node is malloc'd.
 */
int perfdata_featw_mem_sysfs(uint64_t *block_size, int16_t **block_node,
			     size_t *n_blocks);

/*
 * TRACING_DATA for the tracepoints named "system:event", which perf needs
 * to read tracepoint samples ("broken or missing trace data" otherwise):
 * perf's trace-event-info.c layout, built from this machine's tracefs:
 *
 *   "\027\010\104tracing" "0.6\0" u8 big_endian u8 sizeof(long)
 *   u32 page_size
 *   "header_page\0" u64 size, text; "header_event\0" u64 size, text
 *   u32 0 (ftrace events)
 *   u32 systems; per system: name\0 u32 events; per event: u64 size,
 *   its format file
 *   u32 0 (kallsyms) u32 0 (printk formats) u64 0 (saved cmdlines)
 *
 * 0, or -ENOENT when tracefs lacks a file, -ENOMEM.
 */
int perfdata_featw_tracing(struct perfdata_bytes *b,
			   const char *const *names, size_t n);

struct perfdata_pmu_map {
	uint32_t type;
	char name[64];
};
/* PMU_MAPPINGS from a list. */
void perfdata_featw_pmus(struct perfdata_bytes *b,
			 const struct perfdata_pmu_map *pmus, size_t n);
/* Every bus/event_source/devices/NAME/type.  Count (>= 0) or -errno;
 * *pmus is malloc'd. */
int perfdata_featw_pmus_sysfs(struct perfdata_pmu_map **pmus);

#endif
