/*
 * A frame: everything one refresh shows, built by the collector thread and
 * handed to the UI thread by pointer.  After frame_publish() the collector
 * never touches it again; the UI owns it and releases it with frame_free().
 * A frame holds no pointer into live tables: every array and string in it
 * is its own heap copy.
 *
 * Invariants (frame_check; docs/design.md, "Frame invariants"):
 *   totals.samples == totals.loads + totals.stores + totals.other
 *   the same for cumulative
 *   sum(cpus[].samples) + cpu_unknown == totals.samples
 *   sum(threads[].samples) == totals.samples
 *   sum(matrix) + sum(matrix_unknown) + cpu_unknown == totals.samples
 *   sum(nodes[].mem_samples) + mem_unknown == totals.samples
 *   sum(processes[].samples) + processes_untracked == totals.samples
 *   with processes_untracked 0, for every node j:
 *     sum(processes[].nodes[j]) == nodes[j].mem_samples,
 *   and sum(processes[].local), sum(processes[].remote) ==
 *     sum(nodes[].local), sum(nodes[].remote)
 */
#ifndef MEMTOP_FRAME_H
#define MEMTOP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counts.h"
#include "sortkey.h"

#define FRAME_NODE_UNKNOWN (-1)

/* The most pages a frame carries: --top and CMD_SET_TOP accept
 * 1..FRAME_TOP_MAX. */
#define FRAME_TOP_MAX 100000

struct frame_target {
	int32_t pid;
	char comm[16];
	uint32_t threads;	/* threads currently sampled */
	uint32_t unwatched;	/* threads whose channel could not be opened */
	bool alive;
};

struct frame_page {
	int32_t pid;
	uint64_t addr;		/* page base address */
	uint32_t size;		/* page (aggregation) size in bytes */
	uint64_t samples;	/* this interval */
	uint64_t loads;		/* this interval */
	uint64_t stores;	/* this interval */
	uint64_t other;		/* this interval */
	uint64_t total;		/* since start or reset */
	double share;		/* samples / totals.samples of the interval */
	int32_t node;		/* memory node, FRAME_NODE_UNKNOWN if unknown */
	double latency;		/* mean weight (cycles); < 0 when none */
	uint64_t local;		/* this interval, samples from the page's node */
	uint64_t remote;	/* this interval, samples from other nodes */
	char *region;		/* NULL when unknown */
	char *symbol;		/* NULL when unknown */
	struct frame_object *object;	/* NULL when none */
	struct frame_damon *damon;	/* -e damon's region; NULL otherwise */
	/* Code sites: the instruction pointers with most samples on this
	 * page (at most FRAME_SITES), most first.  sites_other = total minus
	 * their samples (ips without a slot, no ip, or sites forgotten). */
	struct frame_site *sites;
	size_t n_sites;
	uint64_t sites_other;
	/* Cache-line heat: FRAME_LINES counters, one per 1/64th of the page
	 * (64 bytes at 4 KiB), for the first FRAME_LINES_PAGES pages; NULL
	 * when not kept (see linetab.h). */
	uint32_t *lines;
	/* Where this page's accesses were served since reset, by data_src
	 * level class (FRAME_LEVELS counters, index = enum datasrc_level,
	 * names from datasrc_level_name()); NULL when the source gives no
	 * data_src or the page has none. */
	uint64_t *levels;
};

#define FRAME_LEVELS		14	/* DATASRC_LVL__COUNT */

/*
 * The DAMON region a page entry stands for (-e damon, issue 19): its
 * access count and age from the kernel's snapshot, and the nodes of the
 * pages memtop probed in it (move_pages on a few pages of a process's
 * region, the memory-block map for a physical one).
 */
struct frame_damon {
	uint32_t accesses;	/* checks of the last aggregation that hit it */
	uint32_t checks;	/* checks per aggregation */
	uint32_t age;		/* aggregations it kept that access count */
	uint64_t aggr_us;	/* one aggregation, microseconds */
	uint64_t nodes;		/* bit n: a probed page is on node n */
	uint32_t probed;	/* pages probed */
	uint32_t unknown;	/* of them, with no node (not present) */
};

#define FRAME_DAMON_NODES	64	/* nodes the mask can name */

