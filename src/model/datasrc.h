/*
 * PERF_SAMPLE_DATA_SRC and PERF_SAMPLE_WEIGHT_STRUCT decoding
 * (docs/kernel.md, "Data source and weight").  union perf_mem_data_src
 * packs, from bit 0:
 *
 *   mem_op 5, mem_lvl 14, mem_snoop 5, mem_lock 2, mem_dtlb 7,
 *   mem_lvl_num 4, mem_remote 1, mem_snoopx 2, mem_blk 3, mem_hops 3
 *
 * Texts are the ones perf prints (tools/perf/util/mem-events.c), which
 * users know.  Pure functions; any thread.
 */
#ifndef MEMTOP_DATASRC_H
#define MEMTOP_DATASRC_H

#include <stddef.h>
#include <stdint.h>

struct datasrc {
	unsigned op;		/* PERF_MEM_OP_* bits */
	unsigned lvl;		/* PERF_MEM_LVL_* bits (legacy) */
	unsigned snoop;		/* PERF_MEM_SNOOP_* bits */
	unsigned lock;
	unsigned dtlb;		/* PERF_MEM_TLB_* bits */
	unsigned lvl_num;	/* PERF_MEM_LVLNUM_* value */
	unsigned remote;
	unsigned snoopx;
	unsigned blk;
	unsigned hops;		/* field value: 1 = HOPS_0 ("core, same node") */
};

void datasrc_decode(uint64_t v, struct datasrc *out);

enum datasrc_op {
	DATASRC_OP_NA = 0,	/* also 0 (no data source at all) */
	DATASRC_OP_LOAD,
	DATASRC_OP_STORE,
	DATASRC_OP_PFETCH,
	DATASRC_OP_EXEC,
};
enum datasrc_op datasrc_op(uint64_t v);

/*
 * Where the access was served, coarsely, for per-page level mixes.
 * PEER_CACHE is another core's cache on the same node (IBS "near CCX",
 * HOPS_0); REMOTE_* is another node.
 */
enum datasrc_level {
	DATASRC_LVL_NA = 0,
	DATASRC_LVL_L1,
	DATASRC_LVL_LFB,
	DATASRC_LVL_L2,
	DATASRC_LVL_L3,
	DATASRC_LVL_L4,
	DATASRC_LVL_PEER_CACHE,
	DATASRC_LVL_REMOTE_CACHE,
	DATASRC_LVL_LOCAL_RAM,
	DATASRC_LVL_REMOTE_RAM,
	DATASRC_LVL_PMEM,
	DATASRC_LVL_CXL,
	DATASRC_LVL_IO,
	DATASRC_LVL_UNCACHED,
	DATASRC_LVL__COUNT,
};
enum datasrc_level datasrc_level(uint64_t v);
/* "L1", "LFB", "L2", "L3", "L4", "peer cache", "remote cache",
 * "local RAM", "remote RAM", "PMEM", "CXL", "I/O", "uncached", "N/A". */
const char *datasrc_level_name(enum datasrc_level l);

/*
 * Remote node or not (docs/kernel.md, "Data source and weight"): 1 remote,
 * 0 local, -1 unknown (op-only or NA records: the caller falls back to
 * node(page) != node(cpu)).
 */
int datasrc_is_remote(uint64_t v);

/* perf's texts; each returns strlen of what it wrote (always
 * NUL-terminated, truncated to len). */
size_t datasrc_level_text(uint64_t v, char *buf, size_t len);
size_t datasrc_snoop_text(uint64_t v, char *buf, size_t len);
size_t datasrc_tlb_text(uint64_t v, char *buf, size_t len);

/* union perf_sample_weight: var1_dw low 32 bits, var2_w the next 16,
 * var3_w the top 16.  Intel: var1 cache latency, var2 instruction
 * latency; IBS: var1 DC miss latency, var2 tag-to-retire. */
struct datasrc_weight {
	uint32_t var1;
	uint16_t var2;
	uint16_t var3;
};
void datasrc_weight_split(uint64_t raw, struct datasrc_weight *out);

#endif
