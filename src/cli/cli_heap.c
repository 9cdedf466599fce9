/*
 * --heap-objects[=N|SIZE] (issue 18).  Main thread, before any other
 * thread exists.  See cli_int.h.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "cli.h"
#include "cli_int.h"
#include "heapopt.h"

#define CLI_HEAP_MAX_EVERY 1000000u

int
cli_parse_heap(const char *arg, struct options *opt, char *err,
	       size_t errlen)
{
	uint64_t v;
	int ret;

	opt->heap.on = true;
	opt->heap.every = 0;
	opt->heap.min_size = 0;
	if (!arg)
		return 0;
	if (strlen(arg) >= 32)
		return cli_error(err, errlen, "--heap-objects: invalid value "
				 "'%.40s' (N, or a size: 64b, 4k, 1m)", arg);
	ret = heapopt_size(arg, strlen(arg), &v);
	if (ret == 0) {
		opt->heap.min_size = v;
		return 0;
	}
	if (ret != -ENOENT)
		return cli_error(err, errlen, "--heap-objects: invalid "
				 "size '%s' (1b..1024g)", arg);
	if (!*arg)
		return cli_error(err, errlen, "--heap-objects: invalid value "
				 "'%.40s' (N, or a size: 64b, 4k, 1m)", arg);
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