#define FRAME_OBJ_CALLERS	3
#define FRAME_OBJ_TIDS		4

/* The object a page belongs to (issue 18): the allocation that made it. */
struct frame_object {
	char *site;		/* "make_table+0x1c" */
	char *callers[FRAME_OBJ_CALLERS];	/* NULL where none */
	uint64_t size;		/* bytes */
	uint64_t base;
	int32_t tid;		/* the allocating thread */
	double age;		/* seconds since the allocation */
	uint64_t requested;	/* bytes the allocating call asked */
	int32_t first_touch;	/* thread of its first sample; 0 = none */
};

/* An allocation site's row in the objects view: its live objects and the
 * samples of their pages this interval. */
struct frame_objsite {
	char *site;
	char *callers[FRAME_OBJ_CALLERS];
	uint64_t objects;	/* live objects of the site */
	uint64_t bytes;		/* their bytes */
	uint64_t samples, loads, stores;	/* this interval */
	uint64_t local, remote;			/* this interval */
	uint64_t *nodes;	/* n_nodes: samples by the page's node */
	int32_t tids[FRAME_OBJ_TIDS];	/* allocating threads, first ones */
	size_t n_tids;
	uint64_t requested;	/* bytes their allocating calls asked */
	/* Their first touchers (the thread of each one's first sample),
	 * first ones. */
	int32_t touch_tids[FRAME_OBJ_TIDS];
	size_t n_touch_tids;
};

#define FRAME_SITES		4
#define FRAME_LINES		64
#define FRAME_LINES_PAGES	20
#define FRAME_CODE_SITES	20

struct frame_site {
	uint64_t ip;
	char *symbol;		/* "function+0xOFF", NULL when unknown */
	uint64_t samples;	/* since start or reset */
	uint64_t caller;	/* "called from": 0 when unknown */
	char *caller_symbol;	/* its "function+0xOFF", NULL when unknown */
};

/* One function of the code view: the samples of every ip inside it. */
struct frame_code_site {
	int32_t pid;
	char *function;		/* NULL when no symbol covers the ips */
	char *module;		/* ELF path, or region name ("[anon]") */
	uint64_t samples;	/* this interval */
	uint64_t total;		/* since start or reset */
};

struct frame_node {
	int32_t node;
	uint64_t cpu_samples;	/* issued by this node's CPUs */
	uint64_t mem_samples;	/* landing on this node's memory */
	uint64_t local;		/* cpu node == memory node == this node */
	uint64_t remote;	/* issued by this node's CPUs to other nodes */
	uint64_t mem_total_kb;	/* 0 if unknown */
	uint64_t mem_free_kb;
};

struct frame_cpu {
	int32_t cpu;
	int32_t node;
	uint64_t samples;
};

struct frame_thread {
	int32_t pid;
	int32_t tid;
	uint64_t samples;
};

/* One process with samples this interval, or one that exited since the
 * last frame (shown once, alive false, then dropped). */
struct frame_process {
	int32_t pid;
	char comm[16];		/* "[unknown]" when neither a COMM record nor
				 * /proc told it */
	char *cgroup;		/* cgroup2 path ("0::" line); NULL unknown */
	uint64_t samples;	/* this interval: loads + stores + other */
	uint64_t loads;
	uint64_t stores;
	uint64_t other;
	uint64_t total;		/* since start or reset */
	uint64_t local;		/* this interval, as the node matrix counts */
	uint64_t remote;
	double share;		/* samples / totals.samples */
	uint64_t *nodes;	/* n_nodes: memory-side samples per node, in
				 * the order of nodes[] (unknown node: none) */
	uint32_t threads;	/* threads with samples this interval */
	bool alive;
};

/* Page migrations (--migrate-hot, CMD_MIGRATE) done since the previous
 * frame, one count per page by the status move_pages gave it. */
struct frame_migrations {
	uint64_t moved;		/* now on the target node */
	uint64_t busy;		/* -EBUSY: in use, try again later */
	uint64_t denied;	/* -EPERM, -EACCES: no permission */
	uint64_t failed;	/* any other error (gone, no memory ...) */
	uint64_t skipped;	/* asked for, but no node touches it more */
};

