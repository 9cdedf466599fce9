#include "config.h"

/*
 * Feature sections for the perf.data writer.  See perfdata_featw.h; the
 * layouts are those perfdata_feat.c reads (perf's header.c write_*).
 */

#include <dirent.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "perfdata_featw.h"
#include "perfdata_format.h"
#include "sysfs.h"
#include "topo.h"

/* perf pads strings (with their NUL) to this (header.c NAME_ALIGN). */
#define PERFDATA_NAME_ALIGN 64
/* Sanity caps for what sysfs lists: 2^20 blocks of 128 MiB = 128 TiB. */
#define PERFDATA_MAX_BLOCKS (1u << 20)
#define PERFDATA_MAX_NODE 32767

static bool
perfdata_bytes_room(struct perfdata_bytes *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	unsigned char *p;

	if (b->oom)
		return false;
	if (b->len + n <= b->cap)
		return true;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void
perfdata_put_bytes(struct perfdata_bytes *b, const void *p, size_t n)
{
	if (!perfdata_bytes_room(b, n))
		return;
	if (p)
		memcpy(b->p + b->len, p, n);
	else
		memset(b->p + b->len, 0, n);
	b->len += n;
}

void
perfdata_put_u32(struct perfdata_bytes *b, uint32_t v)
{
	v = b->swap ? __builtin_bswap32(v) : v;
	perfdata_put_bytes(b, &v, sizeof(v));
}

void
perfdata_put_u64(struct perfdata_bytes *b, uint64_t v)
{
	v = b->swap ? __builtin_bswap64(v) : v;
	perfdata_put_bytes(b, &v, sizeof(v));
}

void
perfdata_put_string(struct perfdata_bytes *b, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t padded = (n + PERFDATA_NAME_ALIGN - 1) /
			PERFDATA_NAME_ALIGN * PERFDATA_NAME_ALIGN;

	perfdata_put_u32(b, (uint32_t)padded);
	perfdata_put_bytes(b, s, n);
	perfdata_put_bytes(b, NULL, padded - n);
}

void
perfdata_bytes_fini(struct perfdata_bytes *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

void
perfdata_featw_nrcpus(struct perfdata_bytes *b, const struct topo *t)
{
	perfdata_put_u32(b, (uint32_t)topo_n_cpus(t));
	perfdata_put_u32(b, (uint32_t)topo_n_cpus(t));
}

/* "0-3,8,10-11": the kernel's cpulist of the CPUs on node. */
static char *
perfdata_cpulist(const struct topo *t, int node)
{
	int n_cpus = topo_n_cpus(t);
	size_t cap = 16 + 12 * (size_t)n_cpus, len = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	s[0] = '\0';
	for (int cpu = 0; cpu < n_cpus; cpu++) {
		int last = cpu;

		if (topo_cpu_node(t, cpu) != node)
			continue;
		while (last + 1 < n_cpus && topo_cpu_node(t, last + 1) == node)
			last++;
		len += (size_t)snprintf(s + len, cap - len,
					last > cpu ? "%s%d-%d" : "%s%d",
					len ? "," : "", cpu, last);
		cpu = last;
	}
	return s;
}

void
perfdata_featw_numa(struct perfdata_bytes *b, const struct topo *t)
{
	int n = topo_n_nodes(t);

	perfdata_put_u32(b, (uint32_t)n);
	for (int i = 0; i < n; i++) {
		int node = topo_node_id(t, i);
		uint64_t total_kb = 0, free_kb = 0;
		char *cpus = perfdata_cpulist(t, node);

		topo_node_mem(t, node, &total_kb, &free_kb);
		perfdata_put_u32(b, (uint32_t)node);
		perfdata_put_u64(b, total_kb);
		perfdata_put_u64(b, free_kb);
		perfdata_put_string(b, cpus ? cpus : "");
		if (!cpus)
			b->oom = true;
		free(cpus);
	}
}

bool
perfdata_featw_mem(struct perfdata_bytes *b, uint64_t block_size,
		   const int16_t *block_node, size_t n_blocks)
{
	int16_t nodes[64];
	size_t n_nodes = 0;

	if (n_blocks == 0 || block_size == 0)
		return false;
	/* Distinct nodes in ascending order (few; a linear insert). */
	for (size_t i = 0; i < n_blocks; i++) {
		size_t k = 0;

		if (block_node[i] < 0)
			continue;
		while (k < n_nodes && nodes[k] < block_node[i])
			k++;
		if (k < n_nodes && nodes[k] == block_node[i])
			continue;
		if (n_nodes == ARRAY_SIZE(nodes))
			continue;
		memmove(nodes + k + 1, nodes + k, (n_nodes - k) * 2);
		nodes[k] = block_node[i];
		n_nodes++;
	}
	perfdata_put_u64(b, PERFDATA_MEM_TOPOLOGY_VERSION);
	perfdata_put_u64(b, block_size);
	perfdata_put_u64(b, n_nodes);
	for (size_t k = 0; k < n_nodes; k++) {
		size_t last = 0;

		for (size_t i = 0; i < n_blocks; i++)
			if (block_node[i] == nodes[k])
				last = i;
		perfdata_put_u64(b, (uint64_t)nodes[k]);
		perfdata_put_u64(b, last + 1);
		/* The bitmap's own length, as perf's do_write_bitmap(). */
		perfdata_put_u64(b, last + 1);
		for (size_t w = 0; w <= last / 64; w++) {
			uint64_t word = 0;

			for (size_t bit = 0; bit < 64; bit++) {
				size_t i = w * 64 + bit;

				if (i <= last && block_node[i] == nodes[k])
					word |= UINT64_C(1) << bit;
			}
			perfdata_put_u64(b, word);
		}
	}
	return true;
}

/* Parses "memoryM" / "nodeN"; -1 if the name is not prefix + digits. */
static long
perfdata_dirent_num(const char *name, const char *prefix)
{
	size_t plen = strlen(prefix);
	char *end;
	long v;

	if (strncmp(name, prefix, plen) != 0 || name[plen] < '0' ||
	    name[plen] > '9')
		return -1;
	v = strtol(name + plen, &end, 10);
	return *end == '\0' ? v : -1;
}

/* Marks every memoryM entry of one node directory. */
static int
perfdata_mem_node_dir(const char *dir_path, int node, int16_t **map,
		      size_t *n)
{
	struct dirent *de;
	DIR *dir = opendir(dir_path);

	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		long m = perfdata_dirent_num(de->d_name, "memory");

		if (m < 0 || m >= (long)PERFDATA_MAX_BLOCKS)
			continue;
		if ((size_t)m >= *n) {
			size_t want = (size_t)m + 1;
			int16_t *grown = realloc(*map, want * sizeof(**map));

			if (!grown) {
				closedir(dir);
				return -ENOMEM;
			}
			for (size_t i = *n; i < want; i++)
				grown[i] = -1;
			*map = grown;
			*n = want;
		}
		(*map)[m] = (int16_t)node;
	}
	closedir(dir);
	return 0;
}

int
perfdata_featw_mem_sysfs(uint64_t *block_size, int16_t **block_node,
			 size_t *n_blocks)
{
	char path[512], buf[64];
	struct dirent *de;
	int16_t *map = NULL;
	size_t n = 0;
	DIR *dir;
	int ret = 0;

	*block_node = NULL;
	*n_blocks = 0;
	if (sysfs_path(path, sizeof(path),
		       "devices/system/memory/block_size_bytes") < 0 ||
	    sysfs_read(path, buf, sizeof(buf)) <= 0)
		return -ENOENT;
	*block_size = strtoull(buf, NULL, 16);
	if (*block_size == 0 || (*block_size & (*block_size - 1)))
		return -ENOENT;
	if (sysfs_path(path, sizeof(path), "devices/system/node") < 0)
		return -ENOENT;
	dir = opendir(path);
	if (!dir)
		return -ENOENT;
	while (ret == 0 && (de = readdir(dir))) {
		long node = perfdata_dirent_num(de->d_name, "node");
		char sub[600];

		int len;

		if (node < 0 || node > PERFDATA_MAX_NODE)
			continue;
		len = snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (len < 0 || (size_t)len >= sizeof(sub))
			continue;
		ret = perfdata_mem_node_dir(sub, (int)node, &map, &n);
	}
	closedir(dir);
	if (ret < 0 || n == 0) {
		free(map);
		return ret < 0 ? ret : -ENOENT;
	}
	*block_node = map;
	*n_blocks = n;
	return 0;
}

void
perfdata_featw_pmus(struct perfdata_bytes *b,
		    const struct perfdata_pmu_map *pmus, size_t n)
{
	perfdata_put_u32(b, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		perfdata_put_u32(b, pmus[i].type);
		perfdata_put_string(b, pmus[i].name);
	}
}

int
perfdata_featw_pmus_sysfs(struct perfdata_pmu_map **pmus)
{
	struct perfdata_pmu_map *list = NULL, *grown;
	char path[512], file[700], buf[32];
	struct dirent *de;
	size_t n = 0;
	DIR *dir;

	*pmus = NULL;
	if (sysfs_path(path, sizeof(path), "bus/event_source/devices") < 0)
		return -ENOENT;
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		size_t name_len = strnlen(de->d_name, sizeof(list->name) - 1);
		int len;

		if (de->d_name[0] == '.')
			continue;
		len = snprintf(file, sizeof(file), "%s/%s/type", path,
			       de->d_name);
		if (len < 0 || (size_t)len >= sizeof(file) ||
		    sysfs_read(file, buf, sizeof(buf)) <= 0)
			continue;
		grown = realloc(list, (n + 1) * sizeof(*list));
		if (!grown) {
			free(list);
			closedir(dir);
			return -ENOMEM;
		}
		list = grown;
		list[n].type = (uint32_t)strtoul(buf, NULL, 10);
		memcpy(list[n].name, de->d_name, name_len);
		list[n].name[name_len] = '\0';
		n++;
	}
	closedir(dir);
	*pmus = list;
	return (int)n;
}

