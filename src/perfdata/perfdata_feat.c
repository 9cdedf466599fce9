#include "config.h"

/*
 * perf.data feature parsing.  See perfdata_feat.h.
 *
 * Layouts (tools/perf/util/header.c write_* and process_*; strings are
 * { u32 len; char[len] } NUL-padded, lists { u32 nr; string[nr] }):
 *
 *   HOSTNAME, OSRELEASE, VERSION, ARCH   string
 *   CMDLINE         u32 nr; nr strings
 *   NRCPUS          u32 nr_cpus_avail; u32 nr_cpus_online
 *   EVENT_DESC      u32 nr; u32 attr_size;
 *                   nr x { attr[attr_size]; u32 nr_ids; string name;
 *                          u64 ids[nr_ids] }
 *   CPU_TOPOLOGY    list core_siblings; list thread_siblings;
 *                   then optional per-CPU ids and die/cluster lists
 *   NUMA_TOPOLOGY   u32 nr; nr x { u32 node; u64 mem_total_kB;
 *                   u64 mem_free_kB; string cpus }
 *   PMU_MAPPINGS    u32 nr; nr x { u32 type; string name }
 *   MEM_TOPOLOGY    u64 version; u64 block_size; u64 count;
 *                   count x { u64 node; u64 nr_bits; u64 nr_bits again
 *                   (perf's do_write_bitmap leads with it); u64 bitmap[] }
 *   COMPRESSED      u32 version, type, level, ratio, mmap_len
 *
 * Every count is checked against the bytes left before anything is
 * allocated for it, so a feature never costs more memory than a small
 * multiple of its own size.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "base.h"
#include "perfdata_feat.h"
#include "perfdata_format.h"
#include "perfdata_swap.h"
#include "topo.h"

/* The smallest encoding of one list entry, for bounding counts. */
#define PERFDATA_MIN_STRING	4
#define PERFDATA_MIN_NUMA_NODE	(4 + 8 + 8 + PERFDATA_MIN_STRING)
#define PERFDATA_MIN_PMU	(4 + PERFDATA_MIN_STRING)
#define PERFDATA_MIN_MEM_NODE	(8 + 8 + 8)
#define PERFDATA_MAX_CPULIST	65536

static const char *const perfdata_feat_names[] = {
	[1] = "TRACING_DATA", [2] = "BUILD_ID", [3] = "HOSTNAME",
	[4] = "OSRELEASE", [5] = "VERSION", [6] = "ARCH", [7] = "NRCPUS",
	[8] = "CPUDESC", [9] = "CPUID", [10] = "TOTAL_MEM",
	[11] = "CMDLINE", [12] = "EVENT_DESC", [13] = "CPU_TOPOLOGY",
	[14] = "NUMA_TOPOLOGY", [15] = "BRANCH_STACK",
	[16] = "PMU_MAPPINGS", [17] = "GROUP_DESC", [18] = "AUXTRACE",
	[19] = "STAT", [20] = "CACHE", [21] = "SAMPLE_TIME",
	[22] = "MEM_TOPOLOGY", [23] = "CLOCKID", [24] = "DIR_FORMAT",
	[25] = "BPF_PROG_INFO", [26] = "BPF_BTF", [27] = "COMPRESSED",
	[28] = "CPU_PMU_CAPS", [29] = "CLOCK_DATA",
	[30] = "HYBRID_TOPOLOGY", [31] = "PMU_CAPS",
};

const char *
perfdata_feat_name(unsigned bit, char *buf, size_t len)
{
	if (bit < ARRAY_SIZE(perfdata_feat_names)
	    && perfdata_feat_names[bit])
		return perfdata_feat_names[bit];
	snprintf(buf, len, "bit %u", bit);
	return buf;
}

static int
perfdata_feat_error(char *err, size_t errlen, unsigned bit, const char *why)
{
	char name[16];

	snprintf(err, errlen, "feature %s: %s",
		 perfdata_feat_name(bit, name, sizeof(name)), why);
	return -EPROTO;
}

static void
perfdata_free_nodes(struct perfdata_info *info)
{
	for (size_t i = 0; i < info->n_nodes; i++)
		free(info->nodes[i].cpus);
	free(info->nodes);
	info->nodes = NULL;
	info->n_nodes = 0;
}

static void
perfdata_free_mem(struct perfdata_info *info)
{
	for (size_t i = 0; i < info->n_mem; i++)
		free(info->mem[i].bitmap);
	free(info->mem);
	info->mem = NULL;
	info->n_mem = 0;
	info->mem_block_size = 0;
}

