#include "config.h"

/*
 * src/model/datasrc.c against docs/kernel.md, "Data source and weight":
 * the faults value
 * 0x1e05080021 (all NA), perf's "Remote node, same socket RAM hit", the
 * encodings intel/ds.c and amd/ibs.c produce, the local/remote rule,
 * perf's snoop/TLB texts and the WEIGHT_STRUCT split.
 */

#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "datasrc.h"
#include "testlib.h"

#define DS(a, s) PERF_MEM_S(a, s)
/* The kernel's PERF_MEM_NA (include/linux/perf_event.h, not uapi). */
#define MEM_NA (DS(OP, NA) | DS(LVL, NA) | DS(SNOOP, NA) | DS(LOCK, NA) | \
		DS(TLB, NA) | DS(LVLNUM, NA))

struct ds_case {
	const char *what;
	uint64_t v;
	const char *level_text;
	enum datasrc_level level;
	int remote;
	enum datasrc_op op;
};

static const struct ds_case ds_cases[] = {
	{ "faults (measured)", UINT64_C(0x1e05080021), "N/A", DATASRC_LVL_NA,
	  -1, DATASRC_OP_NA },
	{ "PERF_MEM_NA", MEM_NA, "N/A", DATASRC_LVL_NA, -1,
	  DATASRC_OP_NA },
	{ "zero", 0, "N/A", DATASRC_LVL_NA, -1, DATASRC_OP_NA },
	{ "remote RAM, hops 2 (perf 6.1 text)",
	  DS(OP, LOAD) | DS(LVL, HIT) | DS(LVLNUM, RAM) | DS(REMOTE, REMOTE) |
	  DS(HOPS, 1),
	  "Remote node, same socket RAM hit", DATASRC_LVL_REMOTE_RAM, 1,
	  DATASRC_OP_LOAD },
	{ "IBS local DRAM", DS(OP, LOAD) | DS(LVL, LOC_RAM) | DS(LVL, HIT) |
	  DS(LVLNUM, RAM), "RAM hit", DATASRC_LVL_LOCAL_RAM, 0,
	  DATASRC_OP_LOAD },
	{ "IBS remote DRAM", DS(OP, LOAD) | DS(LVL, REM_RAM1) | DS(LVL, HIT) |
	  DS(LVLNUM, RAM) | DS(REMOTE, REMOTE) | DS(HOPS, 1),
	  "Remote node, same socket RAM hit", DATASRC_LVL_REMOTE_RAM, 1,
	  DATASRC_OP_LOAD },
	/* pre-Zen 4 "other core's cache": L3|REM_CCE1, HOPS_0 = local */
	{ "IBS zen3 local cache", DS(OP, LOAD) | DS(LVL, L3) |
	  DS(LVL, REM_CCE1) | DS(LVL, HIT) | DS(LVLNUM, ANY_CACHE) |
	  DS(HOPS, 0), "core, same node Any cache hit",
	  DATASRC_LVL_PEER_CACHE, 0, DATASRC_OP_LOAD },
	{ "IBS zen4 near CCX", DS(OP, LOAD) | DS(LVL, REM_CCE1) |
	  DS(LVL, HIT) | DS(LVLNUM, ANY_CACHE) | DS(REMOTE, REMOTE) |
	  DS(HOPS, 0), "Remote core, same node Any cache hit",
	  DATASRC_LVL_PEER_CACHE, 0, DATASRC_OP_LOAD },
	{ "IBS far CCX", DS(OP, LOAD) | DS(LVL, REM_CCE2) | DS(LVL, HIT) |
	  DS(LVLNUM, ANY_CACHE) | DS(REMOTE, REMOTE) | DS(HOPS, 1),
	  "Remote node, same socket Any cache hit",
	  DATASRC_LVL_REMOTE_CACHE, 1, DATASRC_OP_LOAD },
	{ "IBS L1", DS(OP, LOAD) | DS(LVL, L1) | DS(LVL, HIT) |
	  DS(LVLNUM, L1), "L1 hit", DATASRC_LVL_L1, 0, DATASRC_OP_LOAD },
	{ "IBS MAB", DS(OP, LOAD) | DS(LVL, LFB) | DS(LVL, HIT) |
	  DS(LVLNUM, LFB), "LFB/MAB hit", DATASRC_LVL_LFB, 0,
	  DATASRC_OP_LOAD },
	{ "IBS PMEM (no LVL bits)", DS(OP, LOAD) | DS(LVLNUM, PMEM), "PMEM",
	  DATASRC_LVL_PMEM, 0, DATASRC_OP_LOAD },
	{ "IBS CXL remote", DS(OP, LOAD) | DS(LVLNUM, CXL) |
	  DS(REMOTE, REMOTE) | DS(HOPS, 1), "Remote node, same socket CXL",
	  DATASRC_LVL_CXL, 1, DATASRC_OP_LOAD },
	{ "IBS I/O", DS(OP, LOAD) | DS(LVL, IO) | DS(LVL, HIT) |
	  DS(LVLNUM, IO), "I/O hit", DATASRC_LVL_IO, 0, DATASRC_OP_LOAD },
	{ "uncached", DS(OP, LOAD) | DS(LVL, UNC) | DS(LVL, HIT) |
	  ((uint64_t)8 << PERF_MEM_LVLNUM_SHIFT), "Uncached hit",
	  DATASRC_LVL_UNCACHED, 0, DATASRC_OP_LOAD },
	{ "IBS store, op only", DS(OP, STORE) | DS(LVL, NA) |
	  DS(LVLNUM, NA), "N/A", DATASRC_LVL_NA, -1, DATASRC_OP_STORE },
	{ "Intel L3 HITM (legacy bits)", DS(OP, LOAD) | DS(LVL, L3) |
	  DS(LVL, HIT) | DS(SNOOP, HITM), "L3 hit", DATASRC_LVL_L3, 0,
	  DATASRC_OP_LOAD },
	{ "Intel remote RAM (legacy)", DS(OP, LOAD) | DS(LVL, REM_RAM1) |
	  DS(LVL, HIT) | DS(SNOOP, HIT), "Remote RAM (1 hop) hit",
	  DATASRC_LVL_REMOTE_RAM, 1, DATASRC_OP_LOAD },
	{ "Intel remote cache (legacy)", DS(OP, LOAD) | DS(LVL, REM_CCE1) |
	  DS(REMOTE, REMOTE) | DS(LVL, HIT), "Remote Cache (1 hop) hit",
	  DATASRC_LVL_REMOTE_CACHE, 1, DATASRC_OP_LOAD },
	{ "Intel store L1 miss", DS(OP, STORE) | DS(LVL, L1) | DS(LVL, MISS),
	  "L1 miss", DATASRC_LVL_L1, 0, DATASRC_OP_STORE },
	{ "two legacy levels", DS(OP, LOAD) | DS(LVL, L1) | DS(LVL, LFB) |
	  DS(LVL, HIT), "L1 or LFB hit", DATASRC_LVL_L1, 0, DATASRC_OP_LOAD },
	{ "unknown lvl_num", DS(OP, LOAD) | ((uint64_t)7 <<
	  PERF_MEM_LVLNUM_SHIFT) | DS(LVL, HIT), "Unknown level 7 hit",
	  DATASRC_LVL_NA, 0, DATASRC_OP_LOAD },
	{ "hops beyond the table", DS(OP, LOAD) | DS(LVLNUM, RAM) |
	  ((uint64_t)6 << PERF_MEM_HOPS_SHIFT), "hops 6 RAM",
	  DATASRC_LVL_REMOTE_RAM, 1, DATASRC_OP_LOAD },
	{ "prefetch", DS(OP, PFETCH) | DS(LVL, NA), "N/A", DATASRC_LVL_NA,
	  -1, DATASRC_OP_PFETCH },
};

