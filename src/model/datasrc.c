/* Any thread.  See datasrc.h. */
#include "config.h"

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "datasrc.h"

/* mem_lvl_num values newer than the 6.1 uapi headers Debian 12 ships. */
#ifndef PERF_MEM_LVLNUM_L2_MHB
#define PERF_MEM_LVLNUM_L2_MHB	0x05
#endif
#ifndef PERF_MEM_LVLNUM_MSC
#define PERF_MEM_LVLNUM_MSC	0x06
#endif
#ifndef PERF_MEM_LVLNUM_UNC
#define PERF_MEM_LVLNUM_UNC	0x08
#endif

void
datasrc_decode(uint64_t v, struct datasrc *out)
{
	out->op = (unsigned)(v >> PERF_MEM_OP_SHIFT) & 0x1f;
	out->lvl = (unsigned)(v >> PERF_MEM_LVL_SHIFT) & 0x3fff;
	out->snoop = (unsigned)(v >> PERF_MEM_SNOOP_SHIFT) & 0x1f;
	out->lock = (unsigned)(v >> PERF_MEM_LOCK_SHIFT) & 0x3;
	out->dtlb = (unsigned)(v >> PERF_MEM_TLB_SHIFT) & 0x7f;
	out->lvl_num = (unsigned)(v >> PERF_MEM_LVLNUM_SHIFT) & 0xf;
	out->remote = (unsigned)(v >> PERF_MEM_REMOTE_SHIFT) & 0x1;
	out->snoopx = (unsigned)(v >> PERF_MEM_SNOOPX_SHIFT) & 0x3;
	out->blk = (unsigned)(v >> PERF_MEM_BLK_SHIFT) & 0x7;
	out->hops = (unsigned)(v >> PERF_MEM_HOPS_SHIFT) & 0x7;
}

enum datasrc_op
datasrc_op(uint64_t v)
{
	unsigned op = (unsigned)v & 0x1f;

	/* The kernel sets one bit; LOAD wins like perf's mem_op text. */
	if (op & PERF_MEM_OP_LOAD)
		return DATASRC_OP_LOAD;
	if (op & PERF_MEM_OP_STORE)
		return DATASRC_OP_STORE;
	if (op & PERF_MEM_OP_PFETCH)
		return DATASRC_OP_PFETCH;
	if (op & PERF_MEM_OP_EXEC)
		return DATASRC_OP_EXEC;
	return DATASRC_OP_NA;
}

/* The field value of mem_hops is the HOPS_n constant: 1 = HOPS_0. */
#define DATASRC_HOPS_SAME_NODE	1	/* PERF_MEM_HOPS_0 */
#define DATASRC_HOPS_OTHER_NODE	2	/* PERF_MEM_HOPS_1 and beyond */

int
datasrc_is_remote(uint64_t v)
{
	struct datasrc d;

	datasrc_decode(v, &d);
	if (d.hops >= DATASRC_HOPS_OTHER_NODE)
		return 1;
	if (d.hops == DATASRC_HOPS_SAME_NODE)
		return 0;
	if (d.remote || (d.lvl & (PERF_MEM_LVL_REM_RAM1 |
				  PERF_MEM_LVL_REM_RAM2)))
		return 1;
	/* A level that says where it hit, without a remote mark, is local;
	 * REM_CCE1 alone is pre-Zen 4 IBS's "another core's cache". */
	if ((d.lvl_num && d.lvl_num != PERF_MEM_LVLNUM_NA) ||
	    (d.lvl & ~(unsigned)(PERF_MEM_LVL_NA | PERF_MEM_LVL_HIT |
				 PERF_MEM_LVL_MISS)))
		return 0;
	return -1;
}

