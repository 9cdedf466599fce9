#include "config.h"

/*
 * nodemap_query() on memory whose state the test controls: touched pages
 * have the node libnuma (get_mempolicy) reports for them, untouched,
 * unmapped and zero-page mappings have none (docs/kernel.md, "NUMA");
 * batches cross NODEMAP_BATCH chunk boundaries; another process is
 * queried by pid, a dead pid fails the whole call; stats count it all.
 */

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nodemap.h"
#include "testlib.h"

static size_t page_size;

/* Node of our own page at addr as the kernel's mempolicy code sees it. */
static int
own_page_node(void *addr)
{
	int node = -1;

	if (get_mempolicy(&node, NULL, 0, addr, MPOL_F_NODE | MPOL_F_ADDR) < 0)
		return numa_max_node() == 0 ? 0 : -1;
	return node;
}

static char *
map_pages(size_t n, int prot)
{
	void *p = mmap(NULL, n * page_size, prot,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* Keep each page 4 KiB-sized in the answer: no THP. */
	madvise(p, n * page_size, MADV_NOHUGEPAGE);
	return p;
}

static void
test_own_pages(struct nodemap *m)
{
	const struct nodemap_stats *st = nodemap_stats(m);
	char *touched = map_pages(4, PROT_READ | PROT_WRITE);
	char *fresh = map_pages(2, PROT_READ | PROT_WRITE);
	char *zero_ro = map_pages(2, PROT_READ);
	char *zero_rw = map_pages(1, PROT_READ | PROT_WRITE);
	char *gone = map_pages(1, PROT_READ | PROT_WRITE);
	uint64_t addrs[10];
	int16_t nodes[10];
	uint64_t calls0 = st->calls, pages0 = st->pages;
	uint64_t resolved0 = st->resolved;
	volatile char sink = 0;

	if (!check(touched && fresh && zero_ro && zero_rw && gone))
		return;
	for (int i = 0; i < 4; i++)
		touched[i * page_size + 17] = (char)i;
	/* Reads map the shared zero page: still no node of their own. */
	sink += zero_ro[0] + zero_ro[page_size];
	sink += zero_rw[5];
	(void)sink;
	gone[0] = 1;
	munmap(gone, page_size);

	/* Unaligned addresses inside the page are as good as its start. */
	for (int i = 0; i < 4; i++)
		addrs[i] = (uint64_t)(uintptr_t)(touched + i * page_size +
						 (i ? 100 : 0));
	addrs[4] = (uint64_t)(uintptr_t)fresh;
	addrs[5] = (uint64_t)(uintptr_t)(fresh + page_size + 7);
	addrs[6] = (uint64_t)(uintptr_t)zero_ro;
	addrs[7] = (uint64_t)(uintptr_t)(zero_ro + page_size);
	addrs[8] = (uint64_t)(uintptr_t)zero_rw;
	addrs[9] = (uint64_t)(uintptr_t)gone;
	memset(nodes, 0x55, sizeof(nodes));

	check_eq_i64(nodemap_query(m, 0, addrs, 10, nodes), 0);
	for (int i = 0; i < 4; i++) {
		check(nodes[i] >= 0);
		check_eq_i64(nodes[i], own_page_node(touched + i * page_size));
	}
	for (int i = 4; i < 10; i++)
		if (!check_eq_i64(nodes[i], -1))
			fprintf(stderr, "  addr[%d] should have no node\n", i);

	/* pid 0 and getpid() name the same process. */
	memset(nodes, 0x55, sizeof(nodes));
	check_eq_i64(nodemap_query(m, getpid(), addrs, 10, nodes), 0);
	check_eq_i64(nodes[0], own_page_node(touched));
	check_eq_i64(nodes[4], -1);

	check_eq_u64(st->calls - calls0, 2);
	check_eq_u64(st->pages - pages0, 20);
	check_eq_u64(st->resolved - resolved0, 8);
	check_eq_u64(st->errors, 0);
	check(st->ns > 0);

	munmap(touched, 4 * page_size);
	munmap(fresh, 2 * page_size);
	munmap(zero_ro, 2 * page_size);
	munmap(zero_rw, page_size);
}

/*
 * 3000 pages = chunks of 1024, 1024, 952; every third page is left
 * untouched so a chunk-offset slip shows up as a wrong -1.
 */
static void
test_large_batch(struct nodemap *m)
{
	const size_t n = 3000;
	const struct nodemap_stats *st = nodemap_stats(m);
	uint64_t calls0 = st->calls, pages0 = st->pages;
	uint64_t resolved0 = st->resolved;
	char *mem = map_pages(n, PROT_READ | PROT_WRITE);
	uint64_t *addrs = calloc(n, sizeof(*addrs));
	int16_t *nodes = calloc(n, sizeof(*nodes));
	size_t n_touched = 0, wrong = 0;
	int expect_node;

	if (!check(mem && addrs && nodes))
		goto out;
	for (size_t i = 0; i < n; i++) {
		addrs[i] = (uint64_t)(uintptr_t)(mem + i * page_size);
		if (i % 3 != 2) {
			mem[i * page_size] = 1;
			n_touched++;
		}
	}
	expect_node = own_page_node(mem);
	check(expect_node >= 0);
	check_eq_i64(nodemap_query(m, 0, addrs, n, nodes), 0);
	for (size_t i = 0; i < n; i++) {
		int want = i % 3 != 2 ? own_page_node(mem + i * page_size) : -1;

		if (nodes[i] != want && wrong++ < 5)
			fprintf(stderr, "  page %zu: node %d, want %d\n", i,
				nodes[i], want);
	}
	check_eq_u64(wrong, 0);
	check_eq_u64(st->calls - calls0, 3);
	check_eq_u64(st->pages - pages0, n);
	check_eq_u64(st->resolved - resolved0, n_touched);

	/* n == 0 asks the kernel nothing. */
	check_eq_i64(nodemap_query(m, 0, addrs, 0, nodes), 0);
	check_eq_u64(st->calls - calls0, 3);
out:
	if (mem)
		munmap(mem, n * page_size);
	free(addrs);
	free(nodes);
}

/*
 * A child touches the first of two pages and waits; the parent asks for
 * the child's pages by pid.  The same address in the parent is unmapped,
 * so a query that ignored pid would answer differently.
 */
static void
test_other_process(struct nodemap *m)
{
	int to_parent[2], to_child[2];
	uint64_t addrs[2];
	int16_t nodes[2] = { 99, 99 };
	pid_t child;
	int status;
	char go = 0;

	if (!check(pipe(to_parent) == 0 && pipe(to_child) == 0))
		return;
	child = fork();
	if (child == 0) {
		char *mem = map_pages(2, PROT_READ | PROT_WRITE);
		uint64_t addr = (uint64_t)(uintptr_t)mem;

		if (!mem)
			_exit(2);
		mem[0] = 1;
		if (write(to_parent[1], &addr, sizeof(addr)) != sizeof(addr))
			_exit(3);
		if (read(to_child[0], &go, 1) < 0)
			_exit(4);
		_exit(0);
	}
	if (!check(child > 0))
		return;
	if (check(read(to_parent[0], &addrs[0], sizeof(addrs[0])) ==
		  sizeof(addrs[0]))) {
		addrs[1] = addrs[0] + page_size;
		check_eq_i64(nodemap_query(m, child, addrs, 2, nodes), 0);
		check(nodes[0] >= 0);
		check_eq_i64(nodes[1], -1);
	}
	check(write(to_child[1], &go, 1) == 1);
	check(waitpid(child, &status, 0) == child);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(to_parent[0]);
	close(to_parent[1]);
	close(to_child[0]);
	close(to_child[1]);
}

/* A reaped child's pid names no process: the whole call fails. */
static void
test_dead_pid(struct nodemap *m)
{
	const struct nodemap_stats *st = nodemap_stats(m);
	char *mem = map_pages(1, PROT_READ | PROT_WRITE);
	uint64_t errors0 = st->errors;
	uint64_t addrs[2];
	int16_t nodes[2] = { 7, 7 };
	pid_t child;

	if (!check(mem != NULL))
		return;
	mem[0] = 1;
	child = fork();
	if (child == 0)
		_exit(0);
	if (!check(child > 0))
		goto out;
	waitpid(child, NULL, 0);
	if (kill(child, 0) == 0 || errno != ESRCH) {
		fprintf(stderr, "pid %d was reused; dead-pid case not run\n",
			(int)child);
		goto out;
	}
	addrs[0] = (uint64_t)(uintptr_t)mem;
	addrs[1] = addrs[0];
	check_eq_i64(nodemap_query(m, child, addrs, 2, nodes), -ESRCH);
	check_eq_i64(nodes[0], -1);
	check_eq_i64(nodes[1], -1);
	check_eq_u64(st->errors - errors0, 1);
out:
	munmap(mem, page_size);
}

int
main(void)
{
	struct nodemap *m;
	long ps = sysconf(_SC_PAGESIZE);
	uint64_t probe;
	int16_t node;
	int rc;

	page_size = ps > 0 ? (size_t)ps : 4096;
	m = nodemap_new();
	if (!check(m != NULL))
		return test_result();
	/* A kernel without CONFIG_NUMA has no move_pages at all. */
	probe = (uint64_t)(uintptr_t)&node;
	rc = nodemap_query(m, 0, &probe, 1, &node);
	if (rc == -ENOSYS) {
		nodemap_free(m);
		test_skip("move_pages: ENOSYS (kernel without NUMA)");
	}
	check_eq_i64(rc, 0);
	check(node >= 0);

	test_own_pages(m);
	test_large_batch(m);
	test_other_process(m);
	test_dead_pid(m);
	check_eq_i64(nodemap_query(m, 0, NULL, 3, NULL), -EINVAL);
	nodemap_free(m);
	nodemap_free(NULL);
	return test_result();
}
