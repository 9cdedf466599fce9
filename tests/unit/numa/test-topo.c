#include "config.h"

/*
 * Topology: the fake constructor's accessors, recorded sysfs trees below
 * tests/fixtures/sysfs/ read through MEMTOP_SYSFS_ROOT (sparse nodes, memory-only
 * and CPU-only nodes, missing files), live meminfo reads from a scratch
 * tree, and the running system through libnuma.
 */

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "testlib.h"
#include "topo.h"

static void
test_fake(void)
{
	static const int cpu_node[] = { 2, 2, 0, 0, 5, -1 };
	struct topo *t = topo_new_fake(6, cpu_node);
	uint64_t total = 1, free_kb = 1;

	if (!check(t != NULL))
		return;
	check_eq_i64(topo_n_cpus(t), 6);
	check_eq_i64(topo_n_nodes(t), 3);
	/* Indexes follow ascending node numbers, not CPU order. */
	check_eq_i64(topo_node_id(t, 0), 0);
	check_eq_i64(topo_node_id(t, 1), 2);
	check_eq_i64(topo_node_id(t, 2), 5);
	check_eq_i64(topo_node_id(t, 3), -1);
	check_eq_i64(topo_node_id(t, -1), -1);
	check_eq_i64(topo_node_index(t, 0), 0);
	check_eq_i64(topo_node_index(t, 2), 1);
	check_eq_i64(topo_node_index(t, 5), 2);
	check_eq_i64(topo_node_index(t, 1), -1);
	check_eq_i64(topo_node_index(t, -1), -1);
	check_eq_i64(topo_cpu_node(t, 0), 2);
	check_eq_i64(topo_cpu_node(t, 3), 0);
	check_eq_i64(topo_cpu_node(t, 4), 5);
	check_eq_i64(topo_cpu_node(t, 5), -1);
	check_eq_i64(topo_cpu_node(t, 6), -1);
	check_eq_i64(topo_cpu_node(t, -1), -1);
	check_eq_i64(topo_cpu_node_index(t, 0), 1);
	check_eq_i64(topo_cpu_node_index(t, 2), 0);
	check_eq_i64(topo_cpu_node_index(t, 4), 2);
	check_eq_i64(topo_cpu_node_index(t, 5), -1);
	check_eq_i64(topo_cpu_node_index(t, 99), -1);
	check_eq_i64(topo_node_mem(t, 2, &total, &free_kb), 0);
	check_eq_u64(total, 0);
	check_eq_u64(free_kb, 0);
	check_eq_i64(topo_node_mem(t, 1, &total, &free_kb), -ENOENT);
	topo_free(t);

	/* No CPU with a node still yields node 0; NULL map = all node 0. */
	t = topo_new_fake(2, (const int[]){ -1, -1 });
	if (check(t != NULL)) {
		check_eq_i64(topo_n_nodes(t), 1);
		check_eq_i64(topo_node_id(t, 0), 0);
		check_eq_i64(topo_cpu_node_index(t, 0), -1);
	}
	topo_free(t);
	t = topo_new_fake(3, NULL);
	if (check(t != NULL)) {
		check_eq_i64(topo_n_nodes(t), 1);
		check_eq_i64(topo_cpu_node(t, 2), 0);
		check_eq_i64(topo_cpu_node_index(t, 2), 0);
	}
	topo_free(t);

	check(topo_new_fake(-1, NULL) == NULL);
	check(topo_new_fake(1, (const int[]){ -2 }) == NULL);
	check(topo_new_fake(1, (const int[]){ 40000 }) == NULL);
	topo_free(NULL);
}

static struct topo *
load_tree(const char *srcdir, const char *name)
{
	char root[PATH_MAX];
	struct topo *t;

	snprintf(root, sizeof(root), "%s/tests/fixtures/sysfs/%s", srcdir, name);
	setenv("MEMTOP_SYSFS_ROOT", root, 1);
	t = topo_new_system();
	unsetenv("MEMTOP_SYSFS_ROOT");
	if (!check(t != NULL))
		fprintf(stderr, "  tree %s did not load\n", root);
	return t;
}

static void
check_mem(const struct topo *t, int node, int rc, uint64_t total,
	  uint64_t free_kb)
{
	uint64_t got_total = 0, got_free = 0;

	if (!check_eq_i64(topo_node_mem(t, node, &got_total, &got_free), rc))
		fprintf(stderr, "  node %d\n", node);
	if (rc == 0) {
		check_eq_u64(got_total, total);
		check_eq_u64(got_free, free_kb);
	}
}

