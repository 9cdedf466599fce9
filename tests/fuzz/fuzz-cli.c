#include "config.h"

/*
 * Fuzz target for the command line (src/cli/cli.c): the pid lists, the number
 * parsers (period, delay, counts, sizes), option clusters, abbreviations,
 * "--" and the mode rules, through cli_parse() itself.
 *
 * Input: split at NUL bytes into argv[1..] (argv[0] is "memtop"), at most
 * FUZZ_MAX_ARGS of them.  Invariants, checked with __builtin_trap():
 * cli_parse returns 0 or 2; on 2 the message is one non-empty line; on 0
 * every value is within the range the help text gives (pids positive and
 * distinct, period 1..2^62, delay 0.01..3600, top 1..100000 ...), a
 * command is NULL-terminated, paths are non-empty; cli_fini is idempotent.
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target; otherwise
 * tests/fuzz/fuzzmain.c replays the files given, then a fixed pseudo-random
 * set of command lines built from memtop's own options and tricky values.
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "cli.h"
#include "fuzzmain.h"

#define FUZZ_MAX_ARGS	64

static void
fuzz_check_ok(const struct options *o)
{
	if (o->mode > MODE_VERSION || o->source > SOURCE_DAMON)
		__builtin_trap();
	if (o->period > (UINT64_C(1) << 62))
		__builtin_trap();
	if (!(o->delay >= 0.01 && o->delay <= 3600.0) || !isfinite(o->delay))
		__builtin_trap();
	if (o->iterations < 0 || o->top < 1 || o->top > 100000)
		__builtin_trap();
	if (o->mode == MODE_PIDS && o->n_pids == 0)
		__builtin_trap();
	for (size_t i = 0; i < o->n_pids; i++) {
		if (o->pids[i] <= 0)
			__builtin_trap();
		for (size_t j = 0; j < i; j++)
			if (o->pids[i] == o->pids[j])
				__builtin_trap();
	}
	if (o->mode == MODE_COMMAND) {
		if (!o->command || !o->command[0])
			__builtin_trap();
		for (size_t i = 0; o->command[i]; i++)
			(void)strlen(o->command[i]);
	}
	if ((o->output_path && !o->output_path[0]) ||
	    (o->log_path && !o->log_path[0]) ||
	    (o->record_path && !o->record_path[0]) ||
	    (o->mode == MODE_REPLAY && (!o->input_path || !o->input_path[0])))
		__builtin_trap();
	if (o->page_shift != 0 && o->page_shift != 12 &&
	    o->page_shift != 21 && o->page_shift != 30)
		__builtin_trap();
	if (o->output_path && !o->batch)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[FUZZ_MAX_ARGS + 2];
	struct options o;
	char err[256];
	char *copy;
	int argc = 1, ret;
	size_t start = 0;

	/* NUL-separated arguments; the copy ends in a NUL of its own. */
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[0] = (char *)"memtop";
	for (size_t i = 0; i <= size && argc <= FUZZ_MAX_ARGS; i++) {
		if (copy[i] != '\0')
			continue;
		if (i > start || i < size)
			argv[argc++] = copy + start;
		start = i + 1;
	}
	argv[argc] = NULL;

	memset(err, 'x', sizeof(err));
	ret = cli_parse(argc, argv, &o, err, sizeof(err));
	if (ret == 0) {
		fuzz_check_ok(&o);
	} else if (ret == 2) {
		size_t len = strnlen(err, sizeof(err));

		if (len == 0 || len == sizeof(err) || memchr(err, '\n', len))
			__builtin_trap();
		/* cli_parse released what it had taken. */
		if (o.pids || o.command)
			__builtin_trap();
	} else {
		__builtin_trap();
	}
	cli_fini(&o);
	cli_fini(&o);
	free(copy);
	return 0;
}

static const char *const fuzz_words[] = {
	"-p", "--pid", "--pid=", "-e", "-c", "-d", "-n", "-b", "--json", "-k",
	"-s", "--record", "--force", "-o", "--log", "-i", "--demo",
	"--list-events", "--dry-run", "--max-pages", "--granularity",
	"--migrate-hot", "--ldlat", "-V", "-h", "--", "-bp", "-bn", "--m",
	"--top=5", "--delay=0.5", "--period=0x10", "-", "",
	"--listen", "--metrics-file", "--metrics-top", "--quiet", "9464",
	"127.0.0.1:9464", "[::1]:9464", "[::1", "::1:80", "1.2.3.4:",
	"65536", "0.0.0.0:0", "1001",
	"1", "0", "-1", "4242", "1,2,3", "1,,2", ",", "1,1", "2147483647",
	"2147483648", "18446744073709551615", "18446744073709551616", "0x",
	"0x4000000000000000", "0x4000000000000001", "1e400", "nan", "inf",
	"0.01", "0.009", "3600", "3600.0001", " 1", "1 ", "+5", "007",
	"faults", "auto", "pebs", "ibs", "total", "loads", "latency", "4k",
	"2m", "1g", "3k", "100000", "100001", "65535", "65536", "true",
	"/tmp/x", "perf.data", "\xff\xfe", "-\x01",
};

/* Up to 12 of memtop's words and tricky values, NUL-separated. */
static size_t
fuzz_cli_generate(uint64_t *x, uint8_t *buf, size_t cap)
{
	size_t n_words = ARRAY_SIZE(fuzz_words);
	size_t len = 0, words = 1 + fuzz_next(x) % 12;

	for (size_t w = 0; w < words; w++) {
		const char *s = fuzz_words[fuzz_next(x) % n_words];
		size_t l = strlen(s);

		if (len + l + 1 >= cap)
			break;
		memcpy(buf + len, s, l);
		len += l;
		/* Mostly separate arguments, sometimes glued. */
		if ((*x >> 20) % 8 != 0)
			buf[len++] = '\0';
	}
	return len;
}

const struct fuzz_target fuzz_target = {
	.name = "fuzz-cli",
	.generate = fuzz_cli_generate,
	.seed = 0x2545f4914f6cdd1d,
	.n_random = 50000,
	.random_max = 2048,
};
