/*
 * Inside the cli room: the option-value parsers of cli_values.c, used by
 * cli.c.  Each returns 0, or 2 with a one-line message in err (control
 * characters of what the user typed shown as '?').
 */
#ifndef MEMTOP_CLI_INT_H
#define MEMTOP_CLI_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct options;

/* Formats the message into err; returns 2. */
int cli_error(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Unsigned integer, decimal or 0x hex when allow_hex; no sign, no
 * whitespace, no trailing text.  0 or -EINVAL / -ERANGE. */
int cli_parse_u64(const char *s, bool allow_hex, uint64_t *out);
/* An integer in [lo, hi] for opt_name; what names it in the message. */
int cli_parse_ranged(const char *opt_name, const char *what, const char *arg,
		     bool allow_hex, uint64_t lo, uint64_t hi, uint64_t *out,
		     char *err, size_t errlen);
/* -p: a comma-separated list of distinct positive pids into opt->pids. */
int cli_parse_pids(const char *list, struct options *opt, char *err,
		   size_t errlen);
/* -e: auto, pebs, ibs, damon or faults. */
int cli_parse_source(const char *arg, struct options *opt, char *err,
		     size_t errlen);
/* -d: seconds, within the delay limits. */
int cli_parse_delay(const char *arg, struct options *opt, char *err,
		    size_t errlen);
/* --rearm[=SECS]: opt->rearm_s, -1 (every frame) or SECS. */
int cli_parse_rearm(const char *arg, struct options *opt, char *err,
		    size_t errlen);
int cli_check_rearm(struct options *opt, char *err, size_t errlen);
/* --heap-objects[=N|SIZE]: opt->heap (cli_heap.c). */
int cli_parse_heap(const char *arg, struct options *opt, char *err,
		   size_t errlen);
int cli_check_heap(const struct options *opt, char *err, size_t errlen);
/* -s: a sort key's name. */
int cli_parse_sort(const char *arg, struct options *opt, char *err,
		   size_t errlen);
/* -C: a CPU list in perf's syntax into opt->cpus. */
int cli_parse_cpus(const char *arg, struct options *opt, char *err,
		   size_t errlen);
/* -G: comma-separated cgroup names, added to opt->cgroups. */
int cli_parse_cgroups(const char *arg, struct options *opt, char *err,
		      size_t errlen);
/* --listen: PORT (binds 127.0.0.1), IPV4:PORT or [IPV6]:PORT. */
int cli_parse_listen(const char *arg, struct options *opt, char *err,
		     size_t errlen);
/* A file name option: not empty. */
int cli_parse_path(const char *opt_name, const char *arg, const char **out,
		   char *err, size_t errlen);

#endif
