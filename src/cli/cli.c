#include "config.h"

/*
 * Command-line parsing.  Main thread, before any other thread exists
 * (getopt_long keeps its state in globals; cli_parse resets it).
 *
 * The option table below is the contract man/memtop.1 documents
 * (OPTIONS), which tests and scripts rely on.  Parsing never prints and
 * never exits: a usage error is one line in err and the return value 2,
 * so main() decides where the message goes.
 */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "cli.h"
#include "cli_int.h"
#include "frame.h"
#include "granularity.h"

#define CLI_MAX_PERIOD (UINT64_C(1) << 62)
/* A page table beyond 2^32 entries would not fit in memory anyway. */
#define CLI_MAX_PAGES (UINT64_C(1) << 32)
/* pid_max's ceiling (PID_MAX_LIMIT, include/linux/threads.h). */
#define CLI_MAX_PROCESSES (UINT64_C(1) << 22)

/* Long-only options take values above any char so they never collide. */
enum {
	CLI_OPT_JSON = 256,
	CLI_OPT_RECORD,
	CLI_OPT_LOG,
	CLI_OPT_DEMO,
	CLI_OPT_LIST_EVENTS,
	CLI_OPT_DRY_RUN,
	CLI_OPT_MAX_PAGES,
	CLI_OPT_FORCE,
	CLI_OPT_GRANULARITY,
	CLI_OPT_MIGRATE_HOT,
	CLI_OPT_LDLAT,
	CLI_OPT_MAX_PROCESSES,
	CLI_OPT_LISTEN,
	CLI_OPT_METRICS_FILE,
	CLI_OPT_METRICS_TOP,
	CLI_OPT_QUIET,
	CLI_OPT_REARM,
	CLI_OPT_HEAP,
};

/*
 * '+' stops at the first non-option (a command must follow "--"); the
 * leading ':' makes a missing argument return ':' instead of '?'.
 */
static const char cli_short_opts[] = "+:p:e:c:d:n:bk:s:o:i:aC:G:Vh";

