#include "config.h"

/*
 * CPU and NUMA-node topology.  Built on the main or collector thread
 * before sampling starts and read-only afterwards, except that
 * topo_node_mem() reads free memory live from its backend.
 *
 * Three backends fill the same tables: libnuma, a sysfs tree below
 * MEMTOP_SYSFS_ROOT (recorded trees of other machines), and a plain
 * one-node view from sysinfo() when the kernel has no NUMA support.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <numa.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "topo.h"

/*
 * Linux allows at most 8192 CPUs and 1024 nodes today; the caps only keep
 * a corrupt sysfs file from asking for absurd tables.  Node numbers must
 * also fit the int16_t of nodemap.
 */
#define TOPO_MAX_CPUS 65536
#define TOPO_MAX_NODE 32767

enum topo_backend {
	TOPO_LIBNUMA,
	TOPO_SYSFS,
	TOPO_SYSINFO,
	TOPO_FAKE,
	TOPO_RECORDED,
};

struct topo {
	enum topo_backend backend;
	int n_cpus;
	int n_nodes;
	int *cpu_node;		/* [n_cpus] node number or -1 */
	int *cpu_node_idx;	/* [n_cpus] index into node_ids or -1 */
	int *node_ids;		/* [n_nodes] ascending node numbers */
	char *sysfs_root;	/* TOPO_SYSFS: MEMTOP_SYSFS_ROOT */
	uint64_t *mem_kb;	/* TOPO_RECORDED: [2 * n_nodes] total, free */
};

/* Large enough for a cpulist naming every other CPU of 8192. */
#define TOPO_LIST_BUF 65536

static struct topo *
topo_alloc(enum topo_backend backend, int n_cpus)
{
	struct topo *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->backend = backend;
	t->n_cpus = n_cpus;
	t->cpu_node = malloc(((size_t)n_cpus + 1) * sizeof(int));
	t->cpu_node_idx = malloc(((size_t)n_cpus + 1) * sizeof(int));
	if (!t->cpu_node || !t->cpu_node_idx) {
		topo_free(t);
		return NULL;
	}
	for (int cpu = 0; cpu < n_cpus; cpu++)
		t->cpu_node[cpu] = -1;
	return t;
}

void
topo_free(struct topo *t)
{
	if (!t)
		return;
	free(t->cpu_node);
	free(t->cpu_node_idx);
	free(t->node_ids);
	free(t->sysfs_root);
	free(t->mem_kb);
	free(t);
}

static int
topo_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/*
 * Builds node_ids from the extra node numbers (nodes listed for their
 * memory alone) plus every node some CPU maps to, sorted and unique, and
 * then cpu_node_idx.  An empty result becomes node 0, so n_nodes >= 1.
 */
static int
topo_finish(struct topo *t, const int *extra, int n_extra)
{
	int n = 0;

	t->node_ids = malloc(((size_t)t->n_cpus + (size_t)n_extra + 1) *
			     sizeof(int));
	if (!t->node_ids)
		return -ENOMEM;
	for (int i = 0; i < n_extra; i++)
		t->node_ids[n++] = extra[i];
	for (int cpu = 0; cpu < t->n_cpus; cpu++)
		if (t->cpu_node[cpu] >= 0)
			t->node_ids[n++] = t->cpu_node[cpu];
	if (n == 0)
		t->node_ids[n++] = 0;
	qsort(t->node_ids, (size_t)n, sizeof(int), topo_cmp_int);
	t->n_nodes = 0;
	for (int i = 0; i < n; i++)
		if (t->n_nodes == 0 ||
		    t->node_ids[t->n_nodes - 1] != t->node_ids[i])
			t->node_ids[t->n_nodes++] = t->node_ids[i];
	for (int cpu = 0; cpu < t->n_cpus; cpu++)
		t->cpu_node_idx[cpu] = topo_node_index(t, t->cpu_node[cpu]);
	return 0;
}

struct topo *
topo_new_fake(int n_cpus, const int *cpu_node)
{
	struct topo *t;

	if (n_cpus < 0 || n_cpus > TOPO_MAX_CPUS) {
		errno = EINVAL;
		return NULL;
	}
	for (int cpu = 0; cpu_node && cpu < n_cpus; cpu++) {
		if (cpu_node[cpu] < -1 || cpu_node[cpu] > TOPO_MAX_NODE) {
			errno = EINVAL;
			return NULL;
		}
	}
	t = topo_alloc(TOPO_FAKE, n_cpus);
	if (!t)
		return NULL;
	for (int cpu = 0; cpu < n_cpus; cpu++)
		t->cpu_node[cpu] = cpu_node ? cpu_node[cpu] : 0;
	if (topo_finish(t, NULL, 0) < 0) {
		topo_free(t);
		return NULL;
	}
	return t;
}