/* A string copied to the heap, at most the bytes the record holds. */
static char *
perfdata_dup_string(struct perfdata_cursor *c)
{
	uint32_t len = perfdata_get_u32(c);
	const char *s = perfdata_get_bytes(c, len);
	size_t n = 0;
	char *out;

	if (!s)
		return NULL;
	while (n < len && s[n] != '\0')
		n++;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	memcpy(out, s, n);
	out[n] = '\0';
	return out;
}

static int
perfdata_parse_numa(struct perfdata_info *info, struct perfdata_cursor *c,
		    char *err, size_t errlen)
{
	const unsigned bit = PERFDATA_FEAT_NUMA_TOPOLOGY;
	uint32_t nr = perfdata_get_u32(c);
	struct perfdata_numa_node *nodes;

	if (c->bad || nr == 0 ||
	    nr > perfdata_cursor_left(c) / PERFDATA_MIN_NUMA_NODE)
		return perfdata_feat_error(err, errlen, bit, "bad node count");
	nodes = calloc(nr, sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	perfdata_free_nodes(info);
	info->nodes = nodes;
	for (uint32_t i = 0; i < nr; i++) {
		struct perfdata_numa_node *n = &nodes[i];
		uint32_t node = perfdata_get_u32(c);

		n->mem_total_kb = perfdata_get_u64(c);
		n->mem_free_kb = perfdata_get_u64(c);
		n->cpus = perfdata_dup_string(c);
		info->n_nodes = i + 1;
		if (c->bad)
			return perfdata_feat_error(err, errlen, bit,
						   "truncated node entry");
		if (!n->cpus)
			return -ENOMEM;
		if (node > 32767 || strlen(n->cpus) > PERFDATA_MAX_CPULIST)
			return perfdata_feat_error(err, errlen, bit,
						   "node number or cpu list "
						   "out of range");
		for (uint32_t j = 0; j < i; j++)
			if (nodes[j].node == (int32_t)node)
				return perfdata_feat_error(err, errlen, bit,
							   "node listed "
							   "twice");
		n->node = (int32_t)node;
	}
	return 0;
}

static int
perfdata_parse_mem(struct perfdata_info *info, struct perfdata_cursor *c,
		   char *err, size_t errlen)
{
	const unsigned bit = PERFDATA_FEAT_MEM_TOPOLOGY;
	uint64_t version = perfdata_get_u64(c);
	uint64_t bs = perfdata_get_u64(c);
	uint64_t count = perfdata_get_u64(c);
	struct perfdata_mem_node *mem;

	if (c->bad)
		return perfdata_feat_error(err, errlen, bit, "truncated");
	if (version != PERFDATA_MEM_TOPOLOGY_VERSION)
		return perfdata_feat_error(err, errlen, bit,
					   "unknown version");
	if (bs == 0 || (bs & (bs - 1)) != 0)
		return perfdata_feat_error(err, errlen, bit,
					   "block size not a power of two");
	if (count > perfdata_cursor_left(c) / PERFDATA_MIN_MEM_NODE)
		return perfdata_feat_error(err, errlen, bit, "bad node count");
	mem = calloc(count ? count : 1, sizeof(*mem));
	if (!mem)
		return -ENOMEM;
	perfdata_free_mem(info);
	info->mem = mem;
	info->mem_block_size = bs;
	for (uint64_t i = 0; i < count; i++) {
		struct perfdata_mem_node *m = &mem[i];
		uint64_t words;

		m->node = perfdata_get_u64(c);
		perfdata_get_u64(c);
		m->nr_bits = perfdata_get_u64(c);
		words = m->nr_bits / 64 + (m->nr_bits % 64 != 0);
		if (c->bad || words > perfdata_cursor_left(c) / 8)
			return perfdata_feat_error(err, errlen, bit,
						   "truncated bitmap");
		m->bitmap = calloc(words ? words : 1, 8);
		if (!m->bitmap)
			return -ENOMEM;
		info->n_mem = i + 1;
		for (uint64_t w = 0; w < words; w++)
			m->bitmap[w] = perfdata_get_u64(c);
	}
	return 0;
}

static int
perfdata_parse_pmus(struct perfdata_info *info, struct perfdata_cursor *c,
		    char *err, size_t errlen)
{
	const unsigned bit = PERFDATA_FEAT_PMU_MAPPINGS;
	uint32_t nr = perfdata_get_u32(c);
	struct perfdata_pmu *pmus;

	if (c->bad || nr > perfdata_cursor_left(c) / PERFDATA_MIN_PMU)
		return perfdata_feat_error(err, errlen, bit, "bad PMU count");
	pmus = calloc(nr ? nr : 1, sizeof(*pmus));
	if (!pmus)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++) {
		pmus[i].type = perfdata_get_u32(c);
		perfdata_get_string(c, pmus[i].name, sizeof(pmus[i].name));
	}
	if (c->bad) {
		free(pmus);
		return perfdata_feat_error(err, errlen, bit, "truncated");
	}
	free(info->pmus);
	info->pmus = pmus;
	info->n_pmus = nr;
	return 0;
}