/* Class of a mem_lvl_num value; remote decides the *_CACHE/RAM split. */
static enum datasrc_level
datasrc_level_of_num(unsigned num, int remote)
{
	switch (num) {
	case PERF_MEM_LVLNUM_L1: return DATASRC_LVL_L1;
	case PERF_MEM_LVLNUM_L2: return DATASRC_LVL_L2;
	case PERF_MEM_LVLNUM_L2_MHB: return DATASRC_LVL_L2;
	case PERF_MEM_LVLNUM_L3: return DATASRC_LVL_L3;
	case PERF_MEM_LVLNUM_L4: return DATASRC_LVL_L4;
	case PERF_MEM_LVLNUM_MSC: return DATASRC_LVL_L4;
	case PERF_MEM_LVLNUM_LFB: return DATASRC_LVL_LFB;
	case PERF_MEM_LVLNUM_ANY_CACHE:
		return remote == 1 ? DATASRC_LVL_REMOTE_CACHE :
				     DATASRC_LVL_PEER_CACHE;
	case PERF_MEM_LVLNUM_RAM:
		return remote == 1 ? DATASRC_LVL_REMOTE_RAM :
				     DATASRC_LVL_LOCAL_RAM;
	case PERF_MEM_LVLNUM_PMEM: return DATASRC_LVL_PMEM;
	case PERF_MEM_LVLNUM_CXL: return DATASRC_LVL_CXL;
	case PERF_MEM_LVLNUM_IO: return DATASRC_LVL_IO;
	case PERF_MEM_LVLNUM_UNC: return DATASRC_LVL_UNCACHED;
	}
	return DATASRC_LVL_NA;
}

/* Legacy mem_lvl bits from nearest to farthest; the nearest set wins. */
static const struct {
	unsigned bit;
	enum datasrc_level local, remote;
} datasrc_lvl_bits[] = {
	{ PERF_MEM_LVL_L1, DATASRC_LVL_L1, DATASRC_LVL_L1 },
	{ PERF_MEM_LVL_LFB, DATASRC_LVL_LFB, DATASRC_LVL_LFB },
	{ PERF_MEM_LVL_L2, DATASRC_LVL_L2, DATASRC_LVL_L2 },
	{ PERF_MEM_LVL_L3, DATASRC_LVL_L3, DATASRC_LVL_L3 },
	{ PERF_MEM_LVL_LOC_RAM, DATASRC_LVL_LOCAL_RAM,
	  DATASRC_LVL_LOCAL_RAM },
	{ PERF_MEM_LVL_REM_RAM1, DATASRC_LVL_REMOTE_RAM,
	  DATASRC_LVL_REMOTE_RAM },
	{ PERF_MEM_LVL_REM_RAM2, DATASRC_LVL_REMOTE_RAM,
	  DATASRC_LVL_REMOTE_RAM },
	{ PERF_MEM_LVL_REM_CCE1, DATASRC_LVL_PEER_CACHE,
	  DATASRC_LVL_REMOTE_CACHE },
	{ PERF_MEM_LVL_REM_CCE2, DATASRC_LVL_REMOTE_CACHE,
	  DATASRC_LVL_REMOTE_CACHE },
	{ PERF_MEM_LVL_IO, DATASRC_LVL_IO, DATASRC_LVL_IO },
	{ PERF_MEM_LVL_UNC, DATASRC_LVL_UNCACHED, DATASRC_LVL_UNCACHED },
};

enum datasrc_level
datasrc_level(uint64_t v)
{
	struct datasrc d;
	int remote = datasrc_is_remote(v);

	datasrc_decode(v, &d);
	if (d.lvl_num && d.lvl_num != PERF_MEM_LVLNUM_NA)
		return datasrc_level_of_num(d.lvl_num, remote);
	for (size_t i = 0; i < ARRAY_SIZE(datasrc_lvl_bits); i++)
		if (d.lvl & datasrc_lvl_bits[i].bit)
			return remote == 1 ? datasrc_lvl_bits[i].remote :
					     datasrc_lvl_bits[i].local;
	return DATASRC_LVL_NA;
}