/* Reads a small file into buf, NUL-terminated.  0 or -errno. */
static int
topo_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	size_t got = 0;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got + 1 < size) {
		n = read(fd, buf + got, size - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out_close;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
out_close:
	close(fd);
	return rc;
}

static int
topo_parse_num(const char **s, int *out)
{
	long v = 0;
	const char *p = *s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p++ - '0');
		if (v >= TOPO_MAX_CPUS)
			return -ERANGE;
	}
	*s = p;
	*out = (int)v;
	return 0;
}

/*
 * Kernel list syntax as in cpulist and cpu/possible: "0-3,8,10-11", an
 * empty list for a CPU-less node, a trailing newline.  The stride form
 * ("0-7:2") is only accepted on input by the kernel, never printed.
 * Returns one past the highest CPU named (0 for an empty list) or
 * -EINVAL.  When cpu_node is set, cpu_node[cpu] = node for every CPU
 * named below n_cpus.
 */
static int
topo_parse_cpulist(const char *s, int node, int *cpu_node, int n_cpus)
{
	int end = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\n' || *s == '\0')
		return 0;
	for (;;) {
		int lo, hi;

		if (topo_parse_num(&s, &lo) < 0)
			return -EINVAL;
		hi = lo;
		if (*s == '-') {
			s++;
			if (topo_parse_num(&s, &hi) < 0 || hi < lo)
				return -EINVAL;
		}
		for (int cpu = lo; cpu_node && cpu <= hi && cpu < n_cpus;
		     cpu++)
			cpu_node[cpu] = node;
		if (hi + 1 > end)
			end = hi + 1;
		if (*s != ',')
			break;
		s++;
	}
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	return *s == '\0' ? end : -EINVAL;
}

/*
 * "Node 0 MemTotal:  16314912 kB" lines of nodeN/meminfo.  0, or -ENOENT
 * when the file or the MemTotal line is missing.
 */
static int
topo_read_meminfo(const char *root, int node, uint64_t *total_kb,
		  uint64_t *free_kb)
{
	char path[PATH_MAX], buf[8192];
	bool have_total = false;
	char *line, *save = NULL;
	int rc;

	snprintf(path, sizeof(path), "%s/sys/devices/system/node/node%d/meminfo",
		 root, node);
	rc = topo_read_file(path, buf, sizeof(buf));
	if (rc < 0)
		return -ENOENT;
	*total_kb = 0;
	*free_kb = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long kb;
		char key[32];
		int id;

		if (sscanf(line, "Node %d %31[^:]: %llu", &id, key, &kb) != 3)
			continue;
		if (strcmp(key, "MemTotal") == 0) {
			*total_kb = kb;
			have_total = true;
		} else if (strcmp(key, "MemFree") == 0) {
			*free_kb = kb;
		}
	}
	return have_total ? 0 : -ENOENT;
}

/* Node number from a "nodeN" directory entry, or -1. */
static int
topo_dirent_node(const char *name)
{
	const char *p = name + 4;
	int node;

	if (strncmp(name, "node", 4) != 0 || topo_parse_num(&p, &node) < 0 ||
	    *p != '\0' || node > TOPO_MAX_NODE)
		return -1;
	return node;
}

/*
 * Sysfs tree below root.  A node is listed when it has CPUs or memory;
 * an unreadable or malformed cpulist counts as no CPUs.  Without any node
 * directory every CPU belongs to node 0.  CPU count: cpu/possible, widened
 * to the highest CPU any node names, or this machine's count when the tree
 * has neither.  cpulists are kept as text between the pass that sizes the
 * tables and the one that fills them.
 */