static const struct option cli_long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "source", required_argument, NULL, 'e' },
	{ "period", required_argument, NULL, 'c' },
	{ "delay", required_argument, NULL, 'd' },
	{ "iterations", required_argument, NULL, 'n' },
	{ "batch", no_argument, NULL, 'b' },
	{ "json", no_argument, NULL, CLI_OPT_JSON },
	{ "top", required_argument, NULL, 'k' },
	{ "sort", required_argument, NULL, 's' },
	{ "record", required_argument, NULL, CLI_OPT_RECORD },
	{ "output", required_argument, NULL, 'o' },
	{ "log", required_argument, NULL, CLI_OPT_LOG },
	{ "input", required_argument, NULL, 'i' },
	{ "demo", no_argument, NULL, CLI_OPT_DEMO },
	{ "list-events", no_argument, NULL, CLI_OPT_LIST_EVENTS },
	{ "dry-run", no_argument, NULL, CLI_OPT_DRY_RUN },
	{ "max-pages", required_argument, NULL, CLI_OPT_MAX_PAGES },
	{ "force", no_argument, NULL, CLI_OPT_FORCE },
	{ "granularity", required_argument, NULL, CLI_OPT_GRANULARITY },
	{ "migrate-hot", required_argument, NULL, CLI_OPT_MIGRATE_HOT },
	{ "ldlat", required_argument, NULL, CLI_OPT_LDLAT },
	{ "rearm", optional_argument, NULL, CLI_OPT_REARM },
	{ "heap-objects", optional_argument, NULL, CLI_OPT_HEAP },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "cgroup", required_argument, NULL, 'G' },
	{ "max-processes", required_argument, NULL, CLI_OPT_MAX_PROCESSES },
	{ "listen", required_argument, NULL, CLI_OPT_LISTEN },
	{ "metrics-file", required_argument, NULL, CLI_OPT_METRICS_FILE },
	{ "metrics-top", required_argument, NULL, CLI_OPT_METRICS_TOP },
	{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * Every option that can decide the run mode, by mode; a conflict names
 * the first two given in this order.  Exactly one of them may be given.
 */
static const char *const cli_mode_names[] = {
	[MODE_PIDS] = "-p",
	[MODE_COMMAND] = "-- COMMAND",
	[MODE_SYSTEM] = "-a/-G",
	[MODE_DEMO] = "--demo",
	[MODE_REPLAY] = "-i",
	[MODE_LIST_EVENTS] = "--list-events",
	[MODE_DRY_RUN] = "--dry-run",
	[MODE_HELP] = "-h",
	[MODE_VERSION] = "-V",
};

#define CLI_N_MODES ARRAY_SIZE(cli_mode_names)

/*
 * The argv element getopt_long was working on when it failed: with '+' it
 * never permutes, so that is the element optind pointed at before the
 * call.  A short option may sit inside a cluster like -bx; optopt names it.
 */
static const char *
cli_failed_elem(char **argv, int idx)
{
	return argv[idx] ? argv[idx] : "";
}

static bool
cli_is_long(const char *elem)
{
	return elem[0] == '-' && elem[1] == '-' && elem[2] != '\0';
}

/*
 * Explains a '?' from getopt_long.  For "--name[=value]" it tells an
 * unknown name from an ambiguous abbreviation and from an argument given
 * to an option that takes none.
 */
static int
cli_bad_option(const char *elem, char *err, size_t errlen)
{
	const struct option *match = NULL;
	size_t len;
	int n_match = 0;

	if (!cli_is_long(elem)) {
		if (optopt > 0 && optopt < 256 && isgraph(optopt))
			return cli_error(err, errlen, "unknown option '-%c'",
					 optopt);
		return cli_error(err, errlen, "unknown option '%s'", elem);
	}
	len = strcspn(elem + 2, "=");
	for (const struct option *o = cli_long_opts; o->name; o++) {
		if (strncmp(o->name, elem + 2, len) != 0)
			continue;
		if (o->name[len] == '\0') {
			match = o;
			n_match = 1;
			break;
		}
		match = o;
		n_match++;
	}
	if (n_match > 1)
		return cli_error(err, errlen, "ambiguous option '%.*s'",
				 (int)len + 2, elem);
	if (n_match == 1 && match->has_arg == no_argument &&
	    elem[2 + len] == '=')
		return cli_error(err, errlen, "--%s: takes no argument",
				 match->name);
	return cli_error(err, errlen, "unknown option '%.*s'", (int)len + 2,
			 elem);
}

/* Names the option whose argument is missing (getopt_long returned ':'). */
static int
cli_missing_arg(const char *elem, char *err, size_t errlen)
{
	if (cli_is_long(elem))
		return cli_error(err, errlen, "%.*s: missing argument",
				 (int)strcspn(elem, "="), elem);
	return cli_error(err, errlen, "-%c: missing argument", optopt);
}

/* The fleet metrics' options (--listen, --metrics-file, --metrics-top)
 * and --quiet. */
static int
cli_apply_metrics(int c, const char *arg, struct options *opt, char *err,
		  size_t errlen)
{
	uint64_t v;
	int rc;

	switch (c) {
	case CLI_OPT_LISTEN:
		return cli_parse_listen(arg, opt, err, errlen);
	case CLI_OPT_METRICS_FILE:
		return cli_parse_path("--metrics-file", arg,
				      &opt->metrics_file, err, errlen);
	case CLI_OPT_METRICS_TOP:
		rc = cli_parse_ranged("--metrics-top", "process count", arg,
				      false, 0, CLI_MAX_METRICS_TOP, &v, err,
				      errlen);
		if (rc == 0) {
			opt->metrics_top = (unsigned)v;
			opt->metrics_top_set = true;
		}
		return rc;
	}
	opt->quiet = true;
	return 0;
}

/*
 * Applies one option returned by getopt_long.  Long: one case per option
 * of the table above, which reads best in one place.
 */
static int
cli_apply(int c, const char *arg, struct options *opt, bool *mode_seen,
	  char *err, size_t errlen)
{
	uint64_t v;
	int rc;

	switch (c) {
	case 'p':
		mode_seen[MODE_PIDS] = true;
		return cli_parse_pids(arg, opt, err, errlen);
	case 'e':
		return cli_parse_source(arg, opt, err, errlen);
	case 'c':
		rc = cli_parse_ranged("-c", "period", arg, true, 1,
				      CLI_MAX_PERIOD, &v, err, errlen);
		if (rc == 0)
			opt->period = v;
		return rc;
	case 'd':
		return cli_parse_delay(arg, opt, err, errlen);
	case 'n':
		rc = cli_parse_ranged("-n", "iteration count", arg, false, 1,
				      LONG_MAX, &v, err, errlen);
		if (rc == 0)
			opt->iterations = (long)v;
		return rc;
	case 'b':
		opt->batch = true;
		return 0;
	case CLI_OPT_JSON:
		opt->json = true;
		return 0;
	case 'k':
		rc = cli_parse_ranged("-k", "page count", arg, false, 1,
				      FRAME_TOP_MAX, &v, err, errlen);
		if (rc == 0)
			opt->top = (unsigned)v;
		return rc;
	case 's':
		return cli_parse_sort(arg, opt, err, errlen);
	case CLI_OPT_RECORD:
		return cli_parse_path("--record", arg, &opt->record_path, err,
				      errlen);
	case CLI_OPT_FORCE:
		opt->force = true;
		return 0;
	case 'o':
		return cli_parse_path("-o", arg, &opt->output_path, err,
				      errlen);
	case CLI_OPT_LOG:
		return cli_parse_path("--log", arg, &opt->log_path, err,
				      errlen);
	case 'i':
		mode_seen[MODE_REPLAY] = true;
		return cli_parse_path("-i", arg, &opt->input_path, err,
				      errlen);
	case CLI_OPT_DEMO:
		mode_seen[MODE_DEMO] = true;
		return 0;
	case CLI_OPT_LIST_EVENTS:
		mode_seen[MODE_LIST_EVENTS] = true;
		return 0;
	case CLI_OPT_DRY_RUN:
		mode_seen[MODE_DRY_RUN] = true;
		return 0;
	case CLI_OPT_MAX_PAGES:
		rc = cli_parse_ranged("--max-pages", "page count", arg, false,
				      1, CLI_MAX_PAGES, &v, err, errlen);
		if (rc == 0)
			opt->max_pages = (size_t)v;
		return rc;
	case CLI_OPT_GRANULARITY:
		if (granularity_parse(arg, &opt->page_shift) < 0)
			return cli_error(err, errlen, "--granularity: unknown "
					 "page size '%s' (4k, 2m, 1g)", arg);
		return 0;
	case CLI_OPT_MIGRATE_HOT:
		rc = cli_parse_ranged("--migrate-hot", "page count", arg, false,
				      1, FRAME_TOP_MAX, &v, err, errlen);
		if (rc == 0)
			opt->migrate_hot = (size_t)v;
		return rc;
	case CLI_OPT_LDLAT:
		/* Intel's ldlat format is config1:0-15. */
		rc = cli_parse_ranged("--ldlat", "latency", arg, false, 1,
				      65535, &v, err, errlen);
		if (rc == 0)
			opt->ldlat = (unsigned)v;
		return rc;
	case CLI_OPT_REARM:
		return cli_parse_rearm(arg, opt, err, errlen);
	case CLI_OPT_HEAP:
		return cli_parse_heap(arg, opt, err, errlen);
	case 'a':
		mode_seen[MODE_SYSTEM] = true;
		opt->all_cpus = true;
		return 0;
	case 'C':
		return cli_parse_cpus(arg, opt, err, errlen);
	case 'G':
		mode_seen[MODE_SYSTEM] = true;
		return cli_parse_cgroups(arg, opt, err, errlen);
	case CLI_OPT_MAX_PROCESSES:
		rc = cli_parse_ranged("--max-processes", "process count", arg,
				      false, 1, CLI_MAX_PROCESSES, &v, err,
				      errlen);
		if (rc == 0)
			opt->max_processes = (size_t)v;
		return rc;
	case CLI_OPT_LISTEN:
	case CLI_OPT_METRICS_FILE:
	case CLI_OPT_METRICS_TOP:
	case CLI_OPT_QUIET:
		return cli_apply_metrics(c, arg, opt, err, errlen);
	case 'h':
		mode_seen[MODE_HELP] = true;
		return 0;
	case 'V':
		mode_seen[MODE_VERSION] = true;
		return 0;
	}
	return cli_error(err, errlen, "internal error: option %d", c);
}

static int
cli_copy_command(char **args, int n, struct options *opt, char *err,
		 size_t errlen)
{
	opt->command = calloc((size_t)n + 1, sizeof(*opt->command));
	if (!opt->command)
		return cli_error(err, errlen, "--: out of memory");
	for (int i = 0; i < n; i++)
		opt->command[i] = args[i];
	return 0;
}

/* --listen, --metrics-file, --metrics-top and --quiet together. */
static int
cli_check_metrics(const struct options *opt, char *err, size_t errlen)
{
	if (opt->quiet && !opt->batch)
		return cli_error(err, errlen, "--quiet needs -b");
	if (opt->quiet && opt->output_path)
		return cli_error(err, errlen,
				 "--quiet and -o cannot be combined");
	if (opt->metrics_top_set && !opt->listen.family &&
	    !opt->metrics_file)
		return cli_error(err, errlen, "--metrics-top needs --listen "
				 "or --metrics-file");
	return 0;
}

/* Picks the mode from the mode options seen and checks combinations. */
static int
cli_check(struct options *opt, const bool *mode_seen, char *err,
	  size_t errlen)
{
	int first = -1;

	/* --dry-run -a / -G: which CPUs a whole-machine view opens on. */
	opt->dry_run_system = mode_seen[MODE_DRY_RUN] && mode_seen[MODE_SYSTEM];
	for (size_t i = 0; i < CLI_N_MODES; i++) {
		if (!mode_seen[i] || (i == MODE_SYSTEM && opt->dry_run_system))
			continue;
		if (first >= 0)
			return cli_error(err, errlen,
					 "%s and %s cannot be combined",
					 cli_mode_names[first],
					 cli_mode_names[i]);
		first = (int)i;
	}
	if (first < 0)
		return cli_error(err, errlen,
				 "no target: use -p PID, -- COMMAND, --demo "
				 "or -i FILE");
	opt->mode = (enum run_mode)first;

	/* perf's -C: which CPUs of a whole-machine view. */
	if (opt->cpus && opt->mode != MODE_SYSTEM && !opt->dry_run_system)
		return cli_error(err, errlen, "-C needs -a or -G (it narrows "
				 "the CPUs watched for every process)");

	/* --dry-run and --list-events print once; JSON needs no batch. */
	if (opt->json && !opt->batch &&
	    (opt->mode == MODE_PIDS || opt->mode == MODE_COMMAND ||
	     opt->mode == MODE_SYSTEM ||
	     opt->mode == MODE_DEMO || opt->mode == MODE_REPLAY))
		return cli_error(err, errlen, "--json needs -b");
	if (opt->output_path && !opt->batch)
		return cli_error(err, errlen, "-o needs -b");
	if (opt->force && !opt->record_path)
		return cli_error(err, errlen, "--force needs --record");
	if (opt->record_path && opt->mode == MODE_REPLAY)
		return cli_error(err, errlen,
				 "--record cannot be combined with -i");
	/* The TUI moves pages with m and M, after a confirmation. */
	if (opt->migrate_hot && !opt->batch)
		return cli_error(err, errlen, "--migrate-hot needs -b (in the "
				 "TUI, press M)");
	if (opt->migrate_hot && opt->mode == MODE_REPLAY)
		return cli_error(err, errlen, "--migrate-hot cannot move the "
				 "pages of a recording (-i)");
	if (cli_check_rearm(opt, err, errlen) ||
	    cli_check_heap(opt, err, errlen))
		return 2;
	return cli_check_metrics(opt, err, errlen);
}

int
cli_parse(int argc, char **argv, struct options *opt, char *err,
	  size_t errlen)
{
	bool mode_seen[CLI_N_MODES] = { false };
	bool terminated = false;
	int rc = 0;

	memset(opt, 0, sizeof(*opt));
	opt->mode = MODE_HELP;
	opt->source = SOURCE_AUTO;
	opt->delay = 1.0;
	opt->top = CLI_DEFAULT_TOP;
	opt->sort = SORT_SAMPLES;
	opt->metrics_top = CLI_DEFAULT_METRICS_TOP;
	if (err && errlen)
		err[0] = '\0';
	if (argc < 1 || !argv)
		return cli_error(err, errlen, "empty argument vector");

	/* optind 0 makes glibc reinitialise, dropping any half-read cluster. */
	optind = 0;
	opterr = 0;
	for (;;) {
		int before = optind ? optind : 1;
		int c = getopt_long(argc, argv, cli_short_opts, cli_long_opts,
				    NULL);

		if (c == -1) {
			terminated = optind == before + 1 && before < argc &&
				     strcmp(argv[before], "--") == 0;
			break;
		}
		if (c == '?') {
			rc = cli_bad_option(cli_failed_elem(argv, before), err,
					    errlen);
			goto out_err;
		}
		if (c == ':') {
			rc = cli_missing_arg(cli_failed_elem(argv, before),
					     err, errlen);
			goto out_err;
		}
		rc = cli_apply(c, optarg, opt, mode_seen, err, errlen);
		if (rc)
			goto out_err;
	}

	if (optind < argc && !terminated) {
		rc = cli_error(err, errlen,
			       "unexpected argument '%s' (use -- before a "
			       "command)", argv[optind]);
		goto out_err;
	}
	if (terminated) {
		if (optind >= argc) {
			rc = cli_error(err, errlen, "--: missing command");
			goto out_err;
		}
		mode_seen[MODE_COMMAND] = true;
		rc = cli_copy_command(argv + optind, argc - optind, opt, err,
				      errlen);
		if (rc)
			goto out_err;
	}
	rc = cli_check(opt, mode_seen, err, errlen);
	if (rc)
		goto out_err;
	return 0;

out_err:
	cli_fini(opt);
	return rc;
}

void
cli_fini(struct options *opt)
{
	if (!opt)
		return;
	free(opt->pids);
	opt->pids = NULL;
	opt->n_pids = 0;
	free(opt->command);
	opt->command = NULL;
	free(opt->cpus);
	opt->cpus = NULL;
	for (size_t i = 0; i < opt->n_cgroups; i++)
		free(opt->cgroups[i]);
	free(opt->cgroups);
	opt->cgroups = NULL;
	opt->n_cgroups = 0;
}
