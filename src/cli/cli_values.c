/*
 * The values of command-line options: numbers with their ranges, pid
 * lists, source and sort names, delays and paths.  Each parser puts one
 * line in err and returns 2 on bad input (cli_int.h).  Main thread.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "cli.h"
#include "cli_int.h"

#define CLI_MIN_DELAY 0.01
#define CLI_MAX_DELAY 3600.0

static const char *const cli_source_names[] = {
	[SOURCE_AUTO] = "auto",
	[SOURCE_PEBS] = "pebs",
	[SOURCE_IBS] = "ibs",
	[SOURCE_FAULTS] = "faults",
	[SOURCE_DAMON] = "damon",
};

/*
 * The message quotes what the user typed: a control character in it (a
 * newline, an escape sequence) would break the one-line message or the
 * terminal, so each becomes '?'.
 */
int
cli_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
		for (char *p = err; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
	}
	return 2;
}

/*
 * Unsigned integer, decimal or 0x hex when allow_hex.  No sign, no
 * whitespace, no trailing text.  0 or -EINVAL / -ERANGE.
 */
int
cli_parse_u64(const char *s, bool allow_hex, uint64_t *out)
{
	unsigned long long v;
	const char *digits = s;
	char *end;
	int base = 10;

	if (allow_hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		digits = s + 2;
		base = 16;
		if (!isxdigit((unsigned char)digits[0]))
			return -EINVAL;
	} else if (!isdigit((unsigned char)digits[0])) {
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(digits, &end, base);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	*out = v;
	return 0;
}

/*
 * Parses an unsigned option value in [lo, hi]; on failure writes
 * "OPT: invalid WHAT 'ARG'" or a range message into err and returns 2.
 */
int
cli_parse_ranged(const char *opt_name, const char *what, const char *arg,
		 bool allow_hex, uint64_t lo, uint64_t hi, uint64_t *out,
		 char *err, size_t errlen)
{
	uint64_t v;
	int rc;

	rc = cli_parse_u64(arg, allow_hex, &v);
	if (rc == -EINVAL)
		return cli_error(err, errlen, "%s: invalid %s '%s'", opt_name,
				 what, arg);
	if (rc < 0 || v < lo || v > hi)
		return cli_error(err, errlen,
				 "%s: %s '%s' out of range (%llu..%llu)",
				 opt_name, what, arg, (unsigned long long)lo,
				 (unsigned long long)hi);
	*out = v;
	return 0;
}

static int
cli_cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/*
 * A pid that opt->pids holds twice, or 0.  Sorts a copy: a pasted list of
 * tens of thousands of pids is refused at once, not in quadratic time.
 * -ENOMEM when the copy cannot be made.
 */
static pid_t
cli_duplicate_pid(const struct options *opt)
{
	pid_t *sorted, dup = 0;

	if (opt->n_pids < 2)
		return 0;
	sorted = malloc(opt->n_pids * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, opt->pids, opt->n_pids * sizeof(*sorted));
	qsort(sorted, opt->n_pids, sizeof(*sorted), cli_cmp_pid);
	for (size_t i = 1; i < opt->n_pids && !dup; i++)
		if (sorted[i] == sorted[i - 1])
			dup = sorted[i];
	free(sorted);
	return dup;
}

/*
 * "PID[,PID...]", appended to opt->pids so that repeated -p options
 * accumulate.  Each item is a positive decimal pid_t; empty items and
 * duplicates are errors because they are almost always typos.
 */
int
cli_parse_pids(const char *list, struct options *opt, char *err,
	       size_t errlen)
{
	const char *item = list;
	size_t items = 1;
	char buf[32];
	pid_t *grown, dup;

	for (const char *c = list; (c = strchr(c, ',')); c++)
		items++;
	grown = realloc(opt->pids, (opt->n_pids + items) * sizeof(*grown));
	if (!grown)
		return cli_error(err, errlen, "-p: out of memory");
	opt->pids = grown;
	for (;;) {
		const char *comma = strchr(item, ',');
		size_t len = comma ? (size_t)(comma - item) : strlen(item);
		uint64_t v;
		int rc;

		if (len == 0)
			return cli_error(err, errlen,
					 "-p: empty item in pid list '%s'",
					 list);
		if (len >= sizeof(buf))
			return cli_error(err, errlen,
					 "-p: invalid pid '%.*s'", (int)len,
					 item);
		memcpy(buf, item, len);
		buf[len] = '\0';
		rc = cli_parse_ranged("-p", "pid", buf, false, 1, INT_MAX,
				      &v, err, errlen);
		if (rc)
			return rc;
		if ((uint64_t)(pid_t)v != v)
			return cli_error(err, errlen,
					 "-p: pid '%s' does not fit pid_t",
					 buf);
		opt->pids[opt->n_pids++] = (pid_t)v;
		if (!comma)
			break;
		item = comma + 1;
	}
	dup = cli_duplicate_pid(opt);
	if (dup < 0)
		return cli_error(err, errlen, "-p: out of memory");
	if (dup)
		return cli_error(err, errlen, "-p: duplicate pid %d", (int)dup);
	return 0;
}

int
cli_parse_source(const char *arg, struct options *opt, char *err,
		 size_t errlen)
{
	for (size_t i = 0; i < ARRAY_SIZE(cli_source_names); i++) {
		if (strcmp(arg, cli_source_names[i]) == 0) {
			opt->source = (enum source_choice)i;
			return 0;
		}
	}
	return cli_error(err, errlen,
			 "-e: unknown source '%s' (auto, pebs, ibs, damon, "
			 "faults)",
			 arg);
}

/* Seconds within the delay limits, for -d and --rearm=SECS. */
static int
cli_parse_secs(const char *name, const char *arg, double *out, char *err,
	       size_t errlen)
{
	char *end;
	double v;

	if (arg[0] == '\0' || isspace((unsigned char)arg[0]))
		return cli_error(err, errlen, "%s: invalid delay '%s'", name,
				 arg);
	errno = 0;
	v = strtod(arg, &end);
	if (*end != '\0' || !isfinite(v))
		return cli_error(err, errlen, "%s: invalid delay '%s'", name,
				 arg);
	if (v < CLI_MIN_DELAY)
		return cli_error(err, errlen,
				 "%s: delay must be at least 0.01 s", name);
	if (v > CLI_MAX_DELAY)
		return cli_error(err, errlen,
				 "%s: delay must be at most 3600 s", name);
	*out = v;
	return 0;
}

int
cli_parse_delay(const char *arg, struct options *opt, char *err,
		size_t errlen)
{
	return cli_parse_secs("-d", arg, &opt->delay, err, errlen);
}

int
cli_parse_rearm(const char *arg, struct options *opt, char *err,
		size_t errlen)
{
	opt->rearm_s = -1;
	return arg ? cli_parse_secs("--rearm", arg, &opt->rearm_s, err,
				    errlen) : 0;
}

/* --rearm: which sources and modes it goes with; it re-arms the faults
 * source's write faults, so -e auto means faults then. */
int
cli_check_rearm(struct options *opt, char *err, size_t errlen)
{
	if (opt->rearm_s == 0)
		return 0;
	if (opt->source == SOURCE_AUTO)
		opt->source = SOURCE_FAULTS;
	if (opt->source != SOURCE_FAULTS && opt->source != SOURCE_AUTO)
		return cli_error(err, errlen, "--rearm needs -e faults (it "
				 "re-arms the write faults that source "
				 "samples)");
	if (opt->mode != MODE_PIDS && opt->mode != MODE_COMMAND &&
	    opt->mode != MODE_DEMO && opt->mode != MODE_DRY_RUN)
		return cli_error(err, errlen, "--rearm needs -p PID or -- "
				 "COMMAND (it re-arms each target's pages)");
	return 0;
}

int
cli_parse_sort(const char *arg, struct options *opt, char *err,
	       size_t errlen)
{
	int key = sortkey_from_name(arg);

	if (key < 0)
		return cli_error(err, errlen,
				 "-s: unknown sort key '%s' (samples, total, "
				 "loads, stores, latency)", arg);
	opt->sort = (enum sort_key)key;
	return 0;
}

/*
 * --listen [ADDR:]PORT.  PORT alone binds the loopback address: the
 * endpoint is reachable from other hosts only when an address is given.
 * ADDR is numeric (IPv4, or IPv6 in brackets); names are not looked up,
 * so the address bound is the one written.
 */
int
cli_parse_listen(const char *arg, struct options *opt, char *err,
		 size_t errlen)
{
	struct cli_listen *l = &opt->listen;
	const char *colon = strrchr(arg, ':');
	const char *port = colon ? colon + 1 : arg;
	char host[INET6_ADDRSTRLEN + 2];
	size_t hlen = colon ? (size_t)(colon - arg) : 0;
	uint64_t v;
	int rc;

	memset(l, 0, sizeof(*l));
	if (arg[0] == '\0')
		return cli_error(err, errlen, "--listen: empty address");
	if (arg[0] == '[' && (!colon || colon[-1] != ']'))
		return cli_error(err, errlen, "--listen: invalid address in "
				 "'%s' (an IPv6 address needs [ADDR]:PORT)",
				 arg);
	rc = cli_parse_ranged("--listen", "port", port, false, 1, 65535, &v,
			      err, errlen);
	if (rc)
		return rc;
	if (!colon) {
		snprintf(host, sizeof(host), "127.0.0.1");
		hlen = strlen(host);
	} else if (hlen == 0 || hlen >= sizeof(host)) {
		return cli_error(err, errlen, "--listen: invalid address in "
				 "'%s' (PORT, IPV4:PORT or [IPV6]:PORT)", arg);
	} else {
		memcpy(host, arg, hlen);
		host[hlen] = '\0';
	}
	if (host[0] == '[' && host[hlen - 1] == ']') {
		host[hlen - 1] = '\0';
		l->family = AF_INET6;
		rc = inet_pton(AF_INET6, host + 1, l->addr);
	} else {
		l->family = AF_INET;
		rc = inet_pton(AF_INET, host, l->addr);
	}
	if (rc != 1) {
		memset(l, 0, sizeof(*l));
		return cli_error(err, errlen, "--listen: invalid address in "
				 "'%s' (PORT, IPV4:PORT or [IPV6]:PORT; names "
				 "are not looked up)", arg);
	}
	l->port = (uint16_t)v;
	snprintf(l->text, sizeof(l->text), l->family == AF_INET6 ?
		 "%s]:%u" : "%s:%u", host, (unsigned)v);
	return 0;
}

int
cli_parse_path(const char *opt_name, const char *arg, const char **out,
	       char *err, size_t errlen)
{
	if (arg[0] == '\0')
		return cli_error(err, errlen, "%s: empty file name", opt_name);
	*out = arg;
	return 0;
}
