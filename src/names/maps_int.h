/*
 * Inside the names room: the layout of struct maps and what maps.c and
 * maps_stacks.c share.  Collector thread only.
 */
#ifndef MEMTOP_MAPS_INT_H
#define MEMTOP_MAPS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Threads probed for their stack pointer per refresh: each probe is an
 * open/read/close, and a process with thousands of threads must not
 * stall the collector.  The rest wait for later refreshes. */
#define MAPS_MAX_SP_PROBES 256

struct maps {
	int32_t pid;
	struct maps_region *regions;	/* sorted by start, disjoint */
	size_t n;
	uint64_t generation;
	uint64_t text_hash;		/* of the last text loaded */
	size_t text_len;
	bool loaded;
	size_t bad_lines;
	size_t sp_cursor;		/* where the next probe round starts */
	/* The executable's end (maps_records.c) as of generation
	 * exe_end_gen - 1 (exe_end_gen 0: not found yet). */
	uint64_t exe_end;
	uint64_t exe_end_gen;
};

struct maps_region;

/* A hex number at *p (before end), *p moved past it; false if there is
 * none or it does not fit 64 bits. */
bool maps_hex(const char **p, const char *end, uint64_t *out);
/* Index of the last of the n sorted regions starting at or below addr,
 * or -1. */
ptrdiff_t maps_floor(const struct maps_region *r, size_t n, uint64_t addr);
/* A whole /proc file into a growing buffer, NUL-terminated; *len gets its
 * size.  0 or -errno. */
int maps_read_file(const char *path, char **buf, size_t *len);
/* maps_stacks.c: probes up to MAPS_MAX_SP_PROBES threads' stack pointers
 * and names the regions holding them [stack:TID]. */
void maps_probe_threads(struct maps *m);
/* maps.c: kind and path of r from a maps name field (may be empty). */
int maps_classify(struct maps_region *r, const char *name, size_t len);
/* maps.c: sorts r, marks .bss, replaces m's regions with them (carrying
 * thread-stack labels) and bumps the generation; r is m's then. */
int maps_take(struct maps *m, struct maps_region *r, size_t n);
void maps_free_regions(struct maps_region *r, size_t n);
/* maps.c: whether sorted region i may be the .bss of region i - 1. */
bool maps_bss_of_prev(const struct maps_region *r, size_t i);

#endif
