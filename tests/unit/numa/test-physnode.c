#include "config.h"

/*
 * Physical address -> node: the recorded tree tests/fixtures/sysfs/numa-physmem
 * (128 MiB blocks, node 0 = blocks 0-3, a hole, node 2 = blocks 8, 9, 32),
 * malformed and missing files in a scratch tree, and the running system:
 * pages of this process bound to each node (mbind), their frame numbers
 * from /proc/self/pagemap (root only: others read 0), compared with what
 * move_pages says.
 *
 *   test-physnode          fixture + scratch + live (live part only as root)
 *   test-physnode --live   live part only; prints "physnode live: ok ..."
 *                          (the two-node QEMU guest runs this)
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "physnode.h"
#include "testlib.h"

#define MIB (UINT64_C(1) << 20)
#define BLOCK (128 * MIB)

static void
use_root(const char *rel)
{
	const char *src = getenv("MEMTOP_SRCDIR");
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", src ? src : "..", rel);
	setenv("MEMTOP_SYSFS_ROOT", path, 1);
}

static void
test_fixture(void)
{
	struct physnode *p = NULL;

	use_root("tests/fixtures/sysfs/numa-physmem");
	if (!check_eq_i64(physnode_new(&p), 0))
		return;
	check_eq_u64(physnode_block_size(p), BLOCK);
	check_eq_u64(physnode_n_blocks(p), 7);
	/* 0 means "no physical address": never a node, even in block 0. */
	check_eq_i64(physnode_lookup(p, 0), -1);
	check_eq_i64(physnode_lookup(p, 1), 0);
	check_eq_i64(physnode_lookup(p, BLOCK - 1), 0);
	check_eq_i64(physnode_lookup(p, 3 * BLOCK + 12345), 0);
	check_eq_i64(physnode_lookup(p, 4 * BLOCK - 1), 0);
	/* Blocks 4-7: a hole, unknown rather than a neighbour's node. */
	check_eq_i64(physnode_lookup(p, 4 * BLOCK), -1);
	check_eq_i64(physnode_lookup(p, 7 * BLOCK + 4096), -1);
	check_eq_i64(physnode_lookup(p, 8 * BLOCK), 2);
	check_eq_i64(physnode_lookup(p, 10 * BLOCK - 1), 2);
	check_eq_i64(physnode_lookup(p, 10 * BLOCK), -1);
	check_eq_i64(physnode_lookup(p, 32 * BLOCK + 7), 2);
	check_eq_i64(physnode_lookup(p, 33 * BLOCK), -1);
	check_eq_i64(physnode_lookup(p, UINT64_MAX), -1);
	check_eq_i64(physnode_lookup(NULL, BLOCK), -1);
	physnode_free(p);
	physnode_free(NULL);
}

static int
write_file(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

static void
make_dir(const char *dir, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	mkdir(path, 0755);
}

/* Missing and malformed files: clean errors, never a table. */
static void
test_scratch(void)
{
	static const char *const bad_sizes[] = {
		"", "zz", "8000000x", "0", "3000", "-1",
	};
	char dir[] = "/tmp/memtop-physnode.XXXXXX";
	struct physnode *p = (struct physnode *)&p;

	if (!check(mkdtemp(dir) != NULL))
		return;
	setenv("MEMTOP_SYSFS_ROOT", dir, 1);
	check_eq_i64(physnode_new(&p), -ENOENT);
	check(p == NULL);
	make_dir(dir, "sys");
	make_dir(dir, "sys/devices");
	make_dir(dir, "sys/devices/system");
	make_dir(dir, "sys/devices/system/memory");
	make_dir(dir, "sys/devices/system/node");
	for (size_t i = 0; i < ARRAY_SIZE(bad_sizes); i++) {
		write_file(dir, "sys/devices/system/memory/block_size_bytes",
			   bad_sizes[i]);
		check_eq_i64(physnode_new(&p), -EINVAL);
	}
	/* A block size but no node lists a block. */
	write_file(dir, "sys/devices/system/memory/block_size_bytes",
		   "8000000\n");
	check_eq_i64(physnode_new(&p), -ENOENT);
	make_dir(dir, "sys/devices/system/node/node1");
	write_file(dir, "sys/devices/system/node/node1/memory5", "");
	write_file(dir, "sys/devices/system/node/node1/memoryx", "");
	write_file(dir, "sys/devices/system/node/node1/memory", "");
	make_dir(dir, "sys/devices/system/node/nodes");
	if (check_eq_i64(physnode_new(&p), 0)) {
		check_eq_u64(physnode_n_blocks(p), 1);
		check_eq_i64(physnode_lookup(p, 5 * BLOCK), 1);
		check_eq_i64(physnode_lookup(p, 4 * BLOCK), -1);
		physnode_free(p);
	}
	/* A block number that would make us allocate gigabytes. */
	write_file(dir, "sys/devices/system/node/node1/memory99999999", "");
	check_eq_i64(physnode_new(&p), -EINVAL);
	unsetenv("MEMTOP_SYSFS_ROOT");
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		check_eq_i64(system(cmd), 0);
	}
}

