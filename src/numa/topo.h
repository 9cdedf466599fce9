/*
 * CPU and NUMA-node topology.  Built once at start (collector thread owns
 * it after that; read-only, so frames copy what they need).
 *
 * Node numbers may be sparse (nodes 0 and 2); index 0..n_nodes-1 addresses
 * arrays, topo_node_id() gives the number shown to users.
 */
#ifndef MEMTOP_TOPO_H
#define MEMTOP_TOPO_H

#include <stdbool.h>
#include <stdint.h>

struct topo;

/*
 * From the running system: libnuma (numa_node_of_cpu, numa_node_size64),
 * or, when MEMTOP_SYSFS_ROOT=DIR is set, DIR/sys/devices/system/node/
 * nodeN/{cpulist,meminfo} and DIR/sys/devices/system/cpu/possible.
 * Without NUMA support: one node 0 holding every CPU.  NULL on ENOMEM.
 */
struct topo *topo_new_system(void);
/* That stand-in itself (one node 0, every CPU), for tests. */
struct topo *topo_new_sysinfo(void);
/* For tests: n_cpus CPUs, cpu_node[cpu] = node number (-1 = none). */
struct topo *topo_new_fake(int n_cpus, const int *cpu_node);
/* A node as a recording describes it (perf.data NUMA_TOPOLOGY). */
struct topo_node_desc {
	int node;
	const char *cpulist;	/* kernel syntax, "0-3,8"; "" = no CPUs */
	uint64_t mem_total_kb;
	uint64_t mem_free_kb;
};
/*
 * The topology of another machine: every node listed (with or without
 * CPUs) and its memory, n_cpus CPUs (at least one past the highest CPU a
 * cpulist names).  NULL with errno EINVAL for a malformed cpulist, a node
 * out of range or listed twice, or ENOMEM.
 */
struct topo *topo_new_recorded(int n_cpus, const struct topo_node_desc *nodes,
			       int n_nodes);
void topo_free(struct topo *t);		/* NULL-safe */

int topo_n_cpus(const struct topo *t);	/* CPU ids are 0..n_cpus-1 */
int topo_n_nodes(const struct topo *t);	/* >= 1 */
/* Whether the node list is this machine's (libnuma), a recording's or a
 * test's: not the one-node stand-in of a system whose nodes could not be
 * read (libnuma unavailable: no NUMA support, or get_mempolicy denied by
 * a seccomp filter on a many-node host), nor a sysfs tree under
 * MEMTOP_SYSFS_ROOT (another machine's, or its own stand-in). */
bool topo_nodes_known(const struct topo *t);
int topo_node_id(const struct topo *t, int idx);
/* Index of node number `node`, or -1. */
int topo_node_index(const struct topo *t, int node);
/* Node number of cpu, or -1 for an unknown/out-of-range cpu. */
int topo_cpu_node(const struct topo *t, int cpu);
/* Index of cpu's node, or -1. */
int topo_cpu_node_index(const struct topo *t, int cpu);
/* Memory of node number `node` in KiB; 0 or -ENOENT. */
int topo_node_mem(const struct topo *t, int node, uint64_t *total_kb,
		  uint64_t *free_kb);

#endif
