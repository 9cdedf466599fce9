/*
 * What the command line watches: the whole-machine options' values (-C's
 * CPU list and -G's cgroup names; each parser puts one line in err and
 * returns 2 on bad input, cli_int.h), and the target in words for the
 * interfaces.  Main thread.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_int.h"
#include "cpulist.h"

int
cli_parse_cpus(const char *arg, struct options *opt, char *err,
	       size_t errlen)
{
	struct cpulist *l = opt->cpus ? opt->cpus : malloc(sizeof(*l));
	int ret;

	if (!l)
		return cli_error(err, errlen, "-C: out of memory");
	opt->cpus = l;
	ret = cpulist_parse(arg, l);
	if (ret == -ERANGE)
		return cli_error(err, errlen, "-C: CPU number out of range in "
				 "'%s' (at most %d)", arg, CPULIST_MAX - 1);
	if (ret < 0)
		return cli_error(err, errlen, "-C: invalid CPU list '%s' (like "
				 "0-3,8)", arg);
	return 0;
}

/* -G a,b: each name kept as typed (the cgroup mount is found later, in
 * main); names add up over several -G. */
int
cli_parse_cgroups(const char *arg, struct options *opt, char *err,
		  size_t errlen)
{
	size_t items = 1;
	char **grown;

	for (const char *c = arg; (c = strchr(c, ',')); c++)
		items++;
	grown = realloc(opt->cgroups, (opt->n_cgroups + items + 1) *
			sizeof(*grown));
	if (!grown)
		return cli_error(err, errlen, "-G: out of memory");
	opt->cgroups = grown;
	for (const char *item = arg;;) {
		size_t len = strcspn(item, ",");

		if (len == 0)
			return cli_error(err, errlen, "-G: empty cgroup name in "
					 "'%s'", arg);
		opt->cgroups[opt->n_cgroups] = strndup(item, len);
		if (!opt->cgroups[opt->n_cgroups])
			return cli_error(err, errlen, "-G: out of memory");
		opt->cgroups[++opt->n_cgroups] = NULL;
		if (!item[len])
			break;
		item += len + 1;
	}
	return 0;
}

void
cli_describe_target(const struct options *opt, const char *scope, char *buf,
		    size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	if (opt->mode == MODE_SYSTEM) {
		snprintf(buf, len, "%s", scope ? scope : "all CPUs");
		return;
	}
	if (opt->mode == MODE_PIDS) {
		off += (size_t)snprintf(buf, len, "pid");
		for (size_t i = 0; i < opt->n_pids && off < len; i++)
			off += (size_t)snprintf(buf + off, len - off, "%s%d",
						i ? "," : " ",
						(int)opt->pids[i]);
		return;
	}
	if (opt->mode == MODE_DEMO) {
		snprintf(buf, len, "demo workload");
		return;
	}
	if (opt->mode == MODE_REPLAY) {
		snprintf(buf, len, "%s", opt->input_path);
		return;
	}
	for (char **a = opt->command; a && *a && off < len; a++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					a == opt->command ? "" : " ", *a);
}
