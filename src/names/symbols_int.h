/*
 * Inside the symbols room's ELF reading (src/names/symbols*.c): the tables
 * one ELF file yields, how they are parsed, and the sandbox that parses
 * them in a helper process.
 *
 * The parse (symbols_parse.c, through libelf and libdw) is the only code
 * that reads a file's bytes; it runs in a helper process without
 * privileges (symbols_sandbox.c), which sends the tables back over a
 * socket (symbols_wire.c).  The collector checks what arrives
 * (symbols_table_check) before anything indexes into it, and keeps the
 * tables in its cache (symbols.c).  Lookups stay binary searches in the
 * collector: no round trip per address.
 */
#ifndef MEMTOP_SYMBOLS_INT_H
#define MEMTOP_SYMBOLS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bounds on what the helper may send for one file. */
#define SYMBOLS_MAX_LOADS	256
#define SYMBOLS_MAX_SYMS	(16u << 20)
#define SYMBOLS_MAX_POOL	(256u << 20)
/* A build id's bytes at most (SYMBOLS_BUILD_ID_MAX, symbols.h). */
#define SYMBOLS_WIRE_BUILD_ID	20

struct symbols_sym {
	uint64_t addr;		/* file virtual address */
	uint64_t size;		/* 0 = unknown */
	uint64_t name;		/* offset in the file's name pool */
	uint64_t rank;		/* higher wins among equal addresses */
};

struct symbols_load {
	uint64_t offset;	/* p_offset */
	uint64_t vaddr;		/* p_vaddr */
	uint64_t filesz;
	uint64_t memsz;
};

/* What memtop keeps of one ELF file. */
struct symbols_table {
	char *pool;			/* the kept symbols' names */
	size_t pool_len, pool_cap;
	struct symbols_load *loads;
	size_t n_loads;
	struct symbols_sym *objects;
	size_t n_objects, cap_objects;
	struct symbols_sym *functions;
	size_t n_functions, cap_functions;
	/* The GNU build id (NT_GNU_BUILD_ID), read by the helper too:
	 * build_id_size 0 = none. */
	uint8_t build_id[SYMBOLS_WIRE_BUILD_ID];
	uint32_t build_id_size;
};

void symbols_table_free(struct symbols_table *t);

struct maps_region;
struct stat;
/*
 * Opens the file of mapping r of pid (symbols.c): through /proc/PID/root
 * while pid lives, checked against r's inode or build id; the unwinder
 * opens its module files the same way.  A descriptor, or -errno.
 */
int symbols_region_fd(int32_t pid, const struct maps_region *r,
		      struct stat *st);
/*
 * Parses the ELF file open on fd (consumed) into t, which must be
 * zeroed: 0, -ENOEXEC (not an ELF file with PT_LOAD segments) or -ENOMEM.
 * id_only: its segments and build id, no symbols (a build id check needs
 * no more).  Runs in the helper process (and the fuzz target).
 */
int symbols_parse(int fd, struct symbols_table *t, bool id_only);
/*
 * 0 when t is safe to index: bounds above, names inside a NUL-terminated
 * pool, symbols sorted; else -EPROTO.
 */
int symbols_table_check(const struct symbols_table *t);

/* The wire (symbols_wire.c): one answer per request. */
int symbols_wire_send(int sock, int status, const struct symbols_table *t);
/*
 * Reads one answer by deadline_ns (CLOCK_MONOTONIC): 0 with t filled and
 * *status the parse's result, -ETIMEDOUT, -EPIPE (helper gone) or
 * -EPROTO (an answer that breaks the bounds or symbols_table_check).
 */
int symbols_wire_recv(int sock, uint64_t deadline_ns, int *status,
		      struct symbols_table *t);

/* The helper process (symbols_sandbox.c). */
struct symbols_sandbox;

struct symbols_sandbox *symbols_sandbox_new(void);	/* NULL on ENOMEM */
void symbols_sandbox_free(struct symbols_sandbox *sb);	/* NULL-safe */
/* Starts the helper now, not at the first file (a failure: then). */
void symbols_sandbox_prestart(struct symbols_sandbox *sb);
/*
 * Has the helper parse the file open on fd (not consumed) into t (zeroed):
 * the parse's result, or -EIO when the helper could not be started,
 * crashed, hung past its timeout or sent a bad answer (it is then
 * killed, counted, and started afresh on the next call).
 */
int symbols_sandbox_parse(struct symbols_sandbox *sb, int fd,
			  struct symbols_table *t);
/* The same for the file's segments and build id alone (symbols_parse's
 * id_only). */
int symbols_sandbox_build_id(struct symbols_sandbox *sb, int fd,
			     struct symbols_table *t);

struct sandbox_stats;

void symbols_sandbox_timeout(struct symbols_sandbox *sb, unsigned ms);
void symbols_sandbox_stats(const struct symbols_sandbox *sb,
			   struct sandbox_stats *st);

#endif
