/*
 * The collector's insides, shared by collector.c (the thread: draining,
 * records, frames), follow.c (targets and their threads: attach, FORK
 * records, /proc rescans, the spare descriptor) and commands.c (the UI's
 * commands).  Not for other modules: see collector.h.  Collector thread
 * only, apart from collector_new and the attach calls before it starts.
 */
#ifndef MEMTOP_COLLECTOR_INT_H
#define MEMTOP_COLLECTOR_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "aggr.h"
#include "allocs.h"
#include "base.h"
#include "chanset.h"
#include "collector.h"
#include "cpulist.h"
#include "heapobjs.h"
#include "ingest.h"
#include "lathist.h"
#include "migrate.h"
#include "nodemap.h"
#include "physnode.h"
#include "producer.h"
#include "record.h"

struct damon;
struct dpool;
struct dpool_item;
struct damon_region;
struct damonfeed_iomem;
struct frame;

/*
 * Longest a FORK record may wait in a sample ring below its watermark, on
 * a channel without a task ring of its own (chanset_n_untasked): it
 * bounds that thread's birth gap.  Other rings need no sweep: FORK, COMM
 * and EXIT records wake the collector through the task ring at once,
 * samples through the watermark, and every frame drains every ring.  Each
 * wakeup costs the collector CPU time (README.md, Performance), so it
 * only wakes for work.
 */
#define COLLECTOR_POLL_MS	25
/* Samples waiting in a ring are drained at least this often (with node
 * resolution on): their pages' nodes are asked (move_pages) while their
 * process lives, so a process that lives a few hundred ms has them; the
 * watermark alone would leave them until the frame, after its exit. */
#define COLLECTOR_NODES_MS	100
#define COLLECTOR_RESCAN_MS	1000
/* Without a locked-memory limit (root), the rings of a process's threads
 * still take at most this many pages together: 256 MiB, 256 threads at
 * the default ring size. */
#define COLLECTOR_RING_CAP_PAGES	65536u
#define COLLECTOR_MAX_EVENTS	64
#define COLLECTOR_MAX_OBJECTS	(1u << 20)	/* objects kept (allocs.h) */
/* Share of each interval that re-asking known page nodes may take: 1 %;
 * aggr_revalidate_budget() turns it into pages at the cost per page it
 * has measured. */
#define COLLECTOR_REVAL_SHARE	0.01

struct target {
	pid_t pid;
	char comm[16];
	uint32_t threads;	/* from the last /proc rescan */
	bool alive;
	bool launched;		/* our child: reap it */
	bool followed;		/* a child process found by its FORK record */
	/* Threads seen in /proc/PID/task (or FORK records) whose channel
	 * could not be opened (EMFILE, EPERM ...), as of the last scan. */
	uint32_t unwatched;
	uint32_t told;		/* the count the log last gave */
	/* A changed count is told once two scans in a row agree, so a burst
	 * of births makes one more line, not one per brought-forward scan. */
	uint32_t settling;
	/* CLOCK_MONOTONIC ns at the end of that scan: a thread born before
	 * it may be among the unwatched already. */
	uint64_t scanned_ns;
	int scan_err;		/* why the last rescan failed, -errno; 0 */
	/* Time of the COMM record comm came from: per-CPU rings are drained
	 * one after the other, so an older COMM (the shell before its exec)
	 * may come after a newer one. */
	uint64_t comm_time;
};

/* --rearm (rearm.c): the soft-dirty re-arm and what it cost. */
struct collector_rearm {
	bool on;		/* asked for */
	bool ok;		/* the kernel keeps soft-dirty bits */
	double every_s;		/* <= 0: at every frame */
	double next;		/* base_now_s() time of the next re-arm */
	uint64_t ns;		/* re-arm time this interval */
	uint32_t count;		/* re-arms this interval */
	uint32_t targets;	/* processes the last re-arm reached */
	uint64_t failed;	/* clear_refs writes refused, since start */
	char why[200];		/* !ok: why */
	char fail[200];		/* the first refusal, told in every note */
	char note[1024];	/* the frame's source note */
};

struct collector {
	struct collector_config cfg;
	struct chanset *cs;
	struct aggr aggr;
	struct ingest ingest;		/* the per-sample path into aggr */
	struct allocs allocs;		/* objects and their sites (issue 18) */
	struct heapobjs heap_objs;	/* --heap-objects; objs NULL: off */
	/* --heap-objects at run time (heaplive.c): the rate since the last
	 * frame, the sample period of the allocating entries, the note. */
	struct {
		uint64_t calls_at;	/* allocs.heap.st.calls then */
		uint64_t cpu_at;	/* collector CPU ns then */
		double at;		/* base_now_s() then */
		uint64_t period;	/* 1: every allocation */
		char note[320];
	} heap;
	/* MEMTOP_DEBUG_LATENCY=FILE: sample -> frame latency; NULL = off */
	struct lathist *lat;
	struct nodemap *nodemap;
	struct physnode *physnode;	/* NULL: no memory-block map */
	struct migrate *migrate;	/* candidates of the last frame */
	struct producer prod;	/* thread, queues, sort, top, seq, quit */

