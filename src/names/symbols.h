/*
 * Symbols of ELF files mapped by target processes, through elfutils.
 * Collector thread only.
 *
 * One struct symbols caches every ELF file memtop has opened, keyed by the
 * file's identity (device, inode, size, mtime), so a library that many
 * targets map is read and indexed once.  A file is opened while its
 * process lives, through /proc/PID/root/PATH, so the path is resolved in
 * the target's mount namespace (containers), or failing that (deleted
 * file, other root) through /proc/PID/map_files/START-END; once it is
 * gone, by the path checked against the build id (symbols_open).  What is
 * needed is copied out and the file closed: names keep working after the
 * process exits, and no descriptor stays open.
 *
 * The file's bytes are parsed in a helper process without privileges
 * (src/names/symbols_sandbox.c); a file that crashes or hangs it is
 * counted (symbols_helper_stats) and has no names.
 *
 * The symbol table is the one libdwfl picks: .symtab, else separate debug
 * information found by build-id or debuglink, else .gnu_debugdata, else
 * .dynsym (a stripped binary keeps only its exported symbols).  Symbols
 * are copied once into two sorted arrays, data objects (STT_OBJECT,
 * STT_COMMON) and functions (STT_FUNC, STT_GNU_IFUNC), and looked up by
 * binary search in the file's own virtual addresses; callers add the load
 * bias of the process.
 */
#ifndef MEMTOP_SYMBOLS_H
#define MEMTOP_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct maps_region;
struct symbols;
struct symbols_file;

/* NULL on ENOMEM. */
struct symbols *symbols_new(void);
/* Closes every file.  NULL-safe. */
void symbols_free(struct symbols *s);

/*
 * The indexed ELF file behind file mapping r of process pid, opening and
 * indexing it on first use.  pid <= 0 (a capture, or a process gone):
 * never through /proc, the file at r's path instead, which must have r's
 * build id (r->build_id_size), else r's inode, else is taken as perf
 * takes it; when it is not the mapped file, perf's build-id cache
 * (~/.debug/.build-id/) may hold the right one.  NULL with *err =
 * -errno when it cannot be opened, -ENOEXEC when it is not an ELF file
 * with program headers, -ESTALE when only a different file was found
 * (never indexed: no wrong symbol).
 */
struct symbols_file *symbols_open(struct symbols *s, int32_t pid,
				  const struct maps_region *r, int *err);

/*
 * The load bias of mapping r (address = file virtual address + bias):
 * from the PT_LOAD segment holding r's file offset.  0 or -ENOENT.
 */
int symbols_bias(const struct symbols_file *f, const struct maps_region *r,
		 uint64_t *bias);
/* [lo, hi): file virtual addresses covered by PT_LOAD segments (memsz, so
 * .bss included). */
void symbols_extent(const struct symbols_file *f, uint64_t *lo,
		    uint64_t *hi);

/* The data object covering file virtual address vaddr and *off into it,
 * or NULL (no sized object covers it). */
const char *symbols_object(const struct symbols_file *f, uint64_t vaddr,
			   uint64_t *off);
/*
 * The function holding vaddr, *off into it and its *start: a sized
 * function that covers vaddr, else the nearest sizeless one before it
 * with no other symbol in between; NULL when none.
 */
const char *symbols_function(const struct symbols_file *f, uint64_t vaddr,
			     uint64_t *off, uint64_t *start);

/* The function called `name` (its file virtual address); 0 or -ENOENT.
 * Linear in the file's functions. */
int symbols_find(const struct symbols_file *f, const char *name,
		 uint64_t *vaddr);
/* The file offset of file virtual address vaddr (its PT_LOAD segment's
 * file bytes): 0 or -ENOENT.  What a uprobe is placed at. */
int symbols_file_offset(const struct symbols_file *f, uint64_t vaddr,
			uint64_t *off);

#define SYMBOLS_BUILD_ID_MAX 20

/* The GNU build id of the file at path as process pid sees it (through
 * /proc/PID/root; once pid is gone, path itself if its inode is inode):
 * its length, or -errno (-ENOENT: none, -ESTALE: another file). */
int symbols_path_build_id(int32_t pid, const char *path, uint64_t inode,
			  uint8_t id[SYMBOLS_BUILD_ID_MAX]);

size_t symbols_file_objects(const struct symbols_file *f);
size_t symbols_file_functions(const struct symbols_file *f);
/* Files opened and indexed so far. */
size_t symbols_files(const struct symbols *s);

/* The parsing helper process (src/names/symbols_sandbox.c). */
struct symbols_helper {
	uint64_t starts;	/* helper processes started */
	uint64_t failures;	/* crashed, hung past the timeout, bad answer */
	uint64_t files_failed;	/* files left unnamed for that */
	int32_t pid;		/* the running helper, 0 when none */
};

void symbols_helper_stats(const struct symbols *s, struct symbols_helper *st);
/*
 * The helper starts with the first file to parse; this starts it now.
 * The live collector does so before its thread runs (a fork then, while
 * the process has one thread, and no start-up delay at the first frame);
 * a replay, the fuzzers and the tests start it when a file needs it.
 */
void symbols_helper_start(struct symbols *s);
/* How long one file may take the helper before it is killed; the default
 * is MEMTOP_SYMBOLS_TIMEOUT_MS from the environment, else 1000. */
void symbols_helper_timeout(struct symbols *s, unsigned ms);

#endif
