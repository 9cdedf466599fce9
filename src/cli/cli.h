/* Command-line parsing.  Main thread, before anything starts. */
#ifndef MEMTOP_CLI_H
#define MEMTOP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "heapopt.h"
#include "sortkey.h"
#include "source_choice.h"

/* --listen [ADDR:]PORT, parsed: where the metrics endpoint binds. */
struct cli_listen {
	int family;			/* AF_INET, AF_INET6; 0 = no --listen */
	unsigned char addr[16];		/* network byte order (4 or 16 bytes) */
	uint16_t port;			/* 1..65535 */
	char text[64];			/* "127.0.0.1:9464", "[::1]:9464" */
};

enum run_mode {
	MODE_PIDS,		/* -p */
	MODE_COMMAND,		/* -- CMD */
	MODE_SYSTEM,		/* -a, -G: every process (of those cgroups) */
	MODE_DEMO,		/* --demo */
	MODE_REPLAY,		/* -i FILE */
	MODE_LIST_EVENTS,
	MODE_DRY_RUN,
	MODE_HELP,
	MODE_VERSION,
};

struct cpulist;

struct options {
	enum run_mode mode;
	enum source_choice source;
	uint64_t period;		/* 0 = source default */
	double delay;			/* seconds, > 0 */
	long iterations;		/* 0 = unlimited */
	bool batch;
	bool json;
	unsigned top;			/* pages per frame in batch output */
	enum sort_key sort;
	size_t max_pages;		/* 0 = unlimited */
	unsigned page_shift;		/* --granularity: 12, 21, 30; 0 = 12 */
	size_t migrate_hot;		/* pages moved after each frame; 0 = off */
	unsigned ldlat;			/* pebs load latency, cycles; 0 = 30 */
	/* --rearm[=SECS], soft-dirty re-arm (faults): 0 = off, < 0 = at
	 * every frame, else every SECS. */
	double rearm_s;
	struct heap_opts heap;		/* --heap-objects[=N|SIZE] */
	const char *record_path;
	bool force;			/* --record may replace a file */
	const char *output_path;
	const char *log_path;
	const char *input_path;
	pid_t *pids;			/* MODE_PIDS; n_pids of them */
	size_t n_pids;
	char **command;			/* MODE_COMMAND; NULL-terminated, argv */
	bool all_cpus;			/* -a */
	bool dry_run_system;		/* --dry-run with -a or -G */
	struct cpulist *cpus;		/* -C; NULL = every online CPU */
	char **cgroups;			/* -G names as typed; NULL-terminated */
	size_t n_cgroups;
	size_t max_processes;		/* process rows kept; 0 = default */
	struct cli_listen listen;	/* --listen; family 0 when not given */
	const char *metrics_file;	/* --metrics-file */
	unsigned metrics_top;		/* --metrics-top: processes exported */
	bool metrics_top_set;		/* --metrics-top was given */
	bool quiet;			/* --quiet: batch writes no frames */
};

#define CLI_DEFAULT_TOP 20
#define CLI_DEFAULT_METRICS_TOP 20
#define CLI_MAX_METRICS_TOP 1000

/*
 * Parses argv into opt.  Returns 0 on success, 2 on a usage error with a
 * one-line message (no trailing newline) in err.  opt->pids, cpus and
 * cgroups are heap memory; release with cli_fini().
 */
int cli_parse(int argc, char **argv, struct options *opt, char *err,
	      size_t errlen);
void cli_fini(struct options *opt);
/* The target in words, for the interfaces: "pid 4242", "./bench -t 16",
 * "demo workload", the -i file, or scope (what -a and -G watch, "all
 * CPUs"; NULL: that). */
void cli_describe_target(const struct options *opt, const char *scope,
			 char *buf, size_t len);
void cli_usage(FILE *out);

#endif