/* A whole tracefs file (sizes in stat are fake there).  Length or -errno;
 * *out is malloc'd. */
static long
perfdata_slurp_tracefs(const char *rel, char **out)
{
	char path[512];
	size_t cap = 4096, len = 0;
	char *buf;
	FILE *f;

	if (tracefs_path(path, sizeof(path), rel) < 0)
		return -ENOENT;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + len, 1, cap - len, f);

		len += got;
		if (len < cap)
			break;
		if (cap >= (1u << 24)) {
			free(buf);
			buf = NULL;
			break;
		}
		cap *= 2;
		{
			char *grown = realloc(buf, cap);

			if (!grown)
				free(buf);
			buf = grown;
		}
	}
	fclose(f);
	if (!buf)
		return -ENOMEM;
	*out = buf;
	return (long)len;
}

/* u64 size then the file, as perf's record_file(path, 8). */
static int
perfdata_put_tracefs_file(struct perfdata_bytes *b, const char *rel)
{
	char *text = NULL;
	long len = perfdata_slurp_tracefs(rel, &text);

	if (len < 0)
		return (int)len;
	perfdata_put_u64(b, (uint64_t)len);
	perfdata_put_bytes(b, text, (size_t)len);
	free(text);
	return 0;
}

int
perfdata_featw_tracing(struct perfdata_bytes *b, const char *const *names,
		       size_t n)
{
	const unsigned char magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i',
					  'n', 'g' };
	unsigned char host_big = htonl(1) == 1, c;
	char rel[256];
	int ret;

	perfdata_put_bytes(b, magic, sizeof(magic));
	perfdata_put_bytes(b, "0.6", 4);
	c = (unsigned char)(b->swap ? !host_big : host_big);
	perfdata_put_bytes(b, &c, 1);
	c = (unsigned char)sizeof(long);
	perfdata_put_bytes(b, &c, 1);
	perfdata_put_u32(b, (uint32_t)sysconf(_SC_PAGESIZE));
	perfdata_put_bytes(b, "header_page", 12);
	ret = perfdata_put_tracefs_file(b, "events/header_page");
	if (ret < 0)
		return ret;
	perfdata_put_bytes(b, "header_event", 13);
	ret = perfdata_put_tracefs_file(b, "events/header_event");
	if (ret < 0)
		return ret;
	perfdata_put_u32(b, 0);		/* ftrace's own events */
	/* One system per tracepoint: names are few and rarely share one. */
	perfdata_put_u32(b, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		const char *colon = strchr(names[i], ':');
		int len;

		if (!colon)
			return -ENOENT;
		perfdata_put_bytes(b, names[i], (size_t)(colon - names[i]));
		perfdata_put_bytes(b, "", 1);
		perfdata_put_u32(b, 1);
		len = snprintf(rel, sizeof(rel), "events/%.*s/%s/format",
			       (int)(colon - names[i]), names[i], colon + 1);
		if (len < 0 || (size_t)len >= sizeof(rel))
			return -ENOENT;
		ret = perfdata_put_tracefs_file(b, rel);
		if (ret < 0)
			return ret;
	}
	perfdata_put_u32(b, 0);		/* kallsyms, as perf since 5.x */
	perfdata_put_u32(b, 0);		/* printk formats */
	perfdata_put_u64(b, 0);		/* saved cmdlines */
	return b->oom ? -ENOMEM : 0;
}
