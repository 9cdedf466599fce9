/*
 * Inside the metrics room: the accumulator's totals, the per-process
 * table, the snapshot the renderer reads, and the exporter that ties them
 * to the HTTP server and the metrics file.
 */
#ifndef MEMTOP_METRICS_INT_H
#define MEMTOP_METRICS_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counts.h"
#include "metrics.h"

/* Node and CPU ids at or above these are counted as unknown: Linux's
 * largest MAX_NUMNODES and NR_CPUS. */
#define METRICS_NODE_IDS	1024
#define METRICS_CPU_IDS		8192

/* Label value of a node, CPU or process outside the known ones. */
#define METRICS_UNKNOWN		"unknown"

enum { METRICS_MIG_MOVED, METRICS_MIG_BUSY, METRICS_MIG_DENIED,
       METRICS_MIG_FAILED, METRICS_MIG_SKIPPED, METRICS_MIG__COUNT };

/* One node's totals since start; ids are node numbers. */
struct metrics_node {
	int32_t node;
	uint64_t cpu;		/* samples issued by the node's CPUs */
	uint64_t mem;		/* samples on the node's memory */
	uint64_t local;
	uint64_t remote;
};

struct metrics_cpu {
	int32_t cpu;
	int32_t node;		/* -1: unknown */
	uint64_t samples;
};

struct metrics_proc {
	int32_t pid;
	char comm[16];
	uint64_t samples;
};

/*
 * Processes by pid (open addressing, pid 0 = free slot).  A process's
 * total only grows; "other" grows by the samples, in each frame, of the
 * processes outside that frame's top N.
 */
struct metrics_proc_slot {
	int32_t pid;
	bool top;		/* in the top N after the last frame */
	uint64_t seen;		/* last frame (acc->frames) naming it */
	uint64_t total;
	uint64_t delta;		/* this frame, while adding it */
	char comm[16];
};

struct metrics_procs {
	struct metrics_proc_slot *slots;
	size_t cap;		/* power of two, or 0 */
	size_t n;
	int32_t *touched;	/* pids with samples in the frame being added */
	size_t n_touched, touched_cap;
	struct metrics_proc *top;	/* top N, most samples first */
	size_t n_top;
	unsigned top_max;
	uint64_t other;
};

/* Totals since start: what the exported counters show. */
struct metrics_acc {
	char version[32];
	uint64_t frames;	/* frames added */
	struct counts tot;
	uint64_t est[3];	/* loads, stores, other, each x period */
	uint64_t cpu_unknown;	/* CPU node unknown (node, matrix series) */
	uint64_t mem_unknown;	/* page's node unknown */
	uint64_t cpu_series_unknown;	/* the CPU series' "unknown" CPU */
	/* Indexed by node id, n_node_ids of them (seen[] says which exist);
	 * matrix row i = CPU node i, column j < n_node_ids = memory node j,
	 * column n_node_ids = memory node unknown. */
	size_t n_node_ids;
	bool *node_seen;
	struct metrics_node *nodes;
	uint64_t *matrix;
	/* Indexed by CPU id, n_cpu_ids of them. */
	size_t n_cpu_ids;
	bool *cpu_seen;
	struct metrics_cpu *cpus;
	uint64_t collector_ns;
	uint64_t mig[METRICS_MIG__COUNT];
	struct metrics_procs procs;
	/* From the latest frame. */
	bool have_frame;
	uint64_t period;
	double imbalance;	/* < 0: none */
	uint64_t tracked;
	char source[16];
	char *events;		/* comma-separated */
};

/* What one exposition shows: copies, never pointers into the
 * accumulator.  refs is guarded by the exporter's lock. */
struct metrics_snap {
	unsigned refs;
	bool have_frame;
	uint64_t frames;
	struct counts tot;
	uint64_t est[3];
	uint64_t cpu_unknown;
	uint64_t mem_unknown;
	uint64_t cpu_series_unknown;
	size_t n_nodes;
	struct metrics_node *nodes;	/* ascending node */
	uint64_t *matrix;		/* n_nodes x (n_nodes + 1) */
	size_t n_cpus;
	struct metrics_cpu *cpus;	/* ascending cpu */
	size_t n_procs;
	struct metrics_proc *procs;	/* most samples first */
	uint64_t procs_other;
	uint64_t collector_ns;
	uint64_t mig[METRICS_MIG__COUNT];
	uint64_t period;
	double imbalance;
	uint64_t tracked;
	char version[32];
	char source[16];
	char *events;
};

/* metrics_procs.c: the accumulator's process table. */
int metrics_procs_init(struct metrics_procs *p, unsigned top_max);
void metrics_procs_fini(struct metrics_procs *p);
/* Adds a frame's threads (by pid) and names its targets; frame_no is
 * acc->frames after this frame.  0 or -ENOMEM. */
int metrics_procs_add(struct metrics_procs *p, const struct frame *f,
		      uint64_t frame_no);

/* The exporter. */
struct metrics {
	struct metrics_acc *acc;	/* UI thread only */
	pthread_mutex_t lock;
	struct metrics_snap *cur;	/* under lock; never NULL */
	struct MHD_Daemon *daemon;
	char listen_text[64];
	const char *file;
	int file_err;			/* first write error, -errno */
	char file_why[256];
	bool file_failing;		/* the last write failed */
};

/* metrics.c: the latest snapshot with a reference, and its release. */
struct metrics_snap *metrics_get(struct metrics *m);
void metrics_put(struct metrics *m, struct metrics_snap *s);

/* metrics_http.c: the endpoint.  0 or -errno with one line in err. */
int metrics_http_start(struct metrics *m, const struct cli_listen *l,
		       char *err, size_t errlen);
void metrics_http_stop(struct metrics *m);

/* metrics_file.c: writes text to path through a temporary file in the
 * same folder and rename().  0 or -errno with the reason in why. */
int metrics_file_write(const char *path, const char *text, size_t len,
		       char *why, size_t whylen);
/* Whether a temporary file can be made beside path.  0 or -errno. */
int metrics_file_check(const char *path, char *why, size_t whylen);

#endif