	struct target *targets;
	size_t n_targets;

	uint64_t unknown_records;
	uint64_t bad_records;
	bool paused;
	/* Launched command watched by per-CPU inherited channels (exact from
	 * each thread's birth) until a period change moves it to per-thread
	 * channels, which IOC_PERIOD reaches. */
	bool inherit;
	struct collector_follow follow;
	/* FORK, COMM and EXIT records the kernel dropped from task rings,
	 * since start: not samples, so not in counts.lost.  Each loss brings
	 * a rescan forward, which finds the threads they announced. */
	uint64_t task_lost;
	uint64_t cpu_at_interval;	/* thread CPU ns at interval start */
	int child_wstatus;
	double t0;
	double interval_start;
	double next_rescan;	/* base_now_s() time of the next rescan */
	char error[256];
	char cmd_tag;		/* epoll tag of the command queue */
	/*
	 * A descriptor held so that one stays free for /proc: channels are
	 * opened until EMFILE, and a rescan that cannot open /proc/PID/task
	 * would leave threads born since (FORK records lost, or read while
	 * no descriptor was free) neither watched nor counted, and a target
	 * without channels taken for dead.  Released around each /proc
	 * access (collector_proc_begin/end); -1 while released.
	 */
	int spare_fd;
	/* -a, -G (system.c): the online CPUs at the last rescan, CPUs whose
	 * channels failed to open again (told once), and CPU hotplug changes
	 * seen since start. */
	bool system;
	struct cpulist online;
	struct cpulist open_failed;
	uint64_t hotplug;
	struct collector_rearm rearm;
	/* The parallel drain (drainpar.c): drain threads forced by
	 * MEMTOP_DRAIN_THREADS (-1: chosen by the rings' count; 0 or 1: the
	 * collector alone), the pool and its items. */
	int par_force;
	struct dpool *pool;
	struct dpool_item *par_items;
	struct channel **par_chans;
	size_t par_cap;
	size_t par_n;		/* items of the last drain on the pool (0:
				 * it drained alone) */
	uint64_t par_merges;	/* frames merged draining (drainpar.c) */
	uint64_t par_cpu_gone;	/* CPU time of pools stopped */
	bool par_failed;	/* a pool could not start: alone from then */
	/* -e damon (damonfeed.c): memtop's kdamond, its last snapshot, the
	 * period its intervals follow, its CPU time at the last frame; a
	 * vaddr kdamond's processes in its targets' order (a region's
	 * target indexes it), or (-a) a paddr one with the machine's RAM
	 * from /proc/iomem, which names its regions. */
	struct damon *damon;
	bool damon_paddr;
	pid_t *damon_pids;
	size_t n_damon_pids;
	struct damonfeed_iomem *iomem;
	struct damon_region *regs;
	size_t n_regs, regs_cap;
	uint64_t damon_period;
	uint64_t damon_aggr_us;		/* the current aggregation interval */
	pid_t kdamond;
	uint64_t kdamond_ns;
	char damon_why[256];	/* why the last snapshot failed */
	char damon_note[1600];
};

struct collector_scan {
	struct collector *c;
	pid_t pid;
	enum chanset_start start;
	int first_err;
	char *err;		/* first failure's message; may be NULL */
	size_t errlen;
	unsigned opened;
	unsigned failed;	/* threads left without a channel */
};

static inline struct collector *
collector_of(struct producer *p)
{
	return (struct collector *)((char *)p - offsetof(struct collector,
							 prod));
}

/* One ring's drain, for collector_on_record. */
struct collector_drain {
	struct collector *c;
	struct channel *ch;
	uint64_t period;	/* in force for this drain's samples */
	bool task;		/* draining the task ring */
};

/* collector.c */
extern const struct producer_ops collector_ops;
void collector_drain(struct collector *c, struct channel *ch);
/* A record of d's ring other than a sample (ring_record_fn). */
int collector_on_record(const struct perf_event_header *hdr, void *ctx);
/* Counts and logs the malformed headers a drain of ch skipped. */
void collector_drain_bad(struct collector *c, struct channel *ch,
			 const struct ring_stats *st);
