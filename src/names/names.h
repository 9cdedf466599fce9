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
 * region (names_note_page marks the pid, names_refresh_due reads it if
 * the caller wants it, at most every NAMES_RETRY_MS and NAMES_DUE_READS
 * pids a call), and before
 * a frame names a pid's pages or the functions it shows if its regions
 * are older than NAMES_REFRESH_MS.  A pid whose read failed (gone,
 * unreadable) is not read again for NAMES_FAILED_MS, even after the
 * cache of NAMES_MAX_PROCS let it go: it is "[unknown]" meanwhile and
 * counts in stats.maps_skipped.  ELF files are opened at
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
 *
 * With records on (names_use_records), the kernel's MMAP2, COMM-exec,
 * FORK and EXIT records drive the regions (names_records.c): a mapping
 * is known from its record, before any sample in it is aggregated, and
 * stays until another mapping covers its addresses (no record tells of
 * an munmap; perf keeps it too), so memory made and unmapped between two
 * frames, and every mapping of a process gone by the frame, is named.
 * When another mapping does cover it under another name, the pages
 * already counted there keep the old mapping's region name (names_on_cover,
 * names_pin_page): memory unmapped and reused before the frame is named
 * as it was when sampled, as far as the records' order tells (per-CPU
 * rings are drained one after another, not in time order).
 * /proc/PID/maps then only fills the gaps between the regions records
 * gave: what existed before the attach, and the stack, whose growth no
 * record reports.  An exec drops the old image at once and the new
 * image's records rebuild it.  Offline (a replayed capture) never reads
 * /proc: its pids are not this machine's processes.
 *
 * Records carry their time (names_map.time, names_forget's and
 * names_fork's time; 0 when unknown), and the rings of a launched
 * command or of -a are per CPU, drained one after another: a record may
 * come after a later one of another CPU.  Their times order the regions
 * as the events were: an older mapping does not replace a later one (it
 * fills only what no later one holds), an exec drops only what was mapped
 * before it (and ignores its old image's records that come after it), a
 * fork's child keeps its own later mappings (and takes nothing of its
 * parent when it exec'd after the fork), a pin goes with the region it
 * names.  A record older than one of its process already taken pins
 * nothing (its pages may have been counted after it).  Samples carry no
 * time here, so a page is not ordered against the records.
 *
 * A symbol comes only from a file proven to be the mapped one: through
 * /proc/PID/root while the process lives (its inode as the mapping's),
 * else by the path itself, checked against the build id the record or
 * capture carries (names_add_build_id), else against the mapping's
 * inode (live records carry the inode: source.c says why not the build
 * id); a file that fails the check is looked for in perf's build-id
 * cache (~/.debug/.build-id/), and without one gives no symbol and
 * counts in stats.mismatched (symbols.h).
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
/* Reads of marked pids (names_refresh_due) a call; the rest stay due. */
#define NAMES_DUE_READS		64
/* ELF files opened and indexed take at most this much CPU time a second;
 * the rest wait for a later frame (stats.elf_deferred), so a frame that
 * names many processes gone since (their files named by records) still
 * comes in time. */
#define NAMES_ELF_MS_PER_S	250

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
	/* Reads not tried: the pid's read failed in the last
	 * NAMES_FAILED_MS (names_int.h), so it is named "[unknown]". */
	uint64_t maps_skipped;
	uint64_t elf_files;	/* ELF files opened and indexed */
	uint64_t elf_failures;	/* file mappings that could not be opened */
	/* The ELF parsing helper (symbols.h): crashed, hung or garbled
	 * answers, and the files left unnamed for that. */
	uint64_t helper_failures;
	uint64_t helper_files_failed;
	/* names_forget of a pid known here (with records and a time, of
	 * any pid: it is known from then on). */
	uint64_t execs;
	/* Execs whose re-read waited for NAMES_RETRY_MS: over budget. */
	uint64_t exec_reads_deferred;
	uint64_t mmaps;		/* MMAP/MMAP2 records taken */
	uint64_t elf_deferred;	/* file openings put off (the budget) */
	/* Files whose build id (or inode) differs from the mapping's:
	 * given no symbol. */
	uint64_t mismatched;
	/* Pages named when a record covered their mapping (names_pin_page),
	 * and those past NAMES_MAX_PINNED a process not pinned (with the
	 * covered ranges too wide to look through, names_pins_skipped). */
	uint64_t pinned;
	uint64_t pins_dropped;
	/* MMAP records of an old image that came after its exec's COMM
	 * (another CPU's ring): not taken. */
	uint64_t mmaps_before_exec;
};

/* One MMAP2 record's mapping, as names_mmap takes it. */
struct names_map {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;
	uint64_t inode;		/* 0 when unknown (build-id records) */
	uint32_t dev_major, dev_minor;
	uint32_t prot;		/* PROT_* */
	bool shared;		/* MAP_SHARED */
	const char *name;	/* "//anon", "[heap]", a path ... */
	size_t name_len;
	const uint8_t *build_id;	/* NULL or build_id_size bytes */
	size_t build_id_size;
	uint64_t time;		/* the record's (perf clock); 0 unknown */
};

struct names;

struct names *names_new(void);		/* NULL on ENOMEM */
void names_free(struct names *n);	/* NULL-safe */
/* Regions only: no ELF file is opened, no symbol named (the perf.data
 * fuzzer, whose inputs name arbitrary files of this machine). */
void names_no_files(struct names *n);
/* Starts the ELF parsing helper now (symbols_helper_start). */
void names_start_helper(struct names *n);

/* A page of pid was seen for the first time.  No system calls. */
void names_note_page(struct names *n, int32_t pid, uint64_t addr);
/* Reads the maps of the pids noted above (rate-limited) for which
 * want(ctx, pid) is true (want NULL: every one); the others stay noted,
 * asked again at the next call. */
void names_refresh_due(struct names *n, bool (*want)(void *ctx, int32_t pid),
		       void *ctx);
/* Before naming pid's pages in a frame (rate-limited re-read). */
void names_prepare(struct names *n, int32_t pid);
/* pid exec'd at time (the COMM record's; 0 unknown): its old image's
 * names go at the next names_prepare or names_refresh_due, at once with
 * records (see the top).  No system calls. */
void names_forget(struct names *n, int32_t pid, uint64_t time);

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

/* Regions from records from now on; offline: never from /proc. */
void names_use_records(struct names *n, bool offline);

/*
 * A mapping from a record that covers addresses an earlier mapping of
 * the pid held, under another name, means that one was unmapped (no
 * record says so).  Pages already counted there were that mapping's:
 * names_mmap calls fn with each such range [lo, hi) before it puts the
 * new mapping in place, and fn pins (names_pin_page) the pages its caller
 * counted in it.  Without that, a page of memory unmapped and reused
 * between two frames (a thread's stack over a file mapping just unmapped)
 * would be named after the memory that came later.
 */
typedef void (*names_cover_fn)(void *ctx, int32_t pid, uint64_t lo,
			       uint64_t hi);
void names_on_cover(struct names *n, names_cover_fn fn, void *ctx);
/*
 * Names page [addr, addr + size) of pid now, from the regions known now,
 * and keeps those names for it (names_page gives them) until the pid's
 * image goes (an exec before the covering record), a FORK record reuses
 * the pid, the process leaves the cache, or names_unpin_all.  A page pinned already keeps its first
 * names.  The data symbol is the one at addr, from the modules as of the
 * last names_prepare (a file mapped and unmapped between two frames has
 * none, nor a page whose symbol only its hottest line would find).
 */
void names_pin_page(struct names *n, int32_t pid, uint64_t addr,
		    uint64_t size);
/* Every pin goes (the pages were reset, or changed size). */
void names_unpin_all(struct names *n);
/* A covered range too wide for the caller to look through: counted in
 * pins_dropped, its pages named from the regions at the frame. */
void names_pins_skipped(struct names *n);
/* The records (see the top).  No system calls. */
void names_mmap(struct names *n, int32_t pid, const struct names_map *m);
void names_fork(struct names *n, int32_t pid, int32_t ppid, uint64_t time);
void names_exit(struct names *n, int32_t pid);
/* A capture's HEADER_BUILD_ID entry: the file at path must have this
 * build id (checked for mappings whose records carry none).  Copied; 0
 * or -ENOMEM. */
int names_add_build_id(struct names *n, const char *path,
		       const uint8_t *id, size_t size);

/* Loads the regions of pid from text instead of /proc (tests, benches);
 * the pid then never reads /proc.  0 or -errno. */
int names_load_maps_text(struct names *n, int32_t pid, const char *text,
			 size_t len);

void names_stats(const struct names *n, struct names_stats *out);

#endif
