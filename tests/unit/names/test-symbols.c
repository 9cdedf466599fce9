/*
 * Symbols and names on this very process: its executable's data objects
 * and functions through symbols.c (load bias, .bss extent, covering
 * lookups), a data file that is not ELF, and names.c end to end (region,
 * symbol, code site, interned functions, caching, a pid that is gone,
 * a pid that exec'd).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "maps.h"
#include "names.h"
#include "symbols.h"
#include "testlib.h"

/* Initialised: .data.  The array in .bss follows it in memory. */
__attribute__((aligned(4096)))
char symtest_object[8192] = { 1 };
__attribute__((aligned(4096)))
char symtest_bss[3 * 4096];

__attribute__((noinline)) int symtest_func(int x);
__attribute__((noinline)) int
symtest_func(int x)
{
	symtest_bss[x] = (char)x;
	return x + symtest_object[x];
}

/* Open file descriptors of this process. */
static int
stest_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* The first mapping (file offset 0) of this executable. */
static const struct maps_region *
stest_exe_region(const struct maps *m)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return NULL;
	exe[n] = '\0';
	for (size_t i = 0; i < maps_count(m); i++) {
		const struct maps_region *r = maps_at(m, i);

		if (r->kind == MAPS_FILE && r->pgoff == 0 &&
		    strcmp(r->path, exe) == 0)
			return r;
	}
	return NULL;
}

static void
stest_symbols(void)
{
	struct maps *m = maps_new((int32_t)getpid());
	struct symbols *s = symbols_new();
	const struct maps_region *r;
	struct symbols_file *f, *again;
	uint64_t bias = 0, off = 99, start = 0, lo, hi;
	const char *name;
	int err = 0, fds;

	check(maps_refresh(m) >= 0);
	r = stest_exe_region(m);
	if (!r)
		test_skip("cannot find this executable in /proc/self/maps");
	symbols_helper_start(s);	/* its socket is not the file's */
	fds = stest_fds();
	f = symbols_open(s, (int32_t)getpid(), r, &err);
	check_eq_i64(err, 0);
	/* Indexed and closed: no descriptor kept (the parsing helper's
	 * socket, src/names/symbols_sandbox.c, was opened before). */
	check_eq_i64(stest_fds(), fds);
	if (!f) {
		maps_free(m);
		symbols_free(s);
		return;
	}
	again = symbols_open(s, (int32_t)getpid(), r, &err);
	check(again == f);
	check_eq_u64(symbols_files(s), 1);
	check(symbols_file_objects(f) > 0);
	check(symbols_file_functions(f) > 0);
	check_eq_i64(symbols_bias(f, r, &bias), 0);
	symbols_extent(f, &lo, &hi);
	check(lo + bias <= (uintptr_t)symtest_object);
	check((uintptr_t)(symtest_bss + sizeof(symtest_bss)) <= hi + bias);

	name = symbols_object(f, (uintptr_t)symtest_object + 4096 + 8 - bias,
			      &off);
	check_eq_str(name, "symtest_object");
	check_eq_u64(off, 4096 + 8);
	name = symbols_object(f, (uintptr_t)symtest_bss + 8192 - bias, &off);
	check_eq_str(name, "symtest_bss");
	check_eq_u64(off, 8192);
	check(symbols_object(f, (uintptr_t)symtest_func - bias, &off) == NULL);
	name = symbols_function(f, (uintptr_t)symtest_func + 1 - bias, &off,
				&start);
	check_eq_str(name, "symtest_func");
	check_eq_u64(off, 1);
	check_eq_u64(start + bias, (uintptr_t)symtest_func);
	maps_free(m);
	symbols_free(s);
	symbols_free(NULL);
}

