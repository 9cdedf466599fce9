/*
 * Inside the names room: the per-process state names.c keeps and
 * names_lookup.c reads.  Collector thread only.
 */
#ifndef MEMTOP_NAMES_INT_H
#define MEMTOP_NAMES_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "names.h"
#include "u64map.h"

struct maps;
struct symbols;
struct symbols_file;

/* Pages named since the pid's regions changed; past this the page cache
 * starts over rather than grow without bound. */
#define NAMES_MAX_CACHED_PAGES 65536
/* Pinned pages a process keeps; past this a page is not pinned (counted
 * in names_stats.pins_dropped) and is named from the regions at the
 * frame, as any page. */
#define NAMES_MAX_PINNED	65536

/* Keys of functions without a symbol: the region's start with this bit,
 * which no user-space address has. */
#define NAMES_UNKNOWN_FUNC (1ull << 63)

/* A mapped ELF file (or a file that is not one, file == NULL, kept so it
 * is not opened again) at its place in the process. */
struct names_module {
	uint64_t lo, hi;	/* absolute addresses covered */
	uint64_t bias;		/* absolute = file vaddr + bias */
	struct symbols_file *file;
	uint64_t map_start;	/* the mapping it was found at */
	uint64_t inode;
	char *path;
	bool pending;		/* not opened yet: over the ELF budget */
};

struct names_page {
	uint64_t maps_gen;
	uint64_t mods_gen;
	uint64_t hot;
	uint64_t time;		/* a pin: its named region's record time */
	char *region;
	char *symbol;
};

struct names_proc {
	int32_t pid;
	struct names_proc *hnext;	/* next in its names.hash bucket */
	struct maps *maps;
	struct names_module *mods;	/* sorted by lo */
	size_t n_mods;
	uint64_t maps_gen_seen;		/* modules built from this */
	uint64_t mods_gen;		/* bumps when modules change */
	struct u64map ips;		/* ip -> struct names_code */
	struct u64map funcs;		/* start -> struct names_func */
	struct u64map pages;		/* addr | shift -> names_page */
	/* Pages whose mapping a record covered since they were counted:
	 * addr | shift -> names_page, named then, kept (names_pin_page). */
	struct u64map pinned;
	/* The latest exec's time (its COMM record's): MMAPs older than it
	 * are the old image's. */
	uint64_t exec_time;
	/* The latest time of its records taken (MMAP, exec): one older than
	 * it is late, from a ring drained after another CPU's. */
	uint64_t rec_time;
	double last_read;		/* last successful maps read */
	double last_try;
	uint64_t used;			/* LRU tick */
	bool loaded;
	bool due;
	bool gone;			/* exited: keep what it had */
	bool fixed;			/* regions from text, never /proc */
	bool exec;			/* exec'd: drop the old image */
	/* Modules to build at the next names_sync_mods: one waits for the
	 * budget, or an exec dropped them. */
	bool mods_pending;
};

/* Buckets of the pid hash over the cached processes (a power of two). */
#define NAMES_HASH		(2 * NAMES_MAX_PROCS)

/* Processes whose maps could not be read (gone, or unreadable) are not
 * read again for this long, even once the cache has let them go; a pid
 * reused meanwhile is known from its FORK or COMM-exec record. */
#define NAMES_FAILED_MS		10000
/* Slots of that memory, by pid hash; a collision forgets the older. */
#define NAMES_FAILED_SLOTS	4096

struct names_failed {
	int32_t pid;		/* 0 = free */
	bool gone;		/* ENOENT/ESRCH, not EACCES */
	double until;		/* not read before this (base_now_s) */
};

/* A capture's HEADER_BUILD_ID entry. */
struct names_build_id {
	char *path;
	uint8_t id[20];
	uint8_t size;
};

struct names {
	struct symbols *symbols;
	bool records;			/* regions from records */
	bool offline;			/* never /proc (replay) */
	bool no_files;			/* no ELF file opened (fuzzers) */
	struct names_build_id *build_ids;
	size_t n_build_ids;
	struct names_proc **procs;
	size_t n_procs;
	struct names_proc *hash[NAMES_HASH];	/* by pid */
	struct names_failed *failed;	/* NAMES_FAILED_SLOTS, or NULL */
	struct names_proc *last;	/* most recent lookup */
	uint64_t tick;
	bool any_due;
	/* Immediate re-reads after exec in the second from exec_window. */
	double exec_window;
	unsigned exec_reads;
	/* ELF opening time spent in the second from elf_window. */
	double elf_window;
	double elf_spent;
	struct names_stats stats;
	names_cover_fn cover;		/* NULL: none (names_on_cover) */
	void *cover_ctx;
};

/* The state of pid, created (without system calls) when absent; NULL
 * when out of memory. */
struct names_proc *names_proc(struct names *n, int32_t pid);
/* The cached state of pid, or NULL (no LRU tick, nothing created). */
struct names_proc *names_find(const struct names *n, int32_t pid);
/* names.c: pid lives (a record said so): its failed read is forgotten. */
void names_alive(struct names *n, int32_t pid);
/* names.c: frees p's modules and the names made from them (not its
 * pins); p stays usable. */
void names_proc_clear(struct names_proc *p);
/* names_records.c: drops what is known of p's image from before time
 * (an exec; all of it when time is 0). */
void names_drop_image(struct names_proc *p, uint64_t time);
/* names_records.c: keeps the pins of p naming a region mapped at or
 * after time (none when time is 0); the others go. */
void names_keep_pins_from(struct names_proc *p, uint64_t time);
/* names.c: rebuilds p's modules when its regions changed. */
void names_sync_mods(struct names *n, struct names_proc *p);
/* names_records.c: the build id a capture gives path, or NULL. */
const struct names_build_id *names_build_id_of(const struct names *n,
					       const char *path);

/* u64map value destructors. */
void names_free_code(void *v);
void names_free_func(void *v);
void names_free_page(void *v);

#endif
