#include "config.h"

/* memtop-workload entry point: parse, set up, print the hot set, wait for
 * the start gate, run, report.  Exit status: 0 done (also when --duration
 * cut the rounds short), 1 runtime failure, 2 usage error (including a
 * NUMA node or CPU this machine does not have), 128+N after signal N. */

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "workload.h"

static void workload_banner(const struct workload *wl)
{
	const struct workload_opts *opts = wl->opts;

	fprintf(stderr, "memtop-workload: pid %d, %s, region 0x%lx, %lu pages,"
		" %lu hot (every %lu), %u+%u threads\n", (int)getpid(),
		workload_report_mode_name(opts->mode),
		(unsigned long)wl->region,
		opts->pages, opts->hot, wl->stride, opts->threads,
		opts->late_threads);
}

static void workload_summary(const struct workload *wl)
{
	unsigned long long faults = 0, rounds = 0;
	unsigned long j;
	unsigned int i;

	for (j = 0; j < wl->opts->hot; j++)
		faults += wl->hot[j].faults;
	for (i = 0; i < wl->nr_workers; i++)
		rounds += wl->workers[i].rounds;
	fprintf(stderr, "memtop-workload: done, %llu rounds, %llu faults on "
		"hot pages\n", rounds, faults);
}

int main(int argc, char **argv)
{
	struct workload_opts opts;
	struct workload wl;
	int status = 0;
	int ret;

	ret = workload_cli_parse(&opts, argc, argv);
	if (ret != 0) {
		workload_cli_fini(&opts);
		return ret > 0 ? 0 : 2;
	}
	ret = workload_init(&wl, &opts);
	if (ret < 0) {
		workload_cli_fini(&opts);
		return ret == -EINVAL ? 2 : 1;
	}
	if (!opts.quiet)
		workload_banner(&wl);
	if (opts.print_hot_path) {
		ret = workload_report_print_hot(&wl, opts.print_hot_path);
		if (ret < 0)
			goto out_fini;
	}
	ret = workload_wait_start(&wl);
	if (ret < 0)
		goto out_fini;
	if (!wl.exit_signal) {
		ret = workload_run(&wl);
		if (ret < 0)
			goto out_fini;
	}
	if (!opts.quiet)
		workload_summary(&wl);
	if (opts.report_path)
		ret = workload_report_write(&wl, opts.report_path);

out_fini:
	if (ret < 0)
		status = 1;
	else if (wl.exit_signal)
		status = 128 + wl.exit_signal;
	workload_fini(&wl);
	workload_cli_fini(&opts);
	return status;
}
