/*
 * Names for the pages and code addresses a frame shows: the region of a
 * page (maps.h), the data symbol at it and the function at an instruction
 * pointer (symbols.h).  Collector thread only.
 *
 * Everything is cached per process: its regions, its modules (ELF files
 * with their load bias), one string per (pid, ip) and per shown page.
 * Only the pages and ips a frame shows are ever named, never each sample.
 *
 * When /proc/PID/maps is read: when a new page falls outside every known
 * region (names_note_page marks the pid, names_refresh_due reads it, at
 * most every NAMES_RETRY_MS), and before a frame names a pid's pages if
 * its regions are older than NAMES_REFRESH_MS.  ELF files are opened at
 * that time, while the process lives; a process that has exited keeps
 * the names it had.  Memory that came and went between two reads has no
 * region (NULL).
 *
 * An exec(2) keeps the pid and replaces the address space: names_forget
 * drops what was known of the old image (regions, modules, names of pages
 * and ips), so an address of the new image is never named after an old
 * mapping.  The next names_prepare or names_refresh_due reads the maps
 * again at once, without waiting for NAMES_RETRY_MS, for at most
 * NAMES_EXEC_READS such reads a second over all pids; past that (a storm
 * of execs) the pid waits for the usual rate-limited read, its pages
 * without names meanwhile, and stats.exec_reads_deferred counts it.
 *
 * Heap, stack and anonymous memory get a region and no symbol: a symbol
 * is only given where an ELF symbol covers the address.
 */
#ifndef MEMTOP_NAMES_H
#define MEMTOP_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NAMES_RETRY_MS		100
#define NAMES_REFRESH_MS	1000
#define NAMES_MAX_PROCS		256	/* least recently used go first */
#define NAMES_EXEC_READS	20	/* immediate re-reads after exec, /s */

/* A function of one process (interned: compare pointers). */
struct names_func {
	char *name;		/* NULL when no symbol covers it */
	char *module;		/* the ELF's path, or the region's name */
};

/* What an instruction pointer is. */
struct names_code {
	char *site;		/* "function+0xOFF", NULL when unknown */
	const struct names_func *func;	/* never NULL */
};

struct names_stats {
	uint64_t maps_reads;	/* successful reads of /proc/PID/maps */
	uint64_t maps_failures;	/* reads that failed (process gone, EACCES) */
	uint64_t elf_files;	/* ELF files opened and indexed */
	uint64_t elf_failures;	/* file mappings that could not be opened */
	/* The ELF parsing helper (symbols.h): crashed, hung or garbled
	 * answers, and the files left unnamed for that. */
	uint64_t helper_failures;
	uint64_t helper_files_failed;
	uint64_t execs;		/* names_forget of a pid known here */
	/* Execs whose re-read waited for NAMES_RETRY_MS: over budget. */
	uint64_t exec_reads_deferred;
};

struct names;

struct names *names_new(void);		/* NULL on ENOMEM */
void names_free(struct names *n);	/* NULL-safe */

/* A page of pid was seen for the first time.  No system calls. */
void names_note_page(struct names *n, int32_t pid, uint64_t addr);
/* Reads the maps of the pids noted above (rate-limited). */
void names_refresh_due(struct names *n);
/* Before naming pid's pages in a frame (rate-limited re-read). */
void names_prepare(struct names *n, int32_t pid);
/* pid exec'd: its old image's names go at the next names_prepare or
 * names_refresh_due (see the top).  No system calls. */
void names_forget(struct names *n, int32_t pid);

/*
 * The region and data symbol of page [addr, addr + size) of pid, as new
 * strings (NULL = unknown, or ENOMEM).  The symbol is the one covering
 * addr, else the one covering hot (the page's most-sampled address).
 */
void names_page(struct names *n, int32_t pid, uint64_t addr, uint64_t size,
		uint64_t hot, char **region, char **symbol);

/* What ip of pid is; valid until the next names_prepare or
 * names_refresh_due (names_forget only marks).  NULL only on ENOMEM. */
const struct names_code *names_code(struct names *n, int32_t pid,
				    uint64_t ip);

/* Loads the regions of pid from text instead of /proc (tests, benches);
 * the pid then never reads /proc.  0 or -errno. */
int names_load_maps_text(struct names *n, int32_t pid, const char *text,
			 size_t len);

void names_stats(const struct names *n, struct names_stats *out);

#endif
