/*
 * The ELF parsing helper (src/names/symbols_sandbox.c) seen from outside:
 * it runs as nobody (when the test is root) with no_new_privs and a
 * seccomp filter (/proc/PID/status); a helper killed while idle is
 * replaced without losing the next file; a crafted file that keeps the
 * parser busy past MEMTOP_SYMBOLS_TIMEOUT_MS is given up, counted and
 * never retried, and the next file is named by a fresh helper; a build
 * id check reads no symbols.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "elf-build.h"
#include "helper-check.h"
#include "maps.h"
#include "symbols.h"
#include "symbols_int.h"
#include "testlib.h"

/* Symbols in the crafted file: enough to keep libdw busy for seconds. */
#define SBTEST_SYMS	(8u << 20)

/* The first mapping (offset 0) of path in this process, or NULL. */
static const struct maps_region *
sbtest_region(struct maps *m, const char *path)
{
	check(maps_refresh(m) >= 0);
	for (size_t i = 0; i < maps_count(m); i++) {
		const struct maps_region *r = maps_at(m, i);

		if (r->kind == MAPS_FILE && r->pgoff == 0 &&
		    strcmp(r->path, path) == 0)
			return r;
	}
	return NULL;
}

static const struct maps_region *
sbtest_exe(struct maps *m)
{
	static char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return NULL;
	exe[n] = '\0';
	return sbtest_region(m, exe);
}

static void
sbtest_identity(void)
{
	struct symbols *s = symbols_new();
	struct maps *m = maps_new((int32_t)getpid());
	const struct maps_region *r = sbtest_exe(m);
	struct symbols_helper h;
	int err = 0;

	check(r != NULL);
	if (r)
		check(symbols_open(s, (int32_t)getpid(), r, &err) != NULL);
	check_eq_i64(err, 0);
	symbols_helper_stats(s, &h);
	check_eq_u64(h.starts, 1);
	check_eq_u64(h.failures, 0);
	check(h.pid > 0);
	helper_check_confined(h.pid);

	/* Killed while idle (as a crash would): counted, and the next file
	 * is still named, by a new helper. */
	kill(h.pid, SIGKILL);
	helper_wait_dead(h.pid);
	symbols_free(s);
	s = symbols_new();
	if (r)
		check(symbols_open(s, (int32_t)getpid(), r, &err) != NULL);
	symbols_helper_stats(s, &h);
	kill(h.pid, SIGKILL);
	helper_wait_dead(h.pid);
	{
		const struct maps_region *lib = NULL;

		for (size_t i = 0; i < maps_count(m) && !lib; i++) {
			const struct maps_region *x = maps_at(m, i);

			if (x->kind == MAPS_FILE && x->pgoff == 0 &&
			    strstr(x->path, "libc.so"))
				lib = x;
		}
		check(lib != NULL);
		if (lib)
			check(symbols_open(s, (int32_t)getpid(), lib, &err) !=
			      NULL);
		check_eq_i64(err, 0);
	}
	symbols_helper_stats(s, &h);
	check_eq_u64(h.starts, 2);
	check_eq_u64(h.failures, 1);
	check_eq_u64(h.files_failed, 0);
	check_eq_u64(symbols_files(s), 2);
	maps_free(m);
	symbols_free(s);
}

/*
 * A well-formed ELF file with one PT_LOAD and a .symtab of SBTEST_SYMS
 * local symbols, mostly zero pages (a sparse file): small on disk, long
 * to walk.  Returns its mapping, or MAP_FAILED.
 */
