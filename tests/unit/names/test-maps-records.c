/*
 * Regions from the kernel's mapping records (maps_records.c): a new
 * mapping replaces exactly the part of older regions it covers, file
 * offsets of the pieces left follow, .bss and the brk heap are named as
 * /proc names them, a fork copies, and a /proc read only fills gaps.
 * Expected names are written out by hand from the layouts below.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps-test.h"
#include "maps.h"
#include "testlib.h"

static void
rtest_add(struct maps *m, uint64_t start, uint64_t end, uint64_t pgoff,
	  uint8_t prot, const char *name)
{
	struct maps_region r = { .start = start, .end = end, .pgoff = pgoff,
				 .prot = prot, .inode = name[0] == '/' &&
				 name[1] != '/' ? 7 : 0 };

	check_eq_i64(maps_insert(m, &r, name, strlen(name)), 0);
}

static void
rtest_replace(void)
{
	struct maps *m = maps_new(-1);
	const uint8_t rw = MAPS_PROT_READ | MAPS_PROT_WRITE;
	uint64_t gen;

	/* An executable as ld.so would map it, then its .bss. */
	rtest_add(m, 0x555500000000, 0x555500004000, 0, MAPS_PROT_READ, "/bin/x");
	rtest_add(m, 0x555500004000, 0x555500008000, 0x4000, rw, "/bin/x");
	rtest_add(m, 0x555500008000, 0x55550000a000, 0x555500008000, rw,
		  "//anon");
	check_eq_u64(maps_count(m), 3);
	check_eq_str(maps_test_name(m, 0x555500005010), "/bin/x+0x5010");
	check_eq_str(maps_test_name(m, 0x555500009000), "/bin/x [bss]");
	/* A mapping over the middle of the data segment: the pieces on
	 * either side keep their offsets. */
	gen = maps_generation(m);
	rtest_add(m, 0x555500005000, 0x555500006000, 0, rw, "/tmp/y");
	check(maps_generation(m) != gen);
	check_eq_u64(maps_count(m), 5);
	check_eq_str(maps_test_name(m, 0x555500004000), "/bin/x+0x4000");
	check_eq_str(maps_test_name(m, 0x555500005000), "/tmp/y+0x0");
	check_eq_str(maps_test_name(m, 0x555500006800), "/bin/x+0x6800");
	check_eq_str(maps_test_name(m, 0x555500009000), "/bin/x [bss]");
	/* The brk heap (the record says //anon), and an mmap far above. */
	rtest_add(m, 0x555512340000, 0x555512361000, 0x555512340000, rw,
		  "//anon");
	check_eq_str(maps_test_name(m, 0x555512350000), "[heap]");
	rtest_add(m, 0x7f0000000000, 0x7f0000010000, 0x7f0000000000, rw,
		  "//anon");
	check_eq_str(maps_test_name(m, 0x7f0000001000), "[anon]");
	rtest_add(m, 0x7ffc00000000, 0x7ffc00021000, 0, rw, "[stack]");
	check_eq_str(maps_test_name(m, 0x7ffc00020000), "[stack]");
	/* A mapping that covers several regions whole. */
	rtest_add(m, 0x555500000000, 0x55550000a000, 0, rw, "/tmp/z");
	check_eq_str(maps_test_name(m, 0x555500009000), "/tmp/z+0x9000");
	check(maps_lookup(m, 0x555500005000) == maps_lookup(m, 0x555500000000));
	maps_free(m);
}

static void
rtest_fork_and_gaps(void)
{
	struct maps *parent = maps_new(-1), *child = maps_new(-1);
	struct maps *self = maps_new(getpid());
	static char probe[3 * 4096];
	uint64_t at = ((uint64_t)(uintptr_t)probe + 4095) & ~4095ull;

	rtest_add(parent, 0x10000, 0x20000, 0, MAPS_PROT_READ, "/lib/a.so");
	check_eq_i64(maps_copy(child, parent), 0);
	check_eq_str(maps_test_name(child, 0x10010), "/lib/a.so+0x10");
	/* A record over a page of this process's .bss stays; /proc fills
	 * in the rest of the address space, stack included. */
	rtest_add(self, at, at + 4096, 0, MAPS_PROT_READ, "/gone/file");
	check(maps_refresh_gaps(self) == 1);
	check_eq_str(maps_test_name(self, at + 16), "/gone/file+0x10");
	/* Under valgrind (its test setup sets MEMTOP_WRAPPER) this thread
	 * runs on a stack of valgrind's, not the [stack] mapping. */
	if (getenv("MEMTOP_WRAPPER"))
		printf("# SKIP the [stack] check: under valgrind\n");
	else
		check(strstr(maps_test_name(self, (uint64_t)(uintptr_t)&at),
			     "[stack]"));
	check(strcmp(maps_test_name(self, at + 4096), "(none)") != 0);
	check(maps_refresh_gaps(self) >= 0);
	maps_free(parent);
	maps_free(child);
	maps_free(self);
}

int
main(void)
{
	rtest_replace();
	rtest_fork_and_gaps();
	return test_result();
}