/* Optional: a truncated CMDLINE keeps what was read. */
static void
perfdata_parse_cmdline(struct perfdata_info *info, struct perfdata_cursor *c)
{
	uint32_t nr = perfdata_get_u32(c);
	size_t used = 0;
	char arg[512];

	info->cmdline[0] = '\0';
	for (uint32_t i = 0; i < nr && !c->bad &&
			     used + 1 < sizeof(info->cmdline); i++) {
		perfdata_get_string(c, arg, sizeof(arg));
		if (c->bad)
			break;
		used += (size_t)snprintf(info->cmdline + used,
					 sizeof(info->cmdline) - used, "%s%s",
					 i ? " " : "", arg);
	}
	if (used >= sizeof(info->cmdline))
		info->cmdline[sizeof(info->cmdline) - 1] = '\0';
}

/* Optional: a malformed EVENT_DESC only loses the names (-EPROTO). */
static int
perfdata_parse_event_desc(struct perfdata_info *info,
			  struct perfdata_cursor *c)
{
	uint32_t nr = perfdata_get_u32(c);
	uint32_t attr_size = perfdata_get_u32(c);
	struct perfdata_event_name *names;

	if (c->bad || attr_size < 8 ||
	    nr > perfdata_cursor_left(c) / ((uint64_t)attr_size + 8))
		return -EPROTO;
	names = calloc(nr ? nr : 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr && !c->bad; i++) {
		uint32_t nr_ids;

		perfdata_get_bytes(c, attr_size);
		nr_ids = perfdata_get_u32(c);
		perfdata_get_string(c, names[i].name, sizeof(names[i].name));
		if (c->bad || nr_ids > perfdata_cursor_left(c) / 8)
			break;
		if (nr_ids) {
			names[i].first_id = perfdata_get_u64(c);
			names[i].has_id = true;
			perfdata_get_bytes(c, 8 * (size_t)(nr_ids - 1));
		}
		if (!c->bad && i + 1 == nr) {
			free(info->names);
			info->names = names;
			info->n_names = nr;
			return 0;
		}
	}
	free(names);
	return nr == 0 && !c->bad ? 0 : -EPROTO;
}

/* Optional: checks the two sibling lists; the rest is size-detected. */
static int
perfdata_parse_cpu_topology(struct perfdata_info *info,
			    struct perfdata_cursor *c)
{
	char scratch[8];

	for (int list = 0; list < 2; list++) {
		uint32_t nr = perfdata_get_u32(c);

		if (c->bad ||
		    nr > perfdata_cursor_left(c) / PERFDATA_MIN_STRING)
			return -EPROTO;
		for (uint32_t i = 0; i < nr && !c->bad; i++)
			perfdata_get_string(c, scratch, sizeof(scratch));
	}
	if (c->bad)
		return -EPROTO;
	info->has_cpu_topology = true;
	return 0;
}