/* n samples reported lost by LOST records of ch's sample ring, counted
 * once with the event's own lost count (channel_take_lost). */
void collector_lost_records(struct collector *c, struct channel *ch,
			    uint64_t n);

/* drainpar.c: drains of many rings, by the collector alone or with the
 * drain threads (dpool.h). */
void collector_drain_many(struct collector *c, struct channel **chans,
			  size_t n);
/* Drains the rings want() picks (NULL: all). */
void collector_drain_if(struct collector *c,
			bool (*want)(const struct channel *ch));
/* Drains every ring, then closes the channels of exited threads. */
void collector_drain_all(struct collector *c);
/* MEMTOP_DRAIN_THREADS, read by collector_new: 0 or -EINVAL (err). */
int collector_par_setup(struct collector *c, char *err, size_t errlen);
/* The drain threads in use (0: the collector drains alone). */
unsigned collector_par_threads(const struct collector *c);
uint64_t collector_par_cpu_ns(struct collector *c);
/* The drain threads' shards into the aggregation (a frame, a change of
 * page size). */
void collector_par_merge(struct collector *c);
/* The pool stopped, its threads' CPU time kept, after its shards were
 * merged (a change of page size, the end): the next drain on drain
 * threads starts one made like the aggregation. */
void collector_par_stop(struct collector *c);
void collector_par_fini(struct collector *c);
void collector_sync_lost(struct collector *c, struct channel *ch);

/* follow.c */
void collector_proc_begin(struct collector *c);
void collector_proc_end(struct collector *c);
struct target *collector_find_target(struct collector *c, pid_t pid);
struct target *collector_add_target(struct collector *c, pid_t pid,
				    bool launched);
void collector_scan_thread(pid_t tid, void *ctx);
void collector_scanned(struct target *t, const struct collector_scan *s);
void collector_rescan_soon(struct collector *c);
/* MMAP, MMAP2 of ch's ring: the mapping goes to the names (names_mmap). */
void collector_on_mmap(struct collector *c, struct channel *ch,
		       const struct perf_event_header *hdr);
/* drain_due.c: rings without a task ring, each poll period; rings
 * holding samples (COLLECTOR_NODES_MS); channels of exited threads. */
void collector_sweep(struct collector *c);
/* When the loop must wake next (absolute seconds). */
double collector_wake(const struct collector *c, double next_frame,
		      double next_sweep, double next_nodes);
void collector_drain_pending(struct collector *c);
void collector_close_exited(struct collector *c);
void collector_on_fork(struct collector *c, const struct record_task *t);
/* task: from the task ring, whose COMM comes again in the sample ring
 * (source.h, want_mmap): only that one drops an exec'd image's names. */
void collector_on_comm(struct collector *c, struct channel *ch,
		       const struct perf_event_header *hdr, bool task);
void collector_rescan(struct collector *c);
bool collector_all_exited(struct collector *c);

/* system.c */
void collector_rescan_cpus(struct collector *c);
void collector_system_frame(struct collector *c, struct frame *f);

/* rearm.c */
void collector_rearm_setup(struct collector *c);
double collector_rearm_due(const struct collector *c);
void collector_rearm(struct collector *c, double now, bool frame);
const char *collector_rearm_note(struct collector *c, const char *src_note);
/* The frame's whole source note, in buf. */
const char *collector_frame_note(struct collector *c, char *buf, size_t len);

/* heaplive.c */
int collector_objects_init(struct collector *c);
/* At each frame, before its note: the rate, the cost, sampling. */
void collector_heap_tick(struct collector *c);

/* damonfeed.c.  A region's rate is k of DAMONFEED_CHECKS checks. */
#define DAMONFEED_CHECKS	20u
int collector_damon_start(struct collector *c);
void collector_damon_stop(struct collector *c);
void collector_damon_drain(struct collector *c);
const char *collector_damon_note(struct collector *c, const char *src_note);
/* damonfeed_regions.c: the RAM of /proc/iomem (paddr), the processes a
 * launched command starts (vaddr), and each entry's region, nodes and
 * name in a frame. */
int damonfeed_iomem_read(struct damonfeed_iomem **out, uint64_t (**ranges)[2],
			 size_t *n_ranges, char *why, size_t whylen);
void damonfeed_iomem_free(struct damonfeed_iomem *m);
bool damonfeed_follow_children(struct collector *c);
void collector_damon_frame(struct collector *c, struct frame *f);

/* commands.c: the commands only the live collector knows. */
void collector_apply(struct producer *p, const struct cmd *cmd);

/* allocs_live.c: every record of ch's allocation ring into the object
 * table (and the --record file). */
void collector_allocs_drain(struct collector *c, struct channel *ch);

#endif