static void
test_cases(void)
{
	char buf[128];

	for (size_t i = 0; i < ARRAY_SIZE(ds_cases); i++) {
		const struct ds_case *c = &ds_cases[i];
		bool ok = true;
		size_t n = datasrc_level_text(c->v, buf, sizeof(buf));

		ok &= check_eq_str(buf, c->level_text);
		ok &= check_eq_u64(n, strlen(buf));
		ok &= check_eq_i64(datasrc_level(c->v), c->level);
		ok &= check_eq_i64(datasrc_is_remote(c->v), c->remote);
		ok &= check_eq_i64(datasrc_op(c->v), c->op);
		if (!ok)
			fprintf(stderr, "  case: %s (0x%llx)\n", c->what,
				(unsigned long long)c->v);
	}
}

static void
test_fields_and_texts(void)
{
	struct datasrc d;
	struct datasrc_weight w;
	char buf[64];

	datasrc_decode(UINT64_C(0x1e05080021), &d);
	check_eq_u64(d.op, PERF_MEM_OP_NA);
	check_eq_u64(d.lvl, PERF_MEM_LVL_NA);
	check_eq_u64(d.snoop, PERF_MEM_SNOOP_NA);
	check_eq_u64(d.lock, PERF_MEM_LOCK_NA);
	check_eq_u64(d.dtlb, PERF_MEM_TLB_NA);
	check_eq_u64(d.lvl_num, PERF_MEM_LVLNUM_NA);
	check_eq_u64(d.remote, 0);
	check_eq_u64(d.hops, 0);
	datasrc_snoop_text(UINT64_C(0x1e05080021), buf, sizeof(buf));
	check_eq_str(buf, "N/A");
	datasrc_tlb_text(UINT64_C(0x1e05080021), buf, sizeof(buf));
	check_eq_str(buf, "N/A");

	datasrc_decode(DS(BLK, ADDR) | DS(SNOOPX, PEER) | DS(HOPS, 3) |
		       DS(LOCK, LOCKED), &d);
	check_eq_u64(d.blk, PERF_MEM_BLK_ADDR);
	check_eq_u64(d.snoopx, PERF_MEM_SNOOPX_PEER);
	check_eq_u64(d.hops, PERF_MEM_HOPS_3);
	check_eq_u64(d.lock, PERF_MEM_LOCK_LOCKED);

	datasrc_snoop_text(DS(SNOOP, HITM), buf, sizeof(buf));
	check_eq_str(buf, "HitM");
	datasrc_snoop_text(DS(SNOOP, HIT) | DS(SNOOPX, FWD), buf, sizeof(buf));
	check_eq_str(buf, "Hit or Fwd");
	datasrc_snoop_text(DS(SNOOP, NONE), buf, sizeof(buf));
	check_eq_str(buf, "None");
	datasrc_snoop_text(0, buf, sizeof(buf));
	check_eq_str(buf, "N/A");
	datasrc_tlb_text(DS(TLB, L1) | DS(TLB, HIT), buf, sizeof(buf));
	check_eq_str(buf, "L1 hit");
	datasrc_tlb_text(DS(TLB, L2) | DS(TLB, WK) | DS(TLB, MISS), buf,
			 sizeof(buf));
	check_eq_str(buf, "L2 or Walker miss");
	datasrc_tlb_text(DS(TLB, OS), buf, sizeof(buf));
	check_eq_str(buf, "Fault");

	/* Truncation keeps a NUL and reports what fits. */
	check_eq_u64(datasrc_level_text(ds_cases[3].v, buf, 8), 7);
	check_eq_str(buf, "Remote ");
	check_eq_u64(datasrc_level_text(0, buf, 1), 0);
	check_eq_str(buf, "");

	datasrc_weight_split(UINT64_C(3) << 48 | UINT64_C(2) << 32 | 250, &w);
	check_eq_u64(w.var1, 250);
	check_eq_u64(w.var2, 2);
	check_eq_u64(w.var3, 3);
	datasrc_weight_split(UINT64_MAX, &w);
	check_eq_u64(w.var1, UINT32_MAX);
	check_eq_u64(w.var2, UINT16_MAX);

	for (int l = 0; l < DATASRC_LVL__COUNT; l++)
		check(datasrc_level_name(l) != NULL &&
		      datasrc_level_name(l)[0] != '?');
	check_eq_str(datasrc_level_name(DATASRC_LVL_REMOTE_RAM), "remote RAM");
	check_eq_str(datasrc_level_name(DATASRC_LVL__COUNT), "?");
}

int
main(void)
{
	test_cases();
	test_fields_and_texts();
	return test_result();
}