static void
test_sysfs_trees(const char *srcdir)
{
	struct topo *t;

	/* Two nodes, two CPUs each; node/{online,possible,has_cpu} ignored. */
	t = load_tree(srcdir, "numa-2node");
	if (t) {
		check_eq_i64(topo_n_cpus(t), 4);
		check_eq_i64(topo_n_nodes(t), 2);
		check_eq_i64(topo_node_id(t, 0), 0);
		check_eq_i64(topo_node_id(t, 1), 1);
		check_eq_i64(topo_cpu_node(t, 0), 0);
		check_eq_i64(topo_cpu_node(t, 1), 0);
		check_eq_i64(topo_cpu_node(t, 2), 1);
		check_eq_i64(topo_cpu_node(t, 3), 1);
		check_eq_i64(topo_cpu_node_index(t, 3), 1);
		check_mem(t, 0, 0, 8155488, 7012345);
		check_mem(t, 1, 0, 8257536, 8000000);
		check_mem(t, 2, -ENOENT, 0, 0);
	}
	topo_free(t);

	/* Nodes 0 and 2 only: index 1 is node 2. */
	t = load_tree(srcdir, "numa-sparse");
	if (t) {
		check_eq_i64(topo_n_cpus(t), 8);
		check_eq_i64(topo_n_nodes(t), 2);
		check_eq_i64(topo_node_id(t, 1), 2);
		check_eq_i64(topo_node_index(t, 2), 1);
		check_eq_i64(topo_node_index(t, 1), -1);
		for (int cpu = 0; cpu < 8; cpu++) {
			check_eq_i64(topo_cpu_node(t, cpu), cpu < 4 ? 0 : 2);
			check_eq_i64(topo_cpu_node_index(t, cpu),
				     cpu < 4 ? 0 : 1);
		}
		check_mem(t, 2, 0, 16515072, 9000000);
	}
	topo_free(t);

	/*
	 * node1: CPUs, no memory (listed); node2: memory, no CPUs (listed);
	 * node3: neither (not listed).  cpu/possible says 16, nodes name 8.
	 */
	t = load_tree(srcdir, "numa-memless");
	if (t) {
		check_eq_i64(topo_n_cpus(t), 16);
		check_eq_i64(topo_n_nodes(t), 3);
		check_eq_i64(topo_node_id(t, 0), 0);
		check_eq_i64(topo_node_id(t, 1), 1);
		check_eq_i64(topo_node_id(t, 2), 2);
		check_eq_i64(topo_node_index(t, 3), -1);
		check_eq_i64(topo_cpu_node(t, 5), 0);
		check_eq_i64(topo_cpu_node(t, 6), 1);
		check_eq_i64(topo_cpu_node(t, 7), 1);
		check_eq_i64(topo_cpu_node(t, 8), -1);
		check_eq_i64(topo_cpu_node_index(t, 15), -1);
		check_mem(t, 1, 0, 0, 0);
		check_mem(t, 2, 0, 67108864, 67000000);
		check_mem(t, 3, -ENOENT, 0, 0);
	}
	topo_free(t);

	/* No node directory at all: one node 0 holding every CPU. */
	t = load_tree(srcdir, "no-node");
	if (t) {
		check_eq_i64(topo_n_cpus(t), 6);
		check_eq_i64(topo_n_nodes(t), 1);
		check_eq_i64(topo_node_id(t, 0), 0);
		for (int cpu = 0; cpu < 6; cpu++)
			check_eq_i64(topo_cpu_node_index(t, cpu), 0);
		check_mem(t, 0, -ENOENT, 0, 0);
	}
	topo_free(t);

	/* A root that does not exist: this machine's CPUs on node 0. */
	t = load_tree(srcdir, "does-not-exist");
	if (t) {
		check_eq_i64(topo_n_cpus(t), get_nprocs_conf());
		check_eq_i64(topo_n_nodes(t), 1);
		check_eq_i64(topo_cpu_node(t, 0), 0);
	}
	topo_free(t);
}

static int
write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int
make_dirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/*
 * Scratch tree: meminfo is read on every topo_node_mem() call, and
 * malformed cpulists count as CPU-less.
 */
