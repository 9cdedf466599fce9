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

#include "topo_int.h"

struct topo *
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
int
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

struct topo *
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

bool
topo_nodes_known(const struct topo *t)
{
	/* A sysfs tree (MEMTOP_SYSFS_ROOT) is another machine's, or a
	 * test's stand-in: not this one's nodes. */
	return t->backend == TOPO_LIBNUMA || t->backend == TOPO_FAKE ||
	       t->backend == TOPO_RECORDED;
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