/* A data file mapping is no ELF file: no symbols, and said so. */
static void
stest_not_elf(void)
{
	char path[] = "/tmp/memtop-test-symbols.XXXXXX";
	struct symbols *s = symbols_new();
	struct maps *m = maps_new((int32_t)getpid());
	const struct maps_region *r;
	int fd = mkstemp(path), err = 0;
	char *map;

	if (fd < 0 || ftruncate(fd, 8192) < 0)
		test_skip("mkstemp: %s", strerror(errno));
	map = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
	check(map != MAP_FAILED);
	check(maps_refresh(m) >= 0);
	r = maps_lookup(m, (uintptr_t)map);
	check(r && r->kind == MAPS_FILE);
	if (r)
		check(symbols_open(s, (int32_t)getpid(), r, &err) == NULL);
	check_eq_i64(err, -ENOEXEC);
	/* Deleted while mapped: map_files still opens it. */
	unlink(path);
	check(maps_refresh(m) >= 0);
	r = maps_lookup(m, (uintptr_t)map);
	check(r && r->deleted);
	if (r)
		check(symbols_open(s, (int32_t)getpid(), r, &err) == NULL);
	check_eq_i64(err, -ENOEXEC);
	munmap(map, 8192);
	close(fd);
	maps_free(m);
	symbols_free(s);
}

static void
stest_names(void)
{
	struct names *n = names_new();
	int32_t pid = (int32_t)getpid();
	char *heap = malloc(64 * 1024), *region, *symbol;
	const struct names_code *c, *c2;
	struct names_stats st;
	uintptr_t page = (uintptr_t)symtest_object + 4096;

	check(n != NULL);
	names_prepare(n, pid);
	names_page(n, pid, page, 4096, page, &region, &symbol);
	check(region != NULL && strstr(region, "+0x") != NULL);
	check_eq_str(symbol, "symtest_object+0x1000");
	free(region);
	free(symbol);
	/* The 2 MiB page holding a hot address in symtest_bss: a symbol
	 * covering the page's first byte names it, else the hot address
	 * does.  Where the 2 MiB boundary falls depends on the load address,
	 * so the first case is told apart by naming that byte alone. */
	{
		uintptr_t hot = (uintptr_t)symtest_bss + 4096 + 5;
		uintptr_t base = hot & ~(uintptr_t)0x1fffff;
		char *first;

		names_page(n, pid, base, 4096, base, &region, &first);
		free(region);
		names_page(n, pid, base, 2u << 20, hot, &region, &symbol);
		check_eq_str(symbol, first ? first : "symtest_bss+0x1005");
		free(first);
		free(region);
		free(symbol);
	}
	/* Heap: a region, never a symbol. */
	names_page(n, pid, (uintptr_t)heap & ~(uintptr_t)4095, 4096,
		   (uintptr_t)heap, &region, &symbol);
	check(region != NULL);
	check(symbol == NULL);
	free(region);
	free(symbol);

	c = names_code(n, pid, (uintptr_t)symtest_func + 3);
	check(c && c->site && strcmp(c->site, "symtest_func+0x3") == 0);
	c2 = names_code(n, pid, (uintptr_t)symtest_func + 5);
	check(c && c2 && c->func == c2->func);
	check(c && c->func->name && strcmp(c->func->name, "symtest_func") == 0);
	/* An ip in no module: no site, a function named by its region. */
	c = names_code(n, pid, (uintptr_t)heap);
	check(c && c->site == NULL && c->func->name == NULL);

	/* A pid that does not exist: nothing named, nothing crashes. */
	names_prepare(n, 0x7ffffff0);
	names_page(n, 0x7ffffff0, 0x1000, 4096, 0x1000, &region, &symbol);
	check(region == NULL && symbol == NULL);
	c = names_code(n, 0x7ffffff0, 0x1234);
	check(c && c->site == NULL);
	names_stats(n, &st);
	check(st.maps_reads >= 1);
	check(st.maps_failures >= 1);
	check(st.elf_files >= 1);
	free(heap);
	names_free(n);
	names_free(NULL);
}

/* The region of the page at (a new string, NULL when unknown). */
static char *
stest_region(struct names *n, int32_t pid, uint64_t at)
{
	char *region, *symbol;

	names_page(n, pid, at, 4096, at, &region, &symbol);
	free(symbol);
	return region;
}

/*
 * exec(2): names_forget drops the old image's regions, modules and cached
 * names; a text-loaded pid then has none until new text comes.  On this
 * process (a real pid): the first forget re-reads at once, sooner than
 * NAMES_RETRY_MS; a storm of them reads at most NAMES_EXEC_READS times a
 * second and counts the rest, which name nothing (not the old image).
 */
