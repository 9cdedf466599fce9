/*
 * --heap-objects[=N|SIZE] (issue 18).  Main thread, before any other
 * thread exists.  See cli_int.h.
 */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "cli.h"
#include "cli_int.h"

#define CLI_HEAP_MAX_EVERY 1000000u
#define CLI_HEAP_MAX_SIZE (UINT64_C(1) << 40)

int
cli_parse_heap(const char *arg, struct options *opt, char *err,
	       size_t errlen)
{
	static const struct {
		char c;
		unsigned shift;
	} units[] = { { 'b', 0 }, { 'k', 10 }, { 'm', 20 }, { 'g', 30 } };
	char num[32];
	size_t len;
	uint64_t v;

	opt->heap.on = true;
	opt->heap.every = 0;
	opt->heap.min_size = 0;
	if (!arg)
		return 0;
	len = strlen(arg);
	if (len == 0 || len >= sizeof(num))
		return cli_error(err, errlen, "--heap-objects: invalid value "
				 "'%.40s' (N, or a size: 64b, 4k, 1m)", arg);
	memcpy(num, arg, len + 1);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (tolower((unsigned char)num[len - 1]) != units[i].c)
			continue;
		num[len - 1] = '\0';
		if (cli_parse_u64(num, false, &v) < 0 || v == 0 ||
		    v > (CLI_HEAP_MAX_SIZE >> units[i].shift))
			return cli_error(err, errlen, "--heap-objects: invalid "
					 "size '%s' (1b..1024g)", arg);
		opt->heap.min_size = v << units[i].shift;
		return 0;
	}
	if (cli_parse_ranged("--heap-objects", "allocation count", arg,
			     false, 1, CLI_HEAP_MAX_EVERY, &v, err,
			     errlen) != 0)
		return 2;
	opt->heap.every = (uint32_t)v;
	return 0;
}

/* Small objects are found in the targets' allocators: a live target. */
int
cli_check_heap(const struct options *opt, char *err, size_t errlen)
{
	if (!opt->heap.on)
		return 0;
	if (opt->mode != MODE_PIDS && opt->mode != MODE_COMMAND &&
	    opt->mode != MODE_DEMO && opt->mode != MODE_DRY_RUN &&
	    opt->mode != MODE_LIST_EVENTS)
		return cli_error(err, errlen, "--heap-objects needs -p PID or "
				 "-- COMMAND (it probes each target's "
				 "allocator)");
	return 0;
}