static const char *const datasrc_level_names[DATASRC_LVL__COUNT] = {
	[DATASRC_LVL_NA] = "N/A",
	[DATASRC_LVL_L1] = "L1",
	[DATASRC_LVL_LFB] = "LFB",
	[DATASRC_LVL_L2] = "L2",
	[DATASRC_LVL_L3] = "L3",
	[DATASRC_LVL_L4] = "L4",
	[DATASRC_LVL_PEER_CACHE] = "peer cache",
	[DATASRC_LVL_REMOTE_CACHE] = "remote cache",
	[DATASRC_LVL_LOCAL_RAM] = "local RAM",
	[DATASRC_LVL_REMOTE_RAM] = "remote RAM",
	[DATASRC_LVL_PMEM] = "PMEM",
	[DATASRC_LVL_CXL] = "CXL",
	[DATASRC_LVL_IO] = "I/O",
	[DATASRC_LVL_UNCACHED] = "uncached",
};

const char *
datasrc_level_name(enum datasrc_level l)
{
	return (unsigned)l < DATASRC_LVL__COUNT ? datasrc_level_names[l] :
						  "?";
}

/* Appends to buf at *used, keeping it NUL-terminated and truncated. */
static void
datasrc_cat(char *buf, size_t len, size_t *used, const char *s)
{
	int n;

	if (*used >= len)
		return;
	n = snprintf(buf + *used, len - *used, "%s", s);
	if (n > 0)
		*used += (size_t)n < len - *used ? (size_t)n : len - *used - 1;
}

/* Names of set bits from bit 0 up, joined by " or " as perf does. */
static void
datasrc_cat_bits(char *buf, size_t len, size_t *used, unsigned bits,
		 const char *const *names, size_t n_names, bool *printed)
{
	for (size_t i = 0; bits && i < n_names; i++, bits >>= 1) {
		if (!(bits & 1))
			continue;
		if (*printed)
			datasrc_cat(buf, len, used, " or ");
		datasrc_cat(buf, len, used, names[i]);
		*printed = true;
	}
}

static const char *const datasrc_lvlnum_text[16] = {
	[PERF_MEM_LVLNUM_L1] = "L1",
	[PERF_MEM_LVLNUM_L2] = "L2",
	[PERF_MEM_LVLNUM_L3] = "L3",
	[PERF_MEM_LVLNUM_L4] = "L4",
	[PERF_MEM_LVLNUM_L2_MHB] = "L2 MHB",
	[PERF_MEM_LVLNUM_MSC] = "Memory-side Cache",
	[PERF_MEM_LVLNUM_UNC] = "Uncached",
	[PERF_MEM_LVLNUM_CXL] = "CXL",
	[PERF_MEM_LVLNUM_IO] = "I/O",
	[PERF_MEM_LVLNUM_ANY_CACHE] = "Any cache",
	[PERF_MEM_LVLNUM_LFB] = "LFB/MAB",
	[PERF_MEM_LVLNUM_RAM] = "RAM",
	[PERF_MEM_LVLNUM_PMEM] = "PMEM",
};

static const char *const datasrc_hops_text[] = {
	"N/A", "core, same node", "node, same socket", "socket, same board",
	"board",
};

static const char *const datasrc_lvl_text[] = {
	"N/A", "HIT", "MISS", "L1", "LFB", "L2", "L3", "Local RAM",
	"Remote RAM (1 hop)", "Remote RAM (2 hops)", "Remote Cache (1 hop)",
	"Remote Cache (2 hops)", "I/O", "Uncached",
};

/*
 * perf's perf_mem__lvl_scnprintf(): mem_lvl_num when set, as
 * "[Remote ][<hops> ]<level> hit|miss", else the legacy bits joined by
 * " or ".  perf leaves a trailing space when neither hit nor miss is set;
 * this does not.
 */