/* Physical address of the page at addr from /proc/self/pagemap: bit 63 =
 * present, bits 0-54 = frame number (zeroed for non-root readers). */
static uint64_t
pagemap_phys(int fd, const void *addr, long page_size)
{
	uint64_t entry = 0;
	off_t off = (off_t)((uintptr_t)addr / (uintptr_t)page_size *
			    sizeof(entry));

	if (pread(fd, &entry, sizeof(entry), off) != (ssize_t)sizeof(entry))
		return 0;
	if (!(entry & (UINT64_C(1) << 63)))
		return 0;
	return (entry & ((UINT64_C(1) << 55) - 1)) * (uint64_t)page_size;
}

/*
 * For every node with memory: 16 pages bound there and written, then
 * physnode(pagemap PFN) must equal move_pages' node for each.  Returns
 * pages compared, or -1 when this cannot run here (reason printed).
 */
static int
test_live(void)
{
	long page_size = sysconf(_SC_PAGESIZE);
	struct physnode *p = NULL;
	int fd, compared = 0, ret, max_node;
	char nodes_seen[256] = "";
	bool ok = true;

	unsetenv("MEMTOP_SYSFS_ROOT");
	ret = physnode_new(&p);
	if (ret < 0) {
		printf("physnode live: not run: no memory blocks in sysfs "
		       "(%s)\n", strerror(-ret));
		return -1;
	}
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || numa_available() < 0) {
		printf("physnode live: not run: %s\n", fd < 0 ?
		       "no /proc/self/pagemap" : "no NUMA support");
		if (fd >= 0)
			close(fd);
		physnode_free(p);
		return -1;
	}
	max_node = numa_max_node();
	for (int node = 0; node <= max_node; node++) {
		unsigned long mask[16] = { 0 };
		size_t len = 16 * (size_t)page_size;
		char *buf;

		if (node >= (int)(sizeof(mask) * 8) ||
		    numa_node_size64(node, NULL) <= 0)
			continue;
		buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (!check(buf != MAP_FAILED))
			break;
		mask[node / (8 * sizeof(long))] |= 1ul << (node % (8 * sizeof(long)));
		if (!check_eq_i64(mbind(buf, len, MPOL_BIND, mask,
					sizeof(mask) * 8, 0), 0)) {
			munmap(buf, len);
			continue;
		}
		memset(buf, 0x5a, len);
		for (int i = 0; i < 16; i++) {
			void *page = buf + (size_t)i * (size_t)page_size;
			uint64_t phys = pagemap_phys(fd, page, page_size);
			int status = -1;

			if (phys == 0) {
				printf("physnode live: not run: pagemap gives "
				       "no frame numbers (needs root)\n");
				munmap(buf, len);
				close(fd);
				physnode_free(p);
				return -1;
			}
			ok = check_eq_i64(move_pages(0, 1, &page, NULL,
						     &status, 0), 0) && ok;
			ok = check_eq_i64(status, node) && ok;
			ok = check_eq_i64(physnode_lookup(p, phys), status) &&
			     ok;
			compared++;
		}
		snprintf(nodes_seen + strlen(nodes_seen),
			 sizeof(nodes_seen) - strlen(nodes_seen), "%s%d",
			 nodes_seen[0] ? "," : "", node);
		munmap(buf, len);
	}
	close(fd);
	printf("physnode live: %s (%d pages on nodes %s agree with "
	       "move_pages; %zu blocks of %llu MiB)\n",
	       ok ? "ok" : "FAILED", compared, nodes_seen,
	       physnode_n_blocks(p),
	       (unsigned long long)(physnode_block_size(p) / MIB));
	physnode_free(p);
	return compared;
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--live") == 0) {
		if (test_live() < 0)
			return TEST_SKIP;
		return test_result();
	}
	test_fixture();
	test_scratch();
	test_live();
	return test_result();
}