/* Page -> node resolution work since the previous frame. */
struct frame_noderes {
	uint64_t queried;	/* pages asked with move_pages */
	uint64_t resolved;	/* of those, pages with a node */
	uint64_t revalidated;	/* known pages asked again (round robin) */
	uint64_t changed;	/* of those, pages found on another node */
	uint64_t phys;		/* samples placed from PHYS_ADDR, no syscall */
	uint64_t query_us;	/* time spent in move_pages */
};

struct frame {
	uint64_t seq;		/* 1, 2, 3 ... */
	double time;		/* seconds since start */
	double interval;	/* seconds this frame covers */
	bool final;		/* last frame: every target exited or quit */
	bool paused;

	char source[16];	/* "faults", "pebs", "ibs", "replay" */
	char **events;		/* event names, n_events of them */
	size_t n_events;
	char *source_note;	/* why this source / what a sample means; may be NULL */
	bool has_kinds;		/* source tells loads from stores */
	uint64_t period;	/* sampling period in force */
	enum sort_key sort;

	struct frame_target *targets;
	size_t n_targets;

	struct counts totals;		/* this interval */
	struct counts cumulative;	/* since start or reset */
	uint64_t tracked_pages;		/* entries in the page table */
	uint64_t skipped;		/* frames the UI dropped before this one */

	/* Top pages by `sort`, best first (at most the K asked for); only
	 * those of process pages_pid when it is not 0 (CMD_PAGES_OF). */
	struct frame_page *pages;
	size_t n_pages;
	int32_t pages_pid;

	/* Memory-side samples whose page node is unknown. */
	uint64_t mem_unknown;
	/* Samples whose CPU (or its node) is unknown. */
	uint64_t cpu_unknown;

	struct frame_node *nodes;	/* index i is node nodes[i].node */
	size_t n_nodes;
	/* n_nodes * n_nodes, row = CPU node index, column = memory node index */
	uint64_t *matrix;
	/* n_nodes: samples from CPU node i to a page of unknown node */
	uint64_t *matrix_unknown;
	/* Largest node's share of the memory-side samples divided by its
	 * fair share 1/n_nodes: 1.0 = even (always so on one node), n_nodes =
	 * every sample on one node.  Negative (JSON null) when no sample of
	 * the interval has a known memory node. */
	double imbalance;
	struct frame_migrations migrations;
	struct frame_noderes noderes;

	struct frame_cpu *cpus;		/* every possible CPU, ascending */
	size_t n_cpus;

	struct frame_thread *threads;	/* threads with samples this interval */
	size_t n_threads;

	/* By the sort key (loads, stores, total; samples otherwise), best
	 * first.  processes_untracked: this interval's samples of processes
	 * past the table's limit; processes_unknown: rows named
	 * "[unknown]".  process_nodes holds every row's nodes[]. */
	struct frame_process *processes;
	size_t n_processes;
	uint64_t processes_untracked;
	uint64_t processes_unknown;
	uint64_t *process_nodes;

	/* How new threads are caught: "inherit" (per-CPU inherited channels,
	 * from birth) or "per-thread" (opened on FORK; gap figures below). */
	char follow_mode[16];
	uint64_t follow_threads;	/* threads opened from FORK records */
	uint64_t follow_gap_max_us;	/* worst FORK -> channel open */
	uint64_t follow_gap_mean_us;
	/* Task-ring records (FORK, COMM, EXIT) the kernel dropped since
	 * start: a thread they announced may go unwatched until the rescan
	 * each loss brings forward.  Not samples: not in totals.lost. */
	uint64_t follow_task_lost;

	/* memtop's own cost: CPU time of the collector thread during this
	 * interval (draining, decoding, aggregating, frame building), and of
	 * its drain threads (collector/live/dpool.h). */
	uint64_t collector_cpu_ns;

	/* This interval's samples by data_src level class, all pages
	 * (all zero for sources without data_src). */
	uint64_t levels[FRAME_LEVELS];

	/* Whole-machine views (-a, -G): what is watched ("all CPUs",
	 * "cgroup /x", "CPUs 0-3"), the CPUs with channels now and the
	 * watched CPUs that are offline (cpulists, "" none), and the CPU
	 * hotplug changes seen since start.  NULL scope otherwise. */
	char *scope;
	char *scope_cpus;
	char *scope_offline;
	uint64_t scope_hotplug;