/* A long switch, one short case per feature. */
int
perfdata_feat_parse(struct perfdata_info *info, unsigned bit,
		    const void *body, size_t len, bool swap, char *err,
		    size_t errlen)
{
	struct perfdata_cursor c;
	int ret = 0;

	perfdata_cursor_init(&c, body, len, swap);
	switch (bit) {
	case PERFDATA_FEAT_HOSTNAME:
		perfdata_get_string(&c, info->hostname,
				    sizeof(info->hostname));
		break;
	case PERFDATA_FEAT_OSRELEASE:
		perfdata_get_string(&c, info->os_release,
				    sizeof(info->os_release));
		break;
	case PERFDATA_FEAT_VERSION:
		perfdata_get_string(&c, info->perf_version,
				    sizeof(info->perf_version));
		break;
	case PERFDATA_FEAT_ARCH:
		perfdata_get_string(&c, info->arch, sizeof(info->arch));
		break;
	case PERFDATA_FEAT_CMDLINE:
		perfdata_parse_cmdline(info, &c);
		break;
	case PERFDATA_FEAT_NRCPUS:
		info->nr_cpus_avail = perfdata_get_u32(&c);
		info->nr_cpus_online = perfdata_get_u32(&c);
		if (c.bad || info->nr_cpus_avail > PERFDATA_MAX_CPULIST)
			info->nr_cpus_avail = info->nr_cpus_online = 0;
		break;
	case PERFDATA_FEAT_EVENT_DESC:
		ret = perfdata_parse_event_desc(info, &c);
		break;
	case PERFDATA_FEAT_BUILD_ID:
		ret = perfdata_parse_build_ids(info, &c);
		break;
	case PERFDATA_FEAT_CPU_TOPOLOGY:
		ret = perfdata_parse_cpu_topology(info, &c);
		break;
	case PERFDATA_FEAT_NUMA_TOPOLOGY:
		ret = perfdata_parse_numa(info, &c, err, errlen);
		if (ret < 0)
			return ret;
		break;
	case PERFDATA_FEAT_MEM_TOPOLOGY:
		ret = perfdata_parse_mem(info, &c, err, errlen);
		if (ret < 0)
			return ret;
		break;
	case PERFDATA_FEAT_PMU_MAPPINGS:
		ret = perfdata_parse_pmus(info, &c, err, errlen);
		if (ret < 0)
			return ret;
		break;
	case PERFDATA_FEAT_COMPRESSED:
		perfdata_get_u32(&c);	/* version */
		info->comp_type = perfdata_get_u32(&c);
		info->comp_level = perfdata_get_u32(&c);
		perfdata_get_u32(&c);	/* ratio */
		info->comp_mmap_len = perfdata_get_u32(&c);
		if (c.bad)
			return perfdata_feat_error(err, errlen, bit,
						   "truncated");
		if (info->comp_type != PERFDATA_COMP_ZSTD)
			return perfdata_feat_error(err, errlen, bit,
						   "not zstd: cannot "
						   "decompress");
		info->compressed = true;
		break;
	default:
		info->unknown_features++;
		return 0;
	}
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0 || c.bad) {
		info->bad_features++;
		return 0;
	}
	if (bit < PERFDATA_FEAT_BITS)
		info->present[bit / 64] |= UINT64_C(1) << (bit % 64);
	return 0;
}

int
perfdata_info_phys_node(const struct perfdata_info *info, uint64_t phys)
{
	uint64_t block;

	if (!info->mem_block_size)
		return -1;
	block = phys / info->mem_block_size;
	for (size_t i = 0; i < info->n_mem; i++) {
		const struct perfdata_mem_node *m = &info->mem[i];

		if (block < m->nr_bits &&
		    (m->bitmap[block / 64] >> (block % 64) & 1) &&
		    m->node <= 32767)
			return (int)m->node;
	}
	return -1;
}

struct topo *
perfdata_info_topo(const struct perfdata_info *info, char *err,
		   size_t errlen)
{
	struct topo_node_desc *desc;
	struct topo *t;
	int n_cpus = (int)info->nr_cpus_avail;

	if (info->n_nodes == 0) {
		if (n_cpus == 0)
			n_cpus = get_nprocs_conf();
		t = topo_new_fake(n_cpus, NULL);
		if (!t)
			snprintf(err, errlen, "out of memory");
		return t;
	}
	desc = calloc(info->n_nodes, sizeof(*desc));
	if (!desc) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < info->n_nodes; i++) {
		desc[i].node = info->nodes[i].node;
		desc[i].cpulist = info->nodes[i].cpus;
		desc[i].mem_total_kb = info->nodes[i].mem_total_kb;
		desc[i].mem_free_kb = info->nodes[i].mem_free_kb;
	}
	t = topo_new_recorded(n_cpus, desc, (int)info->n_nodes);
	if (!t)
		snprintf(err, errlen, "feature NUMA_TOPOLOGY: %s",
			 errno == ENOMEM ? "out of memory" :
			 "malformed cpu list");
	free(desc);
	return t;
}

void
perfdata_info_fini(struct perfdata_info *info)
{
	if (!info)
		return;
	perfdata_free_nodes(info);
	perfdata_free_mem(info);
	free(info->pmus);
	free(info->names);
	perfdata_free_build_ids(info);
	memset(info, 0, sizeof(*info));
}
