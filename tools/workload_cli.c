#include "config.h"

/* memtop-workload command line.  Bad input is one line on stderr and a
 * -EINVAL return, which main() turns into exit status 2. */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

enum {
	OPT_PAGES = 0x100,
	OPT_HOT,
	OPT_SKEW,
	OPT_THREADS,
	OPT_LATE_THREADS,
	OPT_LATE_DELAY,
	OPT_WRITE_RATIO,
	OPT_MODE,
	OPT_ROUNDS,
	OPT_DURATION,
	OPT_INTERVAL_MS,
	OPT_NODE,
	OPT_CPU_NODE,
	OPT_CPUS,
	OPT_PRINT_HOT,
	OPT_REPORT,
	OPT_START_FD,
	OPT_WAIT_SIGNAL,
	OPT_QUIET,
};

static const struct option workload_cli_longopts[] = {
	{ "pages",	  required_argument, NULL, OPT_PAGES },
	{ "hot",	  required_argument, NULL, OPT_HOT },
	{ "skew",	  required_argument, NULL, OPT_SKEW },
	{ "threads",	  required_argument, NULL, OPT_THREADS },
	{ "late-threads", required_argument, NULL, OPT_LATE_THREADS },
	{ "late-delay",	  required_argument, NULL, OPT_LATE_DELAY },
	{ "write-ratio",  required_argument, NULL, OPT_WRITE_RATIO },
	{ "mode",	  required_argument, NULL, OPT_MODE },
	{ "rounds",	  required_argument, NULL, OPT_ROUNDS },
	{ "duration",	  required_argument, NULL, OPT_DURATION },
	{ "interval-ms",  required_argument, NULL, OPT_INTERVAL_MS },
	{ "node",	  required_argument, NULL, OPT_NODE },
	{ "cpu-node",	  required_argument, NULL, OPT_CPU_NODE },
	{ "cpus",	  required_argument, NULL, OPT_CPUS },
	{ "print-hot",	  required_argument, NULL, OPT_PRINT_HOT },
	{ "report",	  required_argument, NULL, OPT_REPORT },
	{ "start-fd",	  required_argument, NULL, OPT_START_FD },
	{ "wait-signal",  no_argument,	     NULL, OPT_WAIT_SIGNAL },
	{ "quiet",	  no_argument,	     NULL, OPT_QUIET },
	{ "help",	  no_argument,	     NULL, 'h' },
	{ "version",	  no_argument,	     NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

void workload_cli_usage(FILE *out)
{
	fputs(
"Usage: memtop-workload [OPTIONS]\n"
"Make an exactly known number of page faults (or plain memory accesses) on a\n"
"known set of hot pages, for memtop's tests and --demo.\n"
"\n"
"  --pages N          working region size in 4 KiB pages (default 4096)\n"
"  --hot N            hot pages in the region (default 64); hot page j is\n"
"                     region page j*(pages/hot), so pages/hot must be >= 2\n"
"  --skew S           Zipf-like skew over hot pages (default 0 = uniform)\n"
"  --threads T        worker threads started at once (default 1)\n"
"  --late-threads L   extra workers started after --late-delay (default 0)\n"
"  --late-delay SECS  (default 1.0)\n"
"  --write-ratio R    fraction of touches that are writes, 0..1 (default 1)\n"
"  --mode M           touch | refault | access (default refault)\n"
"  --rounds N         rounds per worker (default 0 = unlimited)\n"
"  --duration SECS    stop after SECS (default 10; 0 = no time limit)\n"
"  --interval-ms MS   sleep between rounds in refault mode (default 10)\n"
"  --node N           bind the region to NUMA node N (mbind MPOL_BIND)\n"
"  --cpu-node N       run the workers on node N's CPUs\n"
"  --cpus LIST        pin workers round-robin to CPUs, e.g. 0,1 or 0-3\n"
"  --print-hot FILE   write hot page addresses (0x%lx, one a line) to FILE\n"
"                     (\"-\" = stdout) before waiting for the start\n"
"  --report FILE      write a JSON summary to FILE (\"-\" = stdout) at exit\n"
"  --start-fd FD      start work once a byte can be read from FD\n"
"  --wait-signal      start work on SIGUSR1\n"
"  --quiet            no progress lines on stderr\n"
"  -h, --help, -V, --version\n"
"\n"
"Ownership: with T threads and L late threads, worker i (late workers are\n"
"T..T+L-1) owns hot page j iff j %% (T+L) == i, and the region pages from\n"
"hot page j up to hot page j+1.  Only the owner touches a page.\n"
"\n"
"Modes:\n"
"  touch    each worker touches each of its region pages once (one fault a\n"
"           page), then the program idles until --duration ends (exits at\n"
"           once with --duration 0).\n"
"  refault  each round, a worker drops each of its hot pages with\n"
"           madvise(MADV_DONTNEED) and touches it once: one read or one\n"
"           write, chosen per page per round by a fixed-seed PRNG with\n"
"           --write-ratio, so exactly one fault per page per round.  With\n"
"           --skew S > 0 hot page j takes part in a round with probability\n"
"           1/(j+1)^S (same PRNG); with S = 0 every hot page faults exactly\n"
"           --rounds times.\n"
"  access   each worker touches its hot pages once, then each round makes\n"
"           65536 loads/stores on them, page j chosen with weight\n"
"           1/(j+1)^S; no faults after the first touch (for PMU sources).\n"
"\n"
"The program ends when every started worker has finished its rounds (and\n"
"late workers have run), or when --duration elapses, or on SIGTERM, SIGINT\n"
"or SIGHUP (exit status 128+signal).  The --report \"faults\" of a hot page\n"
"is the number of fault-making touches the generator made on it: what a\n"
"page-fault sampler should see there.\n",
		out);
}

static int workload_cli_error(const char *opt, const char *arg,
			      const char *why)
{
	fprintf(stderr, "memtop-workload: --%s '%s': %s; see --help\n",
		opt, arg, why);
	return -EINVAL;
}

static int workload_cli_ulong(const char *opt, const char *arg,
			      unsigned long min, unsigned long max,
			      unsigned long *out)
{
	unsigned long long val;
	char *end;

	if (arg[0] == '\0' || arg[0] == '-' || arg[0] == '+')
		return workload_cli_error(opt, arg, "not a number");
	errno = 0;
	val = strtoull(arg, &end, 0);
	if (*end != '\0')
		return workload_cli_error(opt, arg, "not a number");
	if (errno == ERANGE || val < min || val > max) {
		char why[80];

		snprintf(why, sizeof(why), "must be between %lu and %lu",
			 min, max);
		return workload_cli_error(opt, arg, why);
	}
	*out = (unsigned long)val;
	return 0;
}

static int workload_cli_double(const char *opt, const char *arg,
			       double min, double max, double *out)
{
	double val;
	char *end;

	if (arg[0] == '\0')
		return workload_cli_error(opt, arg, "not a number");
	errno = 0;
	val = strtod(arg, &end);
	if (*end != '\0' || errno == ERANGE || !isfinite(val))
		return workload_cli_error(opt, arg, "not a number");
	if (val < min || val > max) {
		char why[80];

		snprintf(why, sizeof(why), "must be between %g and %g",
			 min, max);
		return workload_cli_error(opt, arg, why);
	}
	*out = val;
	return 0;
}

static int workload_cli_mode(const char *arg, enum workload_mode *mode)
{
	if (strcmp(arg, "touch") == 0)
		*mode = WORKLOAD_MODE_TOUCH;
	else if (strcmp(arg, "refault") == 0)
		*mode = WORKLOAD_MODE_REFAULT;
	else if (strcmp(arg, "access") == 0)
		*mode = WORKLOAD_MODE_ACCESS;
	else
		return workload_cli_error("mode", arg,
					  "expected touch, refault or access");
	return 0;
}

/* LIST = item[,item]..., item = CPU or FIRST-LAST.  Existence of the CPUs
 * is checked later, against the machine. */
static int workload_cli_cpus(struct workload_opts *opts, const char *arg)
{
	unsigned int *cpus = NULL;
	unsigned int nr = 0;
	const char *p = arg;

	for (;;) {
		unsigned long first, last, cpu;
		char *end;

		if (*p < '0' || *p > '9')
			goto out_bad;
		first = strtoul(p, &end, 10);
		last = first;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				goto out_bad;
			last = strtoul(p, &end, 10);
		}
		if (first > last || last >= WORKLOAD_MAX_CPUS)
			goto out_bad;
		for (cpu = first; cpu <= last; cpu++) {
			unsigned int *grown;

			if (nr >= WORKLOAD_MAX_CPUS)
				goto out_bad;
			grown = realloc(cpus, (nr + 1) * sizeof(*cpus));
			if (!grown) {
				free(cpus);
				return workload_cli_error("cpus", arg,
							  "out of memory");
			}
			cpus = grown;
			cpus[nr++] = (unsigned int)cpu;
		}
		if (*end == '\0')
			break;
		if (*end != ',')
			goto out_bad;
		p = end + 1;
	}
	free(opts->cpus);
	opts->cpus = cpus;
	opts->nr_cpus = nr;
	return 0;

out_bad:
	free(cpus);
	return workload_cli_error("cpus", arg,
				  "expected a CPU list such as 0,1 or 0-3");
}

static void workload_cli_defaults(struct workload_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->pages = 4096;
	opts->hot = 64;
	opts->threads = 1;
	opts->late_delay_s = 1.0;
	opts->write_ratio = 1.0;
	opts->mode = WORKLOAD_MODE_REFAULT;
	opts->duration_s = 10.0;
	opts->interval_ms = 10;
	opts->node = -1;
	opts->cpu_node = -1;
	opts->start_fd = -1;
}

/* Cross-option rules, after every option has been read. */
static int workload_cli_check(const struct workload_opts *opts)
{
	if (opts->hot > opts->pages) {
		fprintf(stderr, "memtop-workload: --hot %lu exceeds --pages "
			"%lu; see --help\n", opts->hot, opts->pages);
		return -EINVAL;
	}
	if (opts->hot > 1 && opts->pages / opts->hot < 2) {
		fprintf(stderr, "memtop-workload: --hot %lu needs --pages >= "
			"%lu so hot pages are not adjacent; see --help\n",
			opts->hot, 2 * opts->hot);
		return -EINVAL;
	}
	if (opts->start_fd >= 0 && opts->wait_signal) {
		fputs("memtop-workload: --start-fd and --wait-signal exclude "
		      "each other; see --help\n", stderr);
		return -EINVAL;
	}
	if (opts->nr_cpus && opts->cpu_node >= 0) {
		fputs("memtop-workload: --cpus and --cpu-node exclude each "
		      "other; see --help\n", stderr);
		return -EINVAL;
	}
	return 0;
}

/* Returns 0 to run, 1 when --help or --version was printed, -EINVAL on
 * bad input (already reported).  Long because it is the one switch over
 * the option table, a case of a few lines per option. */
int workload_cli_parse(struct workload_opts *opts, int argc, char **argv)
{
	unsigned long val;
	int ret = 0;
	int c;

	workload_cli_defaults(opts);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", workload_cli_longopts,
				NULL)) != -1) {
		switch (c) {
		case OPT_PAGES:
			ret = workload_cli_ulong("pages", optarg, 1,
						 WORKLOAD_MAX_PAGES,
						 &opts->pages);
			break;
		case OPT_HOT:
			ret = workload_cli_ulong("hot", optarg, 1,
						 WORKLOAD_MAX_PAGES,
						 &opts->hot);
			break;
		case OPT_SKEW:
			ret = workload_cli_double("skew", optarg, 0, 16,
						  &opts->skew);
			break;
		case OPT_THREADS:
			ret = workload_cli_ulong("threads", optarg, 1,
						 WORKLOAD_MAX_THREADS, &val);
			opts->threads = (unsigned int)val;
			break;
		case OPT_LATE_THREADS:
			ret = workload_cli_ulong("late-threads", optarg, 0,
						 WORKLOAD_MAX_THREADS, &val);
			opts->late_threads = (unsigned int)val;
			break;
		case OPT_LATE_DELAY:
			ret = workload_cli_double("late-delay", optarg, 0,
						  1e6, &opts->late_delay_s);
			break;
		case OPT_WRITE_RATIO:
			ret = workload_cli_double("write-ratio", optarg, 0, 1,
						  &opts->write_ratio);
			break;
		case OPT_MODE:
			ret = workload_cli_mode(optarg, &opts->mode);
			break;
		case OPT_ROUNDS:
			ret = workload_cli_ulong("rounds", optarg, 0,
						 ULONG_MAX, &val);
			opts->rounds = val;
			break;
		case OPT_DURATION:
			ret = workload_cli_double("duration", optarg, 0, 1e9,
						  &opts->duration_s);
			break;
		case OPT_INTERVAL_MS:
			ret = workload_cli_ulong("interval-ms", optarg, 0,
						 3600 * 1000, &val);
			opts->interval_ms = (unsigned int)val;
			break;
		case OPT_NODE:
			ret = workload_cli_ulong("node", optarg, 0, 4095,
						 &val);
			opts->node = (int)val;
			break;
		case OPT_CPU_NODE:
			ret = workload_cli_ulong("cpu-node", optarg, 0, 4095,
						 &val);
			opts->cpu_node = (int)val;
			break;
		case OPT_CPUS:
			ret = workload_cli_cpus(opts, optarg);
			break;
		case OPT_PRINT_HOT:
			opts->print_hot_path = optarg;
			break;
		case OPT_REPORT:
			opts->report_path = optarg;
			break;
		case OPT_START_FD:
			ret = workload_cli_ulong("start-fd", optarg, 0,
						 INT_MAX, &val);
			opts->start_fd = (int)val;
			break;
		case OPT_WAIT_SIGNAL:
			opts->wait_signal = true;
			break;
		case OPT_QUIET:
			opts->quiet = true;
			break;
		case 'h':
			workload_cli_usage(stdout);
			return 1;
		case 'V':
			printf("memtop-workload %s\n", MEMTOP_VERSION);
			return 1;
		case ':':
			fprintf(stderr, "memtop-workload: %s needs a value; "
				"see --help\n", argv[optind - 1]);
			return -EINVAL;
		default:
			fprintf(stderr, "memtop-workload: unknown option "
				"'%s'; see --help\n", argv[optind - 1]);
			return -EINVAL;
		}
		if (ret < 0)
			return ret;
	}
	if (optind < argc) {
		fprintf(stderr, "memtop-workload: unexpected argument '%s'; "
			"see --help\n", argv[optind]);
		return -EINVAL;
	}
	return workload_cli_check(opts);
}

void workload_cli_fini(struct workload_opts *opts)
{
	if (!opts)
		return;
	free(opts->cpus);
	opts->cpus = NULL;
	opts->nr_cpus = 0;
}