	int exit_status;	/* launched command's exit status, -1 if none/unknown */
	char *error;		/* fatal collector error (frame is final); NULL if none */

	uint32_t granularity;	/* page aggregation size in bytes */
	/* Functions causing most samples (by `sort`: total for SORT_TOTAL,
	 * else this interval's samples), at most FRAME_CODE_SITES. */
	struct frame_code_site *code_sites;
	size_t n_code_sites;
	uint64_t code_unknown;		/* this interval: samples without ip */
	uint64_t code_untracked;	/* this interval: code table full */
	uint64_t sites_evicted;		/* pages whose sites were forgotten */
	uint64_t levels_evicted;	/* pages whose level mix was */
	/* Since start: mapped files found with another build id (or
	 * inode) than the mapping's, so given no symbol. */
	uint64_t names_mismatched;
	/* Since start: /proc/PID/maps reads that failed (the process gone,
	 * or not readable): its memory named "[unknown]". */
	uint64_t names_maps_failed;
	/* Since start: ELF files left unnamed because the parsing helper
	 * crashed, hung or answered nonsense on them. */
	uint64_t names_helper_failed;
	/* Since start: /proc/PID/maps reads not tried because the pid's
	 * read failed in the last 10 s: its memory named "[unknown]". */
	uint64_t names_maps_skipped;
	/* Since start: allocation-site frames named without the unwind
	 * helper (it crashed, hung or answered nonsense): module and
	 * offset, or "[unknown]". */
	uint64_t names_unwind_fallbacks;
	/* Since start: pages counted in a mapping that a record covered
	 * before the frame, past the pins a process keeps (65536), and
	 * covered ranges too wide to look through: named from the regions
	 * at the frame, the new mapping's. */
	uint64_t names_pins_dropped;
	/* Since start: mapping records of a process's image before an
	 * exec that were drained after the exec (another CPU's ring), so
	 * left out: that image is gone. */
	uint64_t names_stale_mmaps;
	/* Allocation sites (issue 18), most samples first, at most
	 * FRAME_OBJ_SITES; objects_on false when memtop names no objects
	 * (replay, whole machine, no permission: source_note says why).
	 * This interval's samples on pages of an object (objects_samples)
	 * and on pages of none (objects_none) add up to totals.samples;
	 * those of sites not listed are objects_more. */
	bool objects_on;
	struct frame_objsite *objects;
	size_t n_objects;
	uint64_t objects_samples;
	uint64_t objects_none;
	uint64_t objects_more;
	uint64_t objects_live;		/* objects known */
	/* Objects not kept: the table was full or out of memory, or a brk
	 * moved a break not known (src/aggr/allocs.c). */
	uint64_t objects_untracked;
	/* Allocation records lost (kernel LOST) or undecodable, since start:
	 * objects whose pages may be misnamed. */
	uint64_t objects_lost;
};

#define FRAME_OBJ_SITES		32

/* Allocates a zeroed frame; NULL on ENOMEM. */
struct frame *frame_new(void);
/* NULL-safe. */
void frame_free(struct frame *f);

/* The sum checks, run by the tests (memtop itself does not call it); 0
 * when every invariant above holds, else -EINVAL and a description in
 * buf. */
int frame_check(const struct frame *f, char *buf, size_t buflen);
/* "make_table+0x1c (4 MiB)": what the REGION/SYMBOL column shows of a
 * page's object (snprintf's return). */
size_t frame_object_label(const struct frame_object *o, char *buf,
			  size_t len);
/* One of the names_* counts: what it counts ("maps failed") and how
 * many. */
struct frame_names_count {
	const char *what;
	uint64_t n;
};

#define FRAME_NAMES_COUNTS 7

/* The names_* counts that are not zero, in the order the text header and
 * the TUI's losses row show them, into out; how many. */
size_t frame_names_counts(const struct frame *f,
			  struct frame_names_count out[FRAME_NAMES_COUNTS]);
/* "names: maps failed 3, maps skipped 5, ...": frame_names_counts as one
 * line (the text header), or "" when all are zero; snprintf's return. */
size_t frame_names_facts(const struct frame *f, char *buf, size_t len);
/* Frees a page's object; NULL-safe. */
void frame_object_free(struct frame_object *o);

#endif
