#include "config.h"

/*
 * cli_parse() against the contract of man/memtop.1 (OPTIONS): every option with
 * valid and invalid values, mode selection and conflicts.  Each row runs
 * a fresh parse, so the rows also prove getopt state is reset between
 * calls (some rows fail in the middle of a short-option cluster).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base.h"
#include "cli.h"
#include "cpulist.h"
#include "testlib.h"

#define MAX_ARGS 12

struct cli_case {
	const char *args[MAX_ARGS];	/* after argv[0]; NULL-terminated */
	int rc;
	/* rc 2: text err must contain (the option it is about) */
	const char *err_has;
	/* rc 0: expected fields; delay 0 means 1.0, top 0 means default */
	enum run_mode mode;
	enum source_choice source;
	uint64_t period;
	double delay;
	long iterations;
	bool batch, json;
	unsigned top;
	enum sort_key sort;
	size_t max_pages;
	size_t migrate_hot;
	double rearm_s;
	unsigned ldlat;
	const char *record, *output, *log, *input;
	bool force;
	int pids[4];			/* 0-terminated */
	const char *command[4];		/* NULL-terminated */
};

static const struct cli_case cli_cases[] = {
	/* targets and modes */
	{ { "-p", "42" }, 0, .mode = MODE_PIDS, .pids = { 42 } },
	{ { "--pid", "1,2,3" }, 0, .mode = MODE_PIDS, .pids = { 1, 2, 3 } },
	{ { "--pid=7" }, 0, .mode = MODE_PIDS, .pids = { 7 } },
	{ { "-p7", "-p", "8" }, 0, .mode = MODE_PIDS, .pids = { 7, 8 } },
	{ { "-p", "2147483647" }, 0, .mode = MODE_PIDS,
	  .pids = { 2147483647 } },
	{ { "--", "ls", "-l" }, 0, .mode = MODE_COMMAND,
	  .command = { "ls", "-l" } },
	{ { "-b", "--", "./bench", "-p", "3" }, 0, .mode = MODE_COMMAND,
	  .batch = true, .command = { "./bench", "-p", "3" } },
	/* "--" as -o's argument is a file name, the second one ends options */
	{ { "-b", "-o", "--", "--", "ls" }, 0, .mode = MODE_COMMAND,
	  .batch = true, .output = "--", .command = { "ls" } },
	{ { "--demo" }, 0, .mode = MODE_DEMO },
	{ { "-i", "perf.data" }, 0, .mode = MODE_REPLAY,
	  .input = "perf.data" },
	{ { "--input=x.data" }, 0, .mode = MODE_REPLAY, .input = "x.data" },
	{ { "--list-events" }, 0, .mode = MODE_LIST_EVENTS },
	{ { "--dry-run", "-e", "faults", "--json" }, 0, .mode = MODE_DRY_RUN,
	  .source = SOURCE_FAULTS, .json = true },
	{ { "-a" }, 0, .mode = MODE_SYSTEM },
	{ { "--all-cpus", "-C", "0-3,8" }, 0, .mode = MODE_SYSTEM },
	{ { "-G", "a,/b/c" }, 0, .mode = MODE_SYSTEM },
	{ { "-a", "-G", "x", "--cgroup=y", "-C1" }, 0, .mode = MODE_SYSTEM },
	{ { "-a", "--max-processes", "10" }, 0, .mode = MODE_SYSTEM },
	{ { "-h" }, 0, .mode = MODE_HELP },
	{ { "--help" }, 0, .mode = MODE_HELP },
	{ { "-V" }, 0, .mode = MODE_VERSION },
	{ { "--version" }, 0, .mode = MODE_VERSION },
	{ { NULL }, 2, "no target" },
	{ { "ls" }, 2, "unexpected argument 'ls' (use -- before a command)" },
	{ { "-p", "1", "ls" }, 2, "unexpected argument 'ls'" },
	{ { "--" }, 2, "--: missing command" },
	{ { "-p", "1", "--", "ls" }, 2,
	  "-p and -- COMMAND cannot be combined" },
	{ { "--demo", "-i", "f" }, 2, "--demo and -i cannot be combined" },
	{ { "-p", "1", "--demo" }, 2, "-p and --demo" },
	{ { "--list-events", "--dry-run" }, 2, "--list-events and --dry-run" },
	{ { "-h", "-V" }, 2, "-h and -V" },
	{ { "-p", "1", "-a" }, 2, "-p and -a/-G cannot be combined" },
	{ { "-G", "x", "--", "ls" }, 2, "-- COMMAND and -a/-G" },
	{ { "-C", "1", "-p", "1" }, 2, "-C needs -a or -G" },
	{ { "-C", "1", "--", "ls" }, 2, "-C needs -a or -G" },
	{ { "-a", "-C", "3-1" }, 2, "-C: invalid CPU list '3-1'" },
	{ { "-a", "-C", "" }, 2, "-C: invalid CPU list" },
	{ { "-a", "-C", "1,x" }, 2, "-C: invalid CPU list" },
	{ { "-a", "-C", "99999" }, 2, "-C: CPU number out of range" },
	{ { "-a", "-C" }, 2, "-C: missing argument" },
	{ { "-G", "a,,b" }, 2, "-G: empty cgroup name in 'a,,b'" },
	{ { "-G", "" }, 2, "-G: empty cgroup name" },
	{ { "-G" }, 2, "-G: missing argument" },
	{ { "-a", "--json" }, 2, "--json needs -b" },
	{ { "-a", "--max-processes", "0" }, 2, "--max-processes" },
	{ { "-V", "-p", "3" }, 2, "-p and -V" },

	/* -p */
	{ { "-p" }, 2, "-p: missing argument" },
	{ { "--pid" }, 2, "--pid: missing argument" },
	{ { "-p", "0" }, 2, "-p: pid '0' out of range" },
	{ { "-p", "-5" }, 2, "-p: invalid pid '-5'" },
	{ { "-p", "+5" }, 2, "-p: invalid pid '+5'" },
	{ { "-p", " 5" }, 2, "-p: invalid pid ' 5'" },
	{ { "-p", "5x" }, 2, "-p: invalid pid '5x'" },
	{ { "-p", "abc" }, 2, "-p: invalid pid 'abc'" },
	{ { "-p", "" }, 2, "-p: empty item" },
	{ { "-p", "1,,2" }, 2, "-p: empty item in pid list '1,,2'" },
	{ { "-p", ",1" }, 2, "-p: empty item" },
	{ { "-p", "1," }, 2, "-p: empty item" },
	{ { "-p", "1,2,1" }, 2, "-p: duplicate pid 1" },
	{ { "-p", "4", "-p", "4" }, 2, "-p: duplicate pid 4" },
	{ { "-p", "2147483648" }, 2, "-p: pid '2147483648' out of range" },
	{ { "-p", "99999999999999999999" }, 2,
	  "-p: pid '99999999999999999999' out of range" },
	{ { "-p", "123456789012345678901234567890123456789" }, 2,
	  "-p: invalid pid" },

	/* -e */
	{ { "-e", "auto", "-p", "1" }, 0, .mode = MODE_PIDS, .pids = { 1 } },
	{ { "-e", "pebs", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .source = SOURCE_PEBS, .pids = { 1 } },
	{ { "--source=ibs", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .source = SOURCE_IBS, .pids = { 1 } },
	{ { "-e", "faults", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .source = SOURCE_FAULTS, .pids = { 1 } },
	{ { "-e", "damon", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .source = SOURCE_DAMON, .pids = { 1 } },
	{ { "-e", "spe", "-p", "1" }, 2, "-e: unknown source 'spe'" },

	/* --rearm: faults only (auto becomes faults), targets only */
	{ { "--rearm", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .source = SOURCE_FAULTS, .rearm_s = -1, .pids = { 1 } },
	{ { "--rearm=2.5", "-e", "faults", "--", "ls" }, 0,
	  .mode = MODE_COMMAND, .source = SOURCE_FAULTS, .rearm_s = 2.5,
	  .command = { "ls" } },
	{ { "--rearm", "-e", "pebs", "-p", "1" }, 2, "--rearm needs -e f" },
	{ { "--rearm", "-e", "damon", "-p", "1" }, 2, "--rearm needs -e f" },
	{ { "--rearm", "-a" }, 2, "--rearm needs -p PID or -- COMMAND" },
	{ { "--rearm", "-i", "x.data" }, 2, "--rearm needs -p PID or" },
	{ { "--rearm=0", "-p", "1" }, 2,
	  "--rearm: delay must be at least 0.01 s" },
	{ { "--rearm=x", "-p", "1" }, 2, "--rearm: invalid delay 'x'" },
	{ { "--rearm", "2", "-p", "1" }, 2, "unexpected argument '2'" },
	{ { "-e", "" , "-p", "1" }, 2, "-e: unknown source ''" },

	/* -c */
	{ { "-c", "1", "-p", "1" }, 0, .mode = MODE_PIDS, .period = 1,
	  .pids = { 1 } },
	{ { "-c", "010", "-p", "1" }, 0, .mode = MODE_PIDS, .period = 10,
	  .pids = { 1 } },
	{ { "-c", "0x10", "-p", "1" }, 0, .mode = MODE_PIDS, .period = 16,
	  .pids = { 1 } },
	{ { "--period", "4611686018427387904", "-p", "1" }, 0,
	  .mode = MODE_PIDS, .period = UINT64_C(1) << 62, .pids = { 1 } },
	{ { "-c", "0X4000000000000000", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .period = UINT64_C(1) << 62, .pids = { 1 } },
	{ { "-c", "1", "-c", "2", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .period = 2, .pids = { 1 } },
	{ { "-c", "abc", "-p", "1" }, 2, "-c: invalid period 'abc'" },
	{ { "-c", "0", "-p", "1" }, 2, "-c: period '0' out of range" },
	{ { "-c", "-1", "-p", "1" }, 2, "-c: invalid period '-1'" },
	{ { "-c", "0x", "-p", "1" }, 2, "-c: invalid period '0x'" },
	{ { "-c", "12k", "-p", "1" }, 2, "-c: invalid period '12k'" },
	{ { "-c", "4611686018427387905", "-p", "1" }, 2,
	  "-c: period '4611686018427387905' out of range" },
	{ { "-c", "18446744073709551616", "-p", "1" }, 2,
	  "-c: period '18446744073709551616' out of range" },
	{ { "-c" }, 2, "-c: missing argument" },

	/* -d */
	{ { "-d", "0.5", "-p", "1" }, 0, .mode = MODE_PIDS, .delay = 0.5,
	  .pids = { 1 } },
	{ { "-d0.01", "-p", "1" }, 0, .mode = MODE_PIDS, .delay = 0.01,
	  .pids = { 1 } },
	{ { "--delay=3600", "-p", "1" }, 0, .mode = MODE_PIDS, .delay = 3600,
	  .pids = { 1 } },
	{ { "-d", "0", "-p", "1" }, 2, "-d: delay must be at least 0.01 s" },
	{ { "-d", "-1", "-p", "1" }, 2, "-d: delay must be at least 0.01 s" },
	{ { "-d", "0.009", "-p", "1" }, 2, "-d: delay must be at least" },
	{ { "-d", "3601", "-p", "1" }, 2, "-d: delay must be at most 3600 s" },
	{ { "-d", "nan", "-p", "1" }, 2, "-d: invalid delay 'nan'" },
	{ { "-d", "inf", "-p", "1" }, 2, "-d: invalid delay 'inf'" },
	{ { "-d", "1e400", "-p", "1" }, 2, "-d: invalid delay '1e400'" },
	{ { "-d", "1s", "-p", "1" }, 2, "-d: invalid delay '1s'" },
	{ { "-d", "", "-p", "1" }, 2, "-d: invalid delay ''" },
	{ { "-d", " 1", "-p", "1" }, 2, "-d: invalid delay" },

	/* -n */
	{ { "-n", "5", "-p", "1" }, 0, .mode = MODE_PIDS, .iterations = 5,
	  .pids = { 1 } },
	{ { "-n", "0", "-p", "1" }, 2, "-n: iteration count '0' out of range" },
	{ { "-n", "x", "-p", "1" }, 2, "-n: invalid iteration count 'x'" },
	{ { "--iterations", "99999999999999999999", "-p", "1" }, 2,
	  "-n: iteration count '99999999999999999999' out of range" },

	/* -b, --json, -o */
	{ { "-b", "--json", "-p", "1" }, 0, .mode = MODE_PIDS, .batch = true,
	  .json = true, .pids = { 1 } },
	{ { "--json", "-p", "1" }, 2, "--json needs -b" },
	{ { "--json", "--demo" }, 2, "--json needs -b" },
	{ { "--batch", "-o", "out.txt", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .batch = true, .output = "out.txt", .pids = { 1 } },
	{ { "-o", "out.txt", "-p", "1" }, 2, "-o needs -b" },
	{ { "-b", "-o", "", "-p", "1" }, 2, "-o: empty file name" },
	{ { "--batch=1", "-p", "1" }, 2, "--batch: takes no argument" },

	/* -k */
	{ { "-bk5", "-p", "1" }, 0, .mode = MODE_PIDS, .batch = true,
	  .top = 5, .pids = { 1 } },
	{ { "--top", "100000", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .top = 100000, .pids = { 1 } },
	{ { "-k", "0", "-p", "1" }, 2, "-k: page count '0' out of range" },
	{ { "-k", "100001", "-p", "1" }, 2, "-k: page count '100001'" },
	{ { "-bk" }, 2, "-k: missing argument" },
	{ { "--top" }, 2, "--top: missing argument" },

	/* -s */
	{ { "-s", "samples", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .sort = SORT_SAMPLES, .pids = { 1 } },
	{ { "-s", "total", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .sort = SORT_TOTAL, .pids = { 1 } },
	{ { "-s", "loads", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .sort = SORT_LOADS, .pids = { 1 } },
	{ { "-s", "stores", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .sort = SORT_STORES, .pids = { 1 } },
	{ { "--sort=latency", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .sort = SORT_LATENCY, .pids = { 1 } },
	{ { "-s", "hot", "-p", "1" }, 2, "-s: unknown sort key 'hot'" },

	/* files and limits */
	{ { "--record", "out.data", "--log", "memtop.log", "-p", "1" }, 0,
	  .mode = MODE_PIDS, .record = "out.data", .log = "memtop.log",
	  .pids = { 1 } },
	{ { "--record", "", "-p", "1" }, 2, "--record: empty file name" },
	{ { "--log=", "-p", "1" }, 2, "--log: empty file name" },
	{ { "-i", "" }, 2, "-i: empty file name" },
	{ { "--log" }, 2, "--log: missing argument" },
	{ { "--max-pages", "1000", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .max_pages = 1000, .pids = { 1 } },
	{ { "--max-pages", "0", "-p", "1" }, 2, "--max-pages: page count '0'" },
	{ { "--max-pages", "1e3", "-p", "1" }, 2,
	  "--max-pages: invalid page count '1e3'" },
	{ { "--migrate-hot", "16", "-b", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .batch = true, .migrate_hot = 16, .pids = { 1 } },
	{ { "-b", "--migrate-hot=100000", "--", "ls" }, 0,
	  .mode = MODE_COMMAND, .batch = true, .migrate_hot = 100000,
	  .command = { "ls" } },
	{ { "--migrate-hot", "16", "-p", "1" }, 2,
	  "--migrate-hot needs -b" },
	{ { "-b", "--migrate-hot", "4", "-i", "x.data" }, 2,
	  "--migrate-hot cannot move the pages of a recording" },
	{ { "-b", "--migrate-hot", "0", "-p", "1" }, 2,
	  "--migrate-hot: page count '0' out of range (1..100000)" },
	{ { "-b", "--migrate-hot", "-3", "-p", "1" }, 2,
	  "--migrate-hot: invalid page count '-3'" },
	{ { "-b", "--migrate-hot" }, 2, "--migrate-hot: missing argument" },
	{ { "--ldlat", "50", "-e", "pebs", "-p", "1" }, 0, .mode = MODE_PIDS,
	  .source = SOURCE_PEBS, .ldlat = 50, .pids = { 1 } },
	{ { "--ldlat=65535", "--dry-run" }, 0, .mode = MODE_DRY_RUN,
	  .ldlat = 65535 },
	{ { "--ldlat", "0", "-p", "1" }, 2, "--ldlat: latency '0' out of range" },
	{ { "--ldlat", "65536", "-p", "1" }, 2,
	  "--ldlat: latency '65536' out of range (1..65535)" },
	{ { "--ldlat", "0x10", "-p", "1" }, 2,
	  "--ldlat: invalid latency '0x10'" },
	{ { "--ldlat" }, 2, "--ldlat: missing argument" },

	/* --record and --force */
	{ { "--record", "x.data", "--force", "-p", "1" }, 0,
	  .mode = MODE_PIDS, .record = "x.data", .force = true,
	  .pids = { 1 } },
	{ { "--force", "-p", "1" }, 2, "--force needs --record" },
	{ { "--force=1", "--record", "x", "-p", "1" }, 2,
	  "--force: takes no argument" },
	{ { "-i", "in.data", "--record", "out.data" }, 2,
	  "--record cannot be combined with -i" },

	/* fleet metrics: refusals (values that parse: test_metrics) */
	{ { "--listen", "0", "-p", "1" }, 2,
	  "--listen: port '0' out of range (1..65535)" },
	{ { "--listen", "65536", "-p", "1" }, 2, "--listen: port '65536'" },
	{ { "--listen", "", "-p", "1" }, 2, "--listen: empty address" },
	{ { "--listen", "http", "-p", "1" }, 2, "--listen: invalid port" },
	{ { "--listen", ":9464", "-p", "1" }, 2,
	  "--listen: invalid address in ':9464'" },
	{ { "--listen", "localhost:9464", "-p", "1" }, 2,
	  "names are not looked up" },
	{ { "--listen", "1.2.3:9464", "-p", "1" }, 2, "invalid address" },
	{ { "--listen", "::1:9464", "-p", "1" }, 2, "invalid address" },
	{ { "--listen", "[::1]", "-p", "1" }, 2,
	  "--listen: invalid address in '[::1]' (an IPv6 address needs" },
	{ { "--listen", "[::1]x:80", "-p", "1" }, 2, "needs [ADDR]:PORT" },
	{ { "--listen", "[1.2.3.4]:80", "-p", "1" }, 2, "invalid address" },
	{ { "--listen", "1.2.3.4:", "-p", "1" }, 2, "--listen: invalid port" },
	{ { "--listen", "1.2.3.4:-1", "-p", "1" }, 2, "invalid port" },
	{ { "--listen" }, 2, "--listen: missing argument" },
	{ { "--metrics-file", "", "-p", "1" }, 2,
	  "--metrics-file: empty file name" },
	{ { "--metrics-top", "1001", "--listen", "80", "-p", "1" }, 2,
	  "--metrics-top: process count '1001' out of range (0..1000)" },
	{ { "--metrics-top", "x", "--listen", "80", "-p", "1" }, 2,
	  "--metrics-top: invalid process count 'x'" },
	{ { "--metrics-top", "5", "-p", "1" }, 2,
	  "--metrics-top needs --listen or --metrics-file" },
	{ { "--quiet", "-p", "1" }, 2, "--quiet needs -b" },
	{ { "-b", "--quiet", "-o", "x", "-p", "1" }, 2,
	  "--quiet and -o cannot be combined" },
	{ { "-b", "--quiet=1", "-p", "1" }, 2, "--quiet: takes no argument" },

	/* unknown options; abbreviations as getopt_long allows them */
	{ { "-x", "-p", "1" }, 2, "unknown option '-x'" },
	{ { "-bx", "-p", "1" }, 2, "unknown option '-x'" },
	{ { "-xb", "-p", "1" }, 2, "unknown option '-x'" },
	{ { "--frobnicate", "-p", "1" }, 2, "unknown option '--frobnicate'" },
	{ { "--frob=1", "-p", "1" }, 2, "unknown option '--frob'" },
	{ { "--i", "x" }, 2, "ambiguous option '--i'" },
	{ { "--dem" }, 0, .mode = MODE_DEMO },
	{ { "--iter", "3", "--demo" }, 0, .mode = MODE_DEMO,
	  .iterations = 3 },
};

#define N_CASES ARRAY_SIZE(cli_cases)

static int
cli_case_argv(const struct cli_case *c, char **argv)
{
	int argc = 0;

	argv[argc++] = (char *)"memtop";
	for (int i = 0; i < MAX_ARGS && c->args[i]; i++)
		argv[argc++] = (char *)c->args[i];
	argv[argc] = NULL;
	return argc;
}

static void
describe(const struct cli_case *c, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < MAX_ARGS && c->args[i] && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, " '%s'", c->args[i]);
}

static void
check_fields(const struct cli_case *c, const struct options *o)
{
	size_t n_pids = 0, n_cmd = 0;

	check_eq_u64(o->mode, c->mode);
	check_eq_u64(o->source, c->source);
	check_eq_u64(o->period, c->period);
	check(o->delay == (c->delay ? c->delay : 1.0));
	check_eq_i64(o->iterations, c->iterations);
	check_eq_u64(o->batch, c->batch);
	check_eq_u64(o->json, c->json);
	check_eq_u64(o->top, c->top ? c->top : CLI_DEFAULT_TOP);
	check_eq_u64(o->sort, c->sort);
	check_eq_u64(o->max_pages, c->max_pages);
	check_eq_u64(o->migrate_hot, c->migrate_hot);
	check(o->rearm_s == c->rearm_s);
	check_eq_u64(o->ldlat, c->ldlat);
	check_eq_str(o->record_path, c->record);
	check_eq_u64(o->force, c->force);
	check_eq_str(o->output_path, c->output);
	check_eq_str(o->log_path, c->log);
	check_eq_str(o->input_path, c->input);

	while (n_pids < 4 && c->pids[n_pids])
		n_pids++;
	check_eq_u64(o->n_pids, n_pids);
	for (size_t i = 0; i < n_pids && i < o->n_pids; i++)
		check_eq_i64(o->pids[i], c->pids[i]);
	if (n_pids == 0)
		check(o->pids == NULL);

	while (n_cmd < 4 && c->command[n_cmd])
		n_cmd++;
	if (n_cmd == 0) {
		check(o->command == NULL);
		return;
	}
	if (!check(o->command != NULL))
		return;
	for (size_t i = 0; i < n_cmd; i++)
		check_eq_str(o->command[i], c->command[i]);
	check(o->command[n_cmd] == NULL);
}

static void
test_table(void)
{
	char *argv[MAX_ARGS + 2];
	char err[256], desc[512];

	for (size_t i = 0; i < N_CASES; i++) {
		const struct cli_case *c = &cli_cases[i];
		struct options o;
		int argc = cli_case_argv(c, argv);
		int rc;

		/* Poison err to prove success clears it. */
		strcpy(err, "stale");
		rc = cli_parse(argc, argv, &o, err, sizeof(err));
		describe(c, desc, sizeof(desc));
		if (!check_eq_i64(rc, c->rc))
			fprintf(stderr, "  case %zu:%s -> \"%s\"\n", i, desc,
				err);
		if (rc == 0 && c->rc == 0) {
			check_eq_str(err, "");
			check_fields(c, &o);
		} else if (rc == 2) {
			if (!check(strstr(err, c->err_has) != NULL))
				fprintf(stderr, "  case %zu:%s: \"%s\" lacks "
					"\"%s\"\n", i, desc, err, c->err_has);
			check(strchr(err, '\n') == NULL);
			check(strncmp(err, "memtop", 6) != 0);
			/* A failed parse leaves nothing to free. */
			check(o.pids == NULL && o.command == NULL);
		}
		cli_fini(&o);
		/* cli_fini is idempotent. */
		cli_fini(&o);
		check(o.pids == NULL && o.command == NULL);
	}
}

/* argv must not be modified (no permutation), and err may be tiny. */
static void
test_argv_untouched_and_small_err(void)
{
	char *argv[] = { (char *)"memtop", (char *)"-p", (char *)"1",
			 (char *)"stray", (char *)"-b", NULL };
	char *copy[6];
	char err[8];
	struct options o;

	memcpy(copy, argv, sizeof(argv));
	check_eq_i64(cli_parse(5, argv, &o, err, sizeof(err)), 2);
	check_eq_u64(strlen(err), sizeof(err) - 1);
	check_eq_str(err, "unexpec");
	for (int i = 0; i < 6; i++)
		check(argv[i] == copy[i]);
	cli_fini(&o);

	check_eq_i64(cli_parse(5, argv, &o, NULL, 0), 2);
	cli_fini(&o);
	cli_fini(NULL);
}

/* --listen, --metrics-file, --metrics-top and --quiet that parse. */
static void
test_metrics(void)
{
	static const struct {
		const char *arg;
		int family;
		const char *text;
		unsigned port;
	} listens[] = {
		{ "9464", AF_INET, "127.0.0.1:9464", 9464 },
		{ "1", AF_INET, "127.0.0.1:1", 1 },
		{ "0.0.0.0:65535", AF_INET, "0.0.0.0:65535", 65535 },
		{ "192.168.1.20:80", AF_INET, "192.168.1.20:80", 80 },
		{ "[::1]:9464", AF_INET6, "[::1]:9464", 9464 },
		{ "[::]:9100", AF_INET6, "[::]:9100", 9100 },
	};
	static const unsigned char loopback[4] = { 127, 0, 0, 1 };
	struct options o;
	char err[256];

	for (size_t i = 0; i < ARRAY_SIZE(listens); i++) {
		char *argv[] = { (char *)"memtop", (char *)"--listen",
				 (char *)listens[i].arg, (char *)"-p",
				 (char *)"1", NULL };

		if (!check_eq_i64(cli_parse(5, argv, &o, err, sizeof(err)),
				  0)) {
			fprintf(stderr, "  --listen %s: %s\n", listens[i].arg,
				err);
			continue;
		}
		check_eq_i64(o.listen.family, listens[i].family);
		check_eq_str(o.listen.text, listens[i].text);
		check_eq_u64(o.listen.port, listens[i].port);
		check_eq_u64(o.metrics_top, CLI_DEFAULT_METRICS_TOP);
		cli_fini(&o);
	}
	/* PORT alone: the loopback address, never every interface. */
	{
		char *argv[] = { (char *)"memtop", (char *)"--listen",
				 (char *)"9464", (char *)"-p", (char *)"1",
				 NULL };

		check_eq_i64(cli_parse(5, argv, &o, err, sizeof(err)), 0);
		check(memcmp(o.listen.addr, loopback, 4) == 0);
		cli_fini(&o);
	}
	{
		char *argv[] = { (char *)"memtop", (char *)"-b",
				 (char *)"--quiet", (char *)"--metrics-file",
				 (char *)"m.prom", (char *)"--metrics-top",
				 (char *)"0", (char *)"-i", (char *)"x.data",
				 NULL };

		check_eq_i64(cli_parse(9, argv, &o, err, sizeof(err)), 0);
		check(o.quiet);
		check_eq_str(o.metrics_file, "m.prom");
		check_eq_u64(o.metrics_top, 0);
		check_eq_i64(o.listen.family, 0);
		cli_fini(&o);
	}
	{
		char *argv[] = { (char *)"memtop", (char *)"-p", (char *)"1",
				 NULL };

		check_eq_i64(cli_parse(3, argv, &o, err, sizeof(err)), 0);
		check(!o.quiet && !o.metrics_file && !o.listen.family);
		cli_fini(&o);
	}
}

/* The help text names every option of the contract. */
static void
test_usage(void)
{
	static const char *const names[] = {
		"-p, --pid", "-e, --source", "-c, --period", "-d, --delay",
		"-n, --iterations", "-b, --batch", "--json", "-k, --top",
		"-s, --sort", "--record", "--force", "-o, --output", "--log",
		"-i, --input", "--demo", "--list-events", "--dry-run",
		"--migrate-hot",
		"--max-pages", "--ldlat", "-V, --version", "-h, --help",
		"-a, --all-cpus", "-G, --cgroup", "-C, --cpu",
		"--max-processes",
		"--listen", "--metrics-file", "--metrics-top", "--quiet",
		"-- COMMAND", "auto", "pebs", "ibs", "faults", "latency",
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!check(f != NULL))
		return;
	cli_usage(f);
	fclose(f);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!check(strstr(text, names[i]) != NULL))
			fprintf(stderr, "  usage lacks '%s'\n", names[i]);
	free(text);
}

/* -a, -C and -G fill what the collector needs; names add up. */
static void
test_system(void)
{
	char *argv[] = { (char *)"memtop", (char *)"-G", (char *)"a,/b",
			 (char *)"-C", (char *)"0-2,7", (char *)"-G",
			 (char *)"c", (char *)"--max-processes",
			 (char *)"99", NULL };
	struct options o;
	char err[128];

	if (!check_eq_i64(cli_parse(9, argv, &o, err, sizeof(err)), 0))
		return;
	check_eq_i64(o.mode, MODE_SYSTEM);
	check(!o.all_cpus);
	check_eq_u64(o.n_cgroups, 3);
	check_eq_str(o.cgroups[0], "a");
	check_eq_str(o.cgroups[1], "/b");
	check_eq_str(o.cgroups[2], "c");
	check(o.cgroups[3] == NULL);
	check(o.cpus && cpulist_count(o.cpus) == 4 && cpulist_has(o.cpus, 7));
	check_eq_u64(o.max_processes, 99);
	cli_fini(&o);
	check(o.cgroups == NULL && o.cpus == NULL && o.n_cgroups == 0);
	argv[1] = (char *)"-a";
	argv[2] = NULL;
	check_eq_i64(cli_parse(2, argv, &o, err, sizeof(err)), 0);
	check(o.all_cpus && o.cpus == NULL && o.n_cgroups == 0);
	cli_fini(&o);
}

int
main(void)
{
	test_table();
	test_system();
	test_argv_untouched_and_small_err();
	test_metrics();
	test_usage();
	return test_result();
}
