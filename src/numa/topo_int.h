/*
 * Inside the numa room: the layout of struct topo and what topo.c and
 * topo_sysfs.c share.
 */
#ifndef MEMTOP_TOPO_INT_H
#define MEMTOP_TOPO_INT_H

#include <stdint.h>

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

/* A topology of n_cpus with every CPU's node unknown (-1); NULL if out of
 * memory. */
struct topo *topo_alloc(enum topo_backend backend, int n_cpus);
/*
 * Fills node_ids from extra (nodes with memory alone) and the CPUs'
 * nodes, sorted and unique, then cpu_node_idx.  0 or -ENOMEM.
 */
int topo_finish(struct topo *t, const int *extra, int n_extra);
/* MemTotal and MemFree of node below root's sysfs tree, kB.  0/-errno. */
int topo_read_meminfo(const char *root, int node, uint64_t *total_kb,
		      uint64_t *free_kb);
/*
 * Kernel list syntax ("0-3,8,10-11", empty, trailing newline).  Returns
 * one past the highest CPU named (0 for an empty list) or -EINVAL; sets
 * cpu_node[cpu] = node for every CPU named below n_cpus when cpu_node is
 * set.
 */
int topo_parse_cpulist(const char *s, int node, int *cpu_node, int n_cpus);
/* The topology of the sysfs tree below root (see topo_sysfs.c); NULL
 * when out of memory. */
struct topo *topo_new_sysfs(const char *root);

#endif