static struct topo *
topo_new_sysfs(const char *root)
{
	char path[PATH_MAX];
	char *buf = NULL, **cpulists = NULL;
	int *ids = NULL, *mem_nodes = NULL;
	int n_ids = 0, n_mem = 0, cap = 0, n_cpus = 0, end;
	struct topo *t = NULL;
	struct dirent *de;
	DIR *dir = NULL;

	buf = malloc(TOPO_LIST_BUF);
	if (!buf)
		goto out;
	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/possible",
		 root);
	if (topo_read_file(path, buf, TOPO_LIST_BUF) == 0) {
		end = topo_parse_cpulist(buf, 0, NULL, 0);
		if (end > 0)
			n_cpus = end;
	}

	snprintf(path, sizeof(path), "%s/sys/devices/system/node", root);
	dir = opendir(path);
	while (dir && (de = readdir(dir))) {
		int node = topo_dirent_node(de->d_name);

		if (node < 0)
			continue;
		if (n_ids == cap) {
			int ncap = cap ? 2 * cap : 8;
			void *nl;

			nl = realloc(cpulists, (size_t)ncap * sizeof(char *));
			if (!nl)
				goto out_free;
			cpulists = nl;
			nl = realloc(ids, (size_t)ncap * sizeof(*ids));
			if (!nl)
				goto out_free;
			ids = nl;
			cap = ncap;
		}
		snprintf(path, sizeof(path),
			 "%s/sys/devices/system/node/node%d/cpulist", root,
			 node);
		if (topo_read_file(path, buf, TOPO_LIST_BUF) < 0 ||
		    topo_parse_cpulist(buf, node, NULL, 0) < 0)
			buf[0] = '\0';
		end = topo_parse_cpulist(buf, node, NULL, 0);
		if (end > n_cpus)
			n_cpus = end;
		cpulists[n_ids] = strdup(buf);
		if (!cpulists[n_ids])
			goto out_free;
		ids[n_ids++] = node;
	}
	if (n_cpus == 0)
		n_cpus = get_nprocs_conf();

	t = topo_alloc(TOPO_SYSFS, n_cpus);
	mem_nodes = malloc(((size_t)n_ids + 1) * sizeof(int));
	if (!t || !mem_nodes)
		goto out_free;
	t->sysfs_root = strdup(root);
	if (!t->sysfs_root)
		goto out_free;
	for (int i = 0; i < n_ids; i++) {
		uint64_t total_kb, free_kb;

		topo_parse_cpulist(cpulists[i], ids[i], t->cpu_node, n_cpus);
		if (topo_read_meminfo(root, ids[i], &total_kb, &free_kb) == 0 &&
		    total_kb > 0)
			mem_nodes[n_mem++] = ids[i];
	}
	if (n_ids == 0)
		for (int cpu = 0; cpu < n_cpus; cpu++)
			t->cpu_node[cpu] = 0;
	if (topo_finish(t, mem_nodes, n_mem) < 0)
		goto out_free;
	goto out;

out_free:
	topo_free(t);
	t = NULL;
out:
	if (dir)
		closedir(dir);
	for (int i = 0; i < n_ids; i++)
		free(cpulists[i]);
	free(cpulists);
	free(mem_nodes);
	free(ids);
	free(buf);
	return t;
}

/*
 * libnuma: CPUs from numa_num_configured_cpus() (numa_num_possible_cpus()
 * is the kernel's cpumask width, often far more than exist).  A node is
 * listed when numa_nodes_ptr has it and it has CPUs or memory; offline
 * CPUs have no node.
 */
static struct topo *
topo_new_libnuma(void)
{
	int n_cpus = numa_num_configured_cpus();
	int max_node = numa_max_node();
	int *mem_nodes = NULL;
	int n_mem = 0;
	struct topo *t;

	if (n_cpus < get_nprocs_conf())
		n_cpus = get_nprocs_conf();
	if (n_cpus < 1)
		n_cpus = 1;
	if (n_cpus > TOPO_MAX_CPUS)
		n_cpus = TOPO_MAX_CPUS;
	if (max_node < 0)
		max_node = 0;
	if (max_node > TOPO_MAX_NODE)
		max_node = TOPO_MAX_NODE;
	t = topo_alloc(TOPO_LIBNUMA, n_cpus);
	mem_nodes = malloc(((size_t)max_node + 1) * sizeof(int));
	if (!t || !mem_nodes)
		goto out_free;
	for (int cpu = 0; cpu < n_cpus; cpu++) {
		int node = numa_node_of_cpu(cpu);

		if (node >= 0 && node <= max_node &&
		    numa_bitmask_isbitset(numa_nodes_ptr, (unsigned)node))
			t->cpu_node[cpu] = node;
	}
	for (int node = 0; node <= max_node; node++)
		if (numa_bitmask_isbitset(numa_nodes_ptr, (unsigned)node) &&
		    numa_node_size64(node, NULL) > 0)
			mem_nodes[n_mem++] = node;
	if (topo_finish(t, mem_nodes, n_mem) < 0)
		goto out_free;
	free(mem_nodes);
	return t;

out_free:
	free(mem_nodes);
	topo_free(t);
	return NULL;
}

static struct topo *
topo_new_sysinfo(void)
{
	struct topo *t = topo_alloc(TOPO_SYSINFO, get_nprocs_conf());

	if (!t)
		return NULL;
	for (int cpu = 0; cpu < t->n_cpus; cpu++)
		t->cpu_node[cpu] = 0;
	if (topo_finish(t, NULL, 0) < 0) {
		topo_free(t);
		return NULL;
	}
	return t;
}

/*
 * A recording's nodes: the cpulists are parsed as sysfs ones, every node
 * is kept even without CPUs, and the memory figures are the recorded ones.
 */