static void *
sbtest_craft(const char *path, size_t *len)
{
	size_t symoff = 4096, symsz = (size_t)SBTEST_SYMS * sizeof(Elf64_Sym);
	size_t stroff = symoff + symsz, shoff = stroff + 4096;
	static const char strtab[] = "\0crafted_symbol";
	static const char shstrtab[] = "\0.symtab\0.strtab\0.shstrtab";
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Shdr sh[4] = { { 0 } };
	Elf64_Sym sym = { 0 };
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	void *map;

	if (fd < 0)
		return MAP_FAILED;
	elfb_headers(&eh, &ph, shoff, 4, 4096);
	sh[1].sh_type = SHT_SYMTAB;
	sh[1].sh_offset = symoff;
	sh[1].sh_size = symsz;
	sh[1].sh_link = 2;
	sh[1].sh_info = SBTEST_SYMS;
	sh[1].sh_entsize = sizeof(Elf64_Sym);
	sh[1].sh_addralign = 8;
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = stroff;
	sh[2].sh_size = sizeof(strtab);
	sh[1].sh_name = 1;
	sh[2].sh_name = 9;
	sh[3].sh_name = 17;
	sh[3].sh_type = SHT_STRTAB;
	sh[3].sh_offset = stroff + 64;
	sh[3].sh_size = sizeof(shstrtab);
	/* One named function every 64 KiB of table, zeros between. */
	sym.st_name = 1;
	sym.st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC);
	sym.st_shndx = 1;
	sym.st_size = 16;
	*len = shoff + sizeof(sh);
	if (pwrite(fd, &eh, sizeof(eh), 0) < 0 ||
	    pwrite(fd, &ph, sizeof(ph), sizeof(eh)) < 0 ||
	    pwrite(fd, strtab, sizeof(strtab), (off_t)stroff) < 0 ||
	    pwrite(fd, shstrtab, sizeof(shstrtab), (off_t)stroff + 64) < 0 ||
	    pwrite(fd, sh, sizeof(sh), (off_t)shoff) < 0) {
		close(fd);
		return MAP_FAILED;
	}
	for (size_t off = symoff + sizeof(sym); off < stroff; off += 65536) {
		sym.st_value = off;
		if (pwrite(fd, &sym, sizeof(sym), (off_t)off) < 0)
			break;
	}
	map = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	return map;
}

static double
sbtest_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
sbtest_hang(void)
{
	char path[] = "/tmp/memtop-test-sandbox.XXXXXX";
	struct symbols *s;
	struct maps *m = maps_new((int32_t)getpid());
	const struct maps_region *r;
	struct symbols_helper h;
	size_t len = 0;
	void *map;
	double t0, took;
	int fd = mkstemp(path), err = 0;

	if (fd < 0)
		test_skip("mkstemp: %s", strerror(errno));
	close(fd);
	map = sbtest_craft(path, &len);
	unlink(path);
	check(map != MAP_FAILED);
	if (map == MAP_FAILED)
		return;
	s = symbols_new();
	/* Walking the crafted table takes tens of milliseconds at least. */
	symbols_helper_timeout(s, 2);
	r = sbtest_region(m, path);
	if (!r) {
		/* Deleted: named "PATH (deleted)" in the maps. */
		for (size_t i = 0; i < maps_count(m) && !r; i++)
			if (maps_at(m, i)->kind == MAPS_FILE &&
			    maps_at(m, i)->deleted &&
			    strstr(maps_at(m, i)->path, path))
				r = maps_at(m, i);
	}
	check(r != NULL);
	if (!r)
		goto out;
	t0 = sbtest_now();
	check(symbols_open(s, (int32_t)getpid(), r, &err) == NULL);
	took = sbtest_now() - t0;
	check_eq_i64(err, -EIO);
	printf("# crafted file given up after %.0f ms (timeout 2 ms)\n",
	       took * 1000);
	check(took < 2.0);
	symbols_helper_stats(s, &h);
	check_eq_u64(h.failures, 1);
	check_eq_u64(h.files_failed, 1);
	check_eq_i64(h.pid, 0);
	/* Never handed over again. */
	check(symbols_open(s, (int32_t)getpid(), r, &err) == NULL);
	check_eq_i64(err, -EIO);
	symbols_helper_stats(s, &h);
	check_eq_u64(h.starts, 1);
	check_eq_u64(h.failures, 1);
	/* The next file: a fresh helper names it. */
	symbols_helper_timeout(s, 10000);
	r = sbtest_exe(m);
	if (r)
		check(symbols_open(s, (int32_t)getpid(), r, &err) != NULL);
	symbols_helper_stats(s, &h);
	check_eq_u64(h.starts, 2);
	check_eq_u64(symbols_files(s), 1);
out:
	munmap(map, len);
	maps_free(m);
	symbols_free(s);
}