static void
test_scratch_tree(void)
{
	char root[] = "/tmp/memtop-topo-XXXXXX";
	char n0[PATH_MAX], n1[PATH_MAX], n2[PATH_MAX], cpu[PATH_MAX];
	char cmd[PATH_MAX + 16];
	struct topo *t;
	bool ok;

	if (!check(mkdtemp(root) != NULL))
		return;
	snprintf(n0, sizeof(n0), "%s/sys/devices/system/node/node0", root);
	snprintf(n1, sizeof(n1), "%s/sys/devices/system/node/node1", root);
	snprintf(n2, sizeof(n2), "%s/sys/devices/system/node/node2x", root);
	snprintf(cpu, sizeof(cpu), "%s/sys/devices/system/cpu", root);
	ok = make_dirs(n0) == 0 && make_dirs(n1) == 0 &&
	     make_dirs(n2) == 0 && make_dirs(cpu) == 0 &&
	     write_file(cpu, "possible", "0-3\n") == 0 &&
	     write_file(n0, "cpulist", "0,2-3\n") == 0 &&
	     write_file(n0, "meminfo", "Node 0 MemTotal: 1000 kB\n"
			"Node 0 MemFree: 400 kB\n") == 0 &&
	     write_file(n1, "cpulist", "3-1\n") == 0 &&
	     write_file(n1, "meminfo", "Node 1 MemTotal: 2000 kB\n"
			"Node 1 MemFree: 2000 kB\n") == 0 &&
	     write_file(n2, "cpulist", "1\n") == 0;
	if (!check(ok))
		goto out;

	setenv("MEMTOP_SYSFS_ROOT", root, 1);
	t = topo_new_system();
	unsetenv("MEMTOP_SYSFS_ROOT");
	if (!check(t != NULL))
		goto out;
	check_eq_i64(topo_n_nodes(t), 2);
	check_eq_i64(topo_cpu_node(t, 0), 0);
	check_eq_i64(topo_cpu_node(t, 1), -1);	/* node1's list is bad */
	check_eq_i64(topo_cpu_node(t, 2), 0);
	check_eq_i64(topo_cpu_node(t, 3), 0);
	check_mem(t, 0, 0, 1000, 400);
	check_mem(t, 1, 0, 2000, 2000);
	check(write_file(n0, "meminfo", "Node 0 MemTotal: 1000 kB\n"
			 "Node 0 MemFree: 123 kB\n") == 0);
	check_mem(t, 0, 0, 1000, 123);
	topo_free(t);
out:
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	check(system(cmd) == 0);
}

/* The machine we run on: whatever it is, every usable CPU has a node. */
static void
test_system(void)
{
	struct topo *t;
	cpu_set_t set;
	struct sysinfo si;
	uint64_t sum_total = 0;

	unsetenv("MEMTOP_SYSFS_ROOT");
	t = topo_new_system();
	if (!check(t != NULL))
		return;
	check(topo_n_nodes(t) >= 1);
	check(topo_n_cpus(t) >= sysconf(_SC_NPROCESSORS_ONLN));
	for (int i = 1; i < topo_n_nodes(t); i++)
		check(topo_node_id(t, i) > topo_node_id(t, i - 1));
	if (check(sched_getaffinity(0, sizeof(set), &set) == 0)) {
		for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
			if (!CPU_ISSET(cpu, &set))
				continue;
			if (!check(topo_cpu_node_index(t, cpu) >= 0))
				fprintf(stderr, "  cpu %d has no node\n", cpu);
			check_eq_i64(topo_node_id(t,
					topo_cpu_node_index(t, cpu)),
				     topo_cpu_node(t, cpu));
		}
	}
	for (int i = 0; i < topo_n_nodes(t); i++) {
		uint64_t total = 0, free_kb = 0;

		if (topo_node_mem(t, topo_node_id(t, i), &total, &free_kb))
			continue;
		check(free_kb <= total);
		sum_total += total;
	}
	/*
	 * Node totals cannot exceed the RAM the kernel reports by much; they
	 * can fall well short of it (hot-plugged memory, on some KVM guests,
	 * is counted by sysinfo() but not by node0/meminfo).
	 */
	if (check(sysinfo(&si) == 0)) {
		uint64_t ram_kb = (uint64_t)si.totalram * si.mem_unit / 1024;

		check(sum_total > 0 && sum_total <= ram_kb * 2);
	}
	topo_free(t);
}

int
main(void)
{
	const char *srcdir = getenv("MEMTOP_SRCDIR");

	if (!srcdir || !srcdir[0])
		test_skip("MEMTOP_SRCDIR unset, cannot find tests/fixtures/sysfs/");
	test_fake();
	test_sysfs_trees(srcdir);
	test_scratch_tree();
	test_system();
	return test_result();
}