size_t
datasrc_level_text(uint64_t v, char *buf, size_t len)
{
	const char *hit_miss = NULL;
	bool printed = false;
	size_t used = 0;
	struct datasrc d;
	char tmp[32];

	if (len == 0)
		return 0;
	buf[0] = '\0';
	datasrc_decode(v, &d);
	if (d.lvl & PERF_MEM_LVL_HIT)
		hit_miss = "hit";
	else if (d.lvl & PERF_MEM_LVL_MISS)
		hit_miss = "miss";

	if (d.lvl_num && d.lvl_num != PERF_MEM_LVLNUM_NA) {
		if (d.remote)
			datasrc_cat(buf, len, &used, "Remote ");
		if (d.hops) {
			if (d.hops < ARRAY_SIZE(datasrc_hops_text))
				snprintf(tmp, sizeof(tmp), "%s ",
					 datasrc_hops_text[d.hops]);
			else
				snprintf(tmp, sizeof(tmp), "hops %u ", d.hops);
			datasrc_cat(buf, len, &used, tmp);
		}
		if (datasrc_lvlnum_text[d.lvl_num]) {
			datasrc_cat(buf, len, &used,
				    datasrc_lvlnum_text[d.lvl_num]);
		} else {
			snprintf(tmp, sizeof(tmp), "Unknown level %u",
				 d.lvl_num);
			datasrc_cat(buf, len, &used, tmp);
		}
		printed = true;
	} else {
		datasrc_cat_bits(buf, len, &used,
				 d.lvl & ~(unsigned)(PERF_MEM_LVL_NA |
						     PERF_MEM_LVL_HIT |
						     PERF_MEM_LVL_MISS),
				 datasrc_lvl_text, ARRAY_SIZE(datasrc_lvl_text), &printed);
	}
	if (!printed) {
		datasrc_cat(buf, len, &used, "N/A");
		return used;
	}
	if (hit_miss) {
		datasrc_cat(buf, len, &used, " ");
		datasrc_cat(buf, len, &used, hit_miss);
	}
	return used;
}

static const char *const datasrc_snoop_names[] = {
	"N/A", "None", "Hit", "Miss", "HitM",
};
static const char *const datasrc_snoopx_names[] = { "Fwd", "Peer" };

size_t
datasrc_snoop_text(uint64_t v, char *buf, size_t len)
{
	bool printed = false;
	size_t used = 0;
	struct datasrc d;

	if (len == 0)
		return 0;
	buf[0] = '\0';
	datasrc_decode(v, &d);
	datasrc_cat_bits(buf, len, &used, d.snoop, datasrc_snoop_names,
			 ARRAY_SIZE(datasrc_snoop_names), &printed);
	datasrc_cat_bits(buf, len, &used, d.snoopx, datasrc_snoopx_names,
			 ARRAY_SIZE(datasrc_snoopx_names), &printed);
	if (!printed)
		datasrc_cat(buf, len, &used, "N/A");
	return used;
}

static const char *const datasrc_tlb_names[] = {
	"N/A", "HIT", "MISS", "L1", "L2", "Walker", "Fault",
};

size_t
datasrc_tlb_text(uint64_t v, char *buf, size_t len)
{
	bool printed = false;
	size_t used = 0;
	struct datasrc d;

	if (len == 0)
		return 0;
	buf[0] = '\0';
	datasrc_decode(v, &d);
	datasrc_cat_bits(buf, len, &used,
			 d.dtlb & ~(unsigned)(PERF_MEM_TLB_HIT |
					      PERF_MEM_TLB_MISS),
			 datasrc_tlb_names, ARRAY_SIZE(datasrc_tlb_names), &printed);
	if (!printed)
		datasrc_cat(buf, len, &used, "N/A");
	if (d.dtlb & PERF_MEM_TLB_HIT)
		datasrc_cat(buf, len, &used, " hit");
	if (d.dtlb & PERF_MEM_TLB_MISS)
		datasrc_cat(buf, len, &used, " miss");
	return used;
}

void
datasrc_weight_split(uint64_t raw, struct datasrc_weight *out)
{
	out->var1 = (uint32_t)(raw & UINT32_MAX);
	out->var2 = (uint16_t)((raw >> 32) & UINT16_MAX);
	out->var3 = (uint16_t)((raw >> 48) & UINT16_MAX);
}