/* What a taken-over helper may answer: a name offset at or past the
 * end of the pool is refused before anything reads it (without a
 * sanitizer a read a little past the pool does not crash, so this is
 * checked here, not left to fuzz-elf). */
static void
sbtest_name_bounds(void)
{
	char pool[] = "main\0f";	/* "main", "f": 7 bytes with the NULs */
	struct symbols_sym fn[2] = {
		{ .addr = 0x1000, .size = 16, .name = 0 },
		{ .addr = 0x2000, .size = 16, .name = 5 },
	};
	struct symbols_table t = { .pool = pool, .pool_len = sizeof(pool),
				   .functions = fn, .n_functions = 2 };

	check_eq_i64(symbols_table_check(&t), 0);
	fn[1].name = sizeof(pool) - 1;		/* the last NUL: "" */
	check_eq_i64(symbols_table_check(&t), 0);
	fn[1].name = sizeof(pool);		/* just past the pool */
	check_eq_i64(symbols_table_check(&t), -EPROTO);
	fn[1].name = sizeof(pool) + 100;
	check_eq_i64(symbols_table_check(&t), -EPROTO);
	fn[1].name = 5;
	t.objects = fn;				/* the same rule for objects */
	t.n_objects = 2;
	fn[0].name = UINT64_MAX;
	check_eq_i64(symbols_table_check(&t), -EPROTO);
}

/*
 * A build id check ("I") reads the segments and the build id, never the
 * symbols: the own executable's id as the whole parse gives it with no
 * symbol, and the crafted file, whose symbols keep a whole parse busy
 * for seconds, answered well within a second.
 */
static void
sbtest_build_id_only(void)
{
	char path[] = "/tmp/memtop-test-sandbox.XXXXXX";
	struct symbols_sandbox *sb = symbols_sandbox_new();
	struct symbols_table full = { 0 }, id = { 0 };
	struct maps *m = maps_new((int32_t)getpid());
	const struct maps_region *r = sbtest_exe(m);
	size_t len = 0;
	void *map;
	double t0;
	int fd;

	if (!check(sb != NULL && r != NULL))
		goto out;
	fd = open(r->path, O_RDONLY | O_CLOEXEC);
	check(fd >= 0);
	check_eq_i64(symbols_sandbox_parse(sb, fd, &full), 0);
	check_eq_i64(symbols_sandbox_build_id(sb, fd, &id), 0);
	close(fd);
	check(full.n_functions > 0 && full.build_id_size > 0);
	check_eq_u64(id.build_id_size, full.build_id_size);
	check(memcmp(id.build_id, full.build_id, sizeof(id.build_id)) == 0);
	check_eq_u64(id.n_loads, full.n_loads);
	check_eq_u64(id.n_functions, 0);
	check_eq_u64(id.n_objects, 0);
	symbols_table_free(&full);
	symbols_table_free(&id);
	if (getenv("MEMTOP_WRAPPER")) {
		printf("# SKIP build id of the crafted file: under valgrind\n");
		goto out;
	}
	fd = mkstemp(path);
	if (!check(fd >= 0))
		goto out;
	close(fd);
	map = sbtest_craft(path, &len);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	unlink(path);
	if (check(map != MAP_FAILED && fd >= 0)) {
		symbols_sandbox_timeout(sb, 1000);
		memset(&id, 0, sizeof(id));
		t0 = sbtest_now();
		check_eq_i64(symbols_sandbox_build_id(sb, fd, &id), 0);
		printf("# crafted file's build id checked in %.1f ms\n",
		       (sbtest_now() - t0) * 1000);
		check_eq_u64(id.n_functions, 0);
		symbols_table_free(&id);
	}
	if (fd >= 0)
		close(fd);
	if (map != MAP_FAILED)
		munmap(map, len);
out:
	maps_free(m);
	symbols_sandbox_free(sb);
}

int
main(void)
{
	sbtest_name_bounds();
	sbtest_identity();
	sbtest_build_id_only();
	sbtest_hang();
	return test_result();
}