static void
stest_names_exec(void)
{
	static const char before[] =
		"200000000000-200000040000 rw-s 00000000 08:01 11 /old.bin\n";
	static const char after[] =
		"200000020000-200000030000 rw-s 00000000 08:01 12 /new.bin\n";
	struct names *n = names_new();
	int32_t pid = (int32_t)getpid(), fake = 0x7ffffff1;
	uint64_t at = 0x200000021000ull, reads;
	char *heap = malloc(4096), *region;
	uintptr_t hpage = (uintptr_t)heap & ~(uintptr_t)4095;
	const struct names_code *c;
	struct names_stats st;
	int named = 0, storm = 3 * NAMES_EXEC_READS;

	check(n != NULL && heap != NULL);
	if (!n || !heap)
		goto out;
	check_eq_i64(names_load_maps_text(n, fake, before, strlen(before)), 0);
	names_prepare(n, fake);
	region = stest_region(n, fake, at);
	check_eq_str(region, "/old.bin+0x21000");
	free(region);
	c = names_code(n, fake, at + 8);
	check(c && strcmp(c->func->module, "/old.bin") == 0);

	names_forget(n, fake, 0);
	names_forget(n, 0x7ffffff2, 0);	/* unknown here: nothing to drop */
	names_prepare(n, fake);
	region = stest_region(n, fake, at);
	check(region == NULL);
	free(region);
	c = names_code(n, fake, at + 8);
	check(c && strcmp(c->func->module, "[unknown]") == 0);
	check_eq_i64(names_load_maps_text(n, fake, after, strlen(after)), 0);
	names_prepare(n, fake);
	region = stest_region(n, fake, at);
	check_eq_str(region, "/new.bin+0x1000");
	free(region);
	names_stats(n, &st);
	check_eq_u64(st.execs, 1);

	names_prepare(n, pid);
	names_stats(n, &st);
	reads = st.maps_reads;
	check(reads >= 1);
	for (int i = 0; i < storm; i++) {
		names_forget(n, pid, 0);
		names_prepare(n, pid);
		if (i == 0) {
			names_stats(n, &st);
			check_eq_u64(st.maps_reads, reads + 1);
		}
		region = stest_region(n, pid, hpage);
		named += region != NULL;
		free(region);
	}
	names_stats(n, &st);
	check_eq_u64(st.execs, 1 + (uint64_t)storm);
	/* One window, or two if this loop straddles a second boundary. */
	check(st.maps_reads - reads <= 2 * NAMES_EXEC_READS);
	check(st.exec_reads_deferred >= NAMES_EXEC_READS);
	check_eq_u64(st.exec_reads_deferred + (st.maps_reads - reads),
		     (uint64_t)storm);
	check_eq_i64(named, (int64_t)(st.maps_reads - reads));
out:
	free(heap);
	names_free(n);
}

/*
 * With records, a /proc read only fills the gaps between the regions
 * records gave: a mapping this process no longer has (unmapped, and its
 * addresses not reused: here a range memtop was told of by a record and
 * that was never mapped) keeps the record's name after a read of
 * /proc/self/maps, which the stack's page (no record) makes due.
 */
static void
stest_names_records_kept(void)
{
	struct names *n = names_new();
	int32_t pid = (int32_t)getpid();
	void *hole = mmap(NULL, 0x4000, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	struct names_map m = { .inode = 91, .dev_major = 8, .prot = 3,
			       .name = "/tmp/stest-gone.bin" };
	struct names_stats st;
	char *region, *symbol;
	int local = 0;

	if (!check(n != NULL && hole != MAP_FAILED))
		return;
	munmap(hole, 0x4000);
	m.start = (uintptr_t)hole;
	m.end = m.start + 0x4000;
	m.name_len = strlen(m.name);
	names_use_records(n, false);
	names_mmap(n, pid, &m);
	names_note_page(n, pid, (uintptr_t)&local & ~(uintptr_t)4095);
	names_prepare(n, pid);
	names_stats(n, &st);
	check_eq_u64(st.maps_reads, 1);
	names_page(n, pid, m.start + 0x1000, 4096, m.start + 0x1000, &region,
		   &symbol);
	check_eq_str(region, "/tmp/stest-gone.bin+0x1000");
	free(region);
	free(symbol);
	names_free(n);
}

int
main(void)
{
	check_eq_i64(symtest_func(3), 3);
	stest_symbols();
	stest_not_elf();
	stest_names();
	stest_names_exec();
	stest_names_records_kept();
	return test_result();
}