struct topo *
topo_new_recorded(int n_cpus, const struct topo_node_desc *nodes,
		  int n_nodes)
{
	int *ids = NULL;
	struct topo *t = NULL;

	if (n_cpus < 0 || n_nodes < 0 || n_nodes > TOPO_MAX_NODE + 1)
		goto out_inval;
	for (int i = 0; i < n_nodes; i++) {
		int end = topo_parse_cpulist(nodes[i].cpulist, 0, NULL, 0);

		if (end < 0 || nodes[i].node < 0 ||
		    nodes[i].node > TOPO_MAX_NODE)
			goto out_inval;
		for (int j = 0; j < i; j++)
			if (nodes[j].node == nodes[i].node)
				goto out_inval;
		if (end > n_cpus)
			n_cpus = end;
	}
	if (n_cpus > TOPO_MAX_CPUS)
		goto out_inval;
	t = topo_alloc(TOPO_RECORDED, n_cpus);
	ids = malloc(((size_t)n_nodes + 1) * sizeof(*ids));
	if (!t || !ids)
		goto out_free;
	for (int i = 0; i < n_nodes; i++) {
		topo_parse_cpulist(nodes[i].cpulist, nodes[i].node,
				   t->cpu_node, n_cpus);
		ids[i] = nodes[i].node;
	}
	if (topo_finish(t, ids, n_nodes) < 0)
		goto out_free;
	t->mem_kb = calloc(2 * (size_t)t->n_nodes, sizeof(*t->mem_kb));
	if (!t->mem_kb)
		goto out_free;
	for (int i = 0; i < n_nodes; i++) {
		int idx = topo_node_index(t, nodes[i].node);

		t->mem_kb[2 * idx] = nodes[i].mem_total_kb;
		t->mem_kb[2 * idx + 1] = nodes[i].mem_free_kb;
	}
	free(ids);
	return t;

out_inval:
	errno = EINVAL;
	return NULL;
out_free:
	free(ids);
	topo_free(t);
	errno = ENOMEM;
	return NULL;
}

struct topo *
topo_new_system(void)
{
	const char *root = getenv("MEMTOP_SYSFS_ROOT");

	if (root && root[0])
		return topo_new_sysfs(root);
	if (numa_available() < 0)
		return topo_new_sysinfo();
	return topo_new_libnuma();
}

int
topo_n_cpus(const struct topo *t)
{
	return t->n_cpus;
}

int
topo_n_nodes(const struct topo *t)
{
	return t->n_nodes;
}

int
topo_node_id(const struct topo *t, int idx)
{
	if (idx < 0 || idx >= t->n_nodes)
		return -1;
	return t->node_ids[idx];
}

int
topo_node_index(const struct topo *t, int node)
{
	for (int i = 0; node >= 0 && i < t->n_nodes; i++)
		if (t->node_ids[i] == node)
			return i;
	return -1;
}

int
topo_cpu_node(const struct topo *t, int cpu)
{
	if (cpu < 0 || cpu >= t->n_cpus)
		return -1;
	return t->cpu_node[cpu];
}

int
topo_cpu_node_index(const struct topo *t, int cpu)
{
	if (cpu < 0 || cpu >= t->n_cpus)
		return -1;
	return t->cpu_node_idx[cpu];
}

int
topo_node_mem(const struct topo *t, int node, uint64_t *total_kb,
	      uint64_t *free_kb)
{
	struct sysinfo si;
	long long total, free_bytes;

	if (topo_node_index(t, node) < 0)
		return -ENOENT;
	switch (t->backend) {
	case TOPO_LIBNUMA:
		total = numa_node_size64(node, &free_bytes);
		if (total < 0)
			return -ENOENT;
		*total_kb = (uint64_t)total / 1024;
		*free_kb = free_bytes > 0 ? (uint64_t)free_bytes / 1024 : 0;
		return 0;
	case TOPO_SYSFS:
		return topo_read_meminfo(t->sysfs_root, node, total_kb,
					 free_kb);
	case TOPO_SYSINFO:
		if (sysinfo(&si) < 0)
			return -errno;
		*total_kb = (uint64_t)si.totalram * si.mem_unit / 1024;
		*free_kb = (uint64_t)si.freeram * si.mem_unit / 1024;
		return 0;
	case TOPO_FAKE:
		/* Fake nodes exist but own no memory. */
		*total_kb = 0;
		*free_kb = 0;
		return 0;
	case TOPO_RECORDED:
		*total_kb = t->mem_kb[2 * topo_node_index(t, node)];
		*free_kb = t->mem_kb[2 * topo_node_index(t, node) + 1];
		return 0;
	}
	return -ENOENT;
}
