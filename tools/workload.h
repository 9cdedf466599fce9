/* memtop-workload: a deterministic page-fault and memory-access generator.
 *
 * It is the target memtop's tests and --demo watch: it makes an exactly
 * known number of faults on a known set of hot pages and can print that
 * ground truth before (--print-hot) and after (--report) the run.  It is a
 * standalone program, not part of the memtop libraries.
 *
 * Layout of the work:
 *   region  = pages * 4 KiB, anonymous, private, THP disabled
 *   stride  = pages / hot; hot page j is region page j * stride
 *   slot j  = region pages [j * stride, (j + 1) * stride), the last slot
 *             also takes the remainder; slot j belongs to hot page j
 *   workers = threads early ones (0 .. T-1) and late ones (T .. T+L-1);
 *             worker i owns hot page j (and slot j) iff j % (T + L) == i
 * Ownership never changes, so every per-page counter has one writer.
 */
#ifndef MEMTOP_WORKLOAD_H
#define MEMTOP_WORKLOAD_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define WORKLOAD_PAGE_SIZE	4096UL
#define WORKLOAD_MAX_PAGES	(1UL << 26)
#define WORKLOAD_MAX_THREADS	1024U
#define WORKLOAD_MAX_CPUS	4096U

enum workload_mode {
	WORKLOAD_MODE_TOUCH,
	WORKLOAD_MODE_REFAULT,
	WORKLOAD_MODE_ACCESS,
};

/* Everything the command line sets; filled by workload_cli_parse(). */
struct workload_opts {
	unsigned long pages;
	unsigned long hot;
	double skew;
	unsigned int threads;
	unsigned int late_threads;
	double late_delay_s;
	double write_ratio;
	enum workload_mode mode;
	uint64_t rounds;		/* 0 = unlimited */
	double duration_s;		/* 0 = no time limit */
	unsigned int interval_ms;
	int node;			/* -1 = no binding */
	int cpu_node;			/* -1 = no node affinity */
	unsigned int *cpus;		/* --cpus list, round-robin */
	unsigned int nr_cpus;
	const char *print_hot_path;
	const char *report_path;
	int start_fd;			/* -1 = start at once */
	bool wait_signal;
	bool quiet;
};

/* Per hot page ground truth.  Written only by the owning worker while it
 * runs and read by the main thread after pthread_join(). */
struct workload_hot {
	uint64_t faults;	/* touches that found the page dropped */
	uint64_t reads;
	uint64_t writes;
};

struct workload;

/* One worker thread.  rounds and tid are, like the page counters, written
 * by the worker and read after join. */
struct workload_worker {
	struct workload *wl;
	unsigned int index;
	pthread_t thread;
	bool started;
	bool joined;
	bool late;
	bool pinned;
	cpu_set_t cpus;		/* affinity when pinned */
	int error;		/* 0 or -errno that ended the worker */
	pid_t tid;
	uint64_t start_ns;	/* CLOCK_MONOTONIC at the thread's start */
	uint64_t rounds;
	uint64_t rng;
	uint64_t touched_pages;	/* touch mode: region pages it touched */
};

struct workload {
	const struct workload_opts *opts;
	char *region;
	size_t region_len;
	unsigned long stride;		/* region pages per hot page */
	struct workload_hot *hot;	/* opts->hot entries */
	double *touch_prob;		/* refault mode: per hot page */
	struct workload_worker *workers;
	unsigned int nr_workers;

	/* stop is set under lock and broadcast on cond; workers read it
	 * without the lock between rounds and wait on cond (CLOCK_MONOTONIC)
	 * for the round interval. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_bool stop;
	bool sync_inited;

	int sig_fd;		/* signalfd: TERM, INT, HUP, USR1 */
	int done_fd;		/* eventfd: +1 per finished worker */
	int exit_signal;	/* signal that ended the run, 0 if none */
	double run_s;		/* workers' start to their join, seconds */
};

/* workload_cli.c */
int workload_cli_parse(struct workload_opts *opts, int argc, char **argv);
void workload_cli_fini(struct workload_opts *opts);
void workload_cli_usage(FILE *out);

/* workload_run.c */
int workload_init(struct workload *wl, const struct workload_opts *opts);
void workload_fini(struct workload *wl);
int workload_wait_start(struct workload *wl);
int workload_run(struct workload *wl);
void *workload_hot_addr(const struct workload *wl, unsigned long j);

/* workload_worker.c */
void *workload_worker_main(void *arg);

/* workload_report.c */
const char *workload_report_mode_name(enum workload_mode mode);
int workload_report_print_hot(const struct workload *wl, const char *path);
int workload_report_write(const struct workload *wl, const char *path);

#endif
