/*
 * The topology from a sysfs tree below a root (MEMTOP_SYSFS_ROOT, for
 * the recorded trees of other machines): cpulists, node directories and
 * per-node meminfo.  Main thread, before sampling starts; topo_node_mem
 * reads meminfo again live.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "topo.h"
#include "topo_int.h"

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
int
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
int
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

/* The node directories of a sysfs tree: each node's number and cpulist
 * text, and the CPU count the lists and cpu/possible call for. */
struct topo_scan {
	char **cpulists;
	int *ids;
	int n, cap;
	int n_cpus;
};

static void
topo_scan_fini(struct topo_scan *sc)
{
	for (int i = 0; i < sc->n; i++)
		free(sc->cpulists[i]);
	free(sc->cpulists);
	free(sc->ids);
}

/* Appends node with its cpulist text.  0 or -ENOMEM. */
static int
topo_scan_add(struct topo_scan *sc, int node, const char *cpulist)
{
	if (sc->n == sc->cap) {
		int ncap = sc->cap ? 2 * sc->cap : 8;
		void *nl;

		nl = realloc(sc->cpulists, (size_t)ncap * sizeof(char *));
		if (!nl)
			return -ENOMEM;
		sc->cpulists = nl;
		nl = realloc(sc->ids, (size_t)ncap * sizeof(*sc->ids));
		if (!nl)
			return -ENOMEM;
		sc->ids = nl;
		sc->cap = ncap;
	}
	sc->cpulists[sc->n] = strdup(cpulist);
	if (!sc->cpulists[sc->n])
		return -ENOMEM;
	sc->ids[sc->n++] = node;
	return 0;
}

/* The first pass over the tree below root; buf holds TOPO_LIST_BUF
 * bytes.  0 or -ENOMEM. */
static int
topo_scan(const char *root, char *buf, struct topo_scan *sc)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	int end, ret = 0;

	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/possible",
		 root);
	if (topo_read_file(path, buf, TOPO_LIST_BUF) == 0) {
		end = topo_parse_cpulist(buf, 0, NULL, 0);
		if (end > 0)
			sc->n_cpus = end;
	}
	snprintf(path, sizeof(path), "%s/sys/devices/system/node", root);
	dir = opendir(path);
	while (dir && ret == 0 && (de = readdir(dir))) {
		int node = topo_dirent_node(de->d_name);

		if (node < 0)
			continue;
		snprintf(path, sizeof(path),
			 "%s/sys/devices/system/node/node%d/cpulist", root,
			 node);
		if (topo_read_file(path, buf, TOPO_LIST_BUF) < 0 ||
		    topo_parse_cpulist(buf, node, NULL, 0) < 0)
			buf[0] = '\0';
		end = topo_parse_cpulist(buf, node, NULL, 0);
		if (end > sc->n_cpus)
			sc->n_cpus = end;
		ret = topo_scan_add(sc, node, buf);
	}
	if (dir)
		closedir(dir);
	if (sc->n_cpus == 0)
		sc->n_cpus = get_nprocs_conf();
	return ret;
}

/*
 * Sysfs tree below root.  A node is listed when it has CPUs or memory;
 * an unreadable or malformed cpulist counts as no CPUs.  Without any node
 * directory every CPU belongs to node 0.  CPU count: cpu/possible, widened
 * to the highest CPU any node names, or this machine's count when the tree
 * has neither.  cpulists are kept as text between the pass that sizes the
 * tables and the one that fills them.
 */
struct topo *
topo_new_sysfs(const char *root)
{
	struct topo_scan sc = { 0 };
	char *buf = malloc(TOPO_LIST_BUF);
	int *mem_nodes = NULL;
	struct topo *t = NULL;
	int n_mem = 0;

	if (!buf || topo_scan(root, buf, &sc) < 0)
		goto out;
	t = topo_alloc(TOPO_SYSFS, sc.n_cpus);
	mem_nodes = malloc(((size_t)sc.n + 1) * sizeof(int));
	if (!t || !mem_nodes)
		goto out_free;
	t->sysfs_root = strdup(root);
	if (!t->sysfs_root)
		goto out_free;
	for (int i = 0; i < sc.n; i++) {
		uint64_t total_kb, free_kb;

		topo_parse_cpulist(sc.cpulists[i], sc.ids[i], t->cpu_node,
				   sc.n_cpus);
		if (topo_read_meminfo(root, sc.ids[i], &total_kb,
				      &free_kb) == 0 && total_kb > 0)
			mem_nodes[n_mem++] = sc.ids[i];
	}
	if (sc.n == 0)
		for (int cpu = 0; cpu < sc.n_cpus; cpu++)
			t->cpu_node[cpu] = 0;
	if (topo_finish(t, mem_nodes, n_mem) < 0)
		goto out_free;
	goto out;

out_free:
	topo_free(t);
	t = NULL;
out:
	topo_scan_fini(&sc);
	free(mem_nodes);
	free(buf);
	return t;
}
