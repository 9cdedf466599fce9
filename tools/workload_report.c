#include "config.h"

/* memtop-workload ground truth: the hot page list (--print-hot) written
 * before the start gate, and the JSON summary (--report) written after
 * every worker is joined.  Main thread only.
 *
 * Report object, one line:
 *   {"pid":P, "mode":"refault", "threads":T+L, "early_threads":T,
 *    "late_threads":L, "rounds":sum over workers, "pages":N,
 *    "region":"0x..", "stride":pages/hot, "skew":S, "write_ratio":R,
 *    "exit_signal":0,
 *    "hot":[{"addr":"0x..","faults":f,"reads":r,"writes":w,
 *            "owner":i,"tid":t}, ...],
 *    "workers":[{"index":i,"tid":t,"late":false,"started":true,
 *                "rounds":n,"touched_pages":m,"start_ns":s}, ...],
 *    "faults":sum of hot faults, "touched_pages":sum, "rusage_minflt":n,
 *    "touches":t, "run_s":s, "touches_per_s":t/s}
 * touches counts every touch the workers made (refault and access: each
 * read or write of a hot page; touch: each region page), run_s the time
 * from the workers' start to their join: the generator's throughput,
 * which tells how much a sampler slows it down.
 * hot[] is in hot page order j = 0..hot-1; "tid" is 0 for a worker that
 * never started.  start_ns is CLOCK_MONOTONIC at the worker thread's first
 * instruction (0 if it never started). */

#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "workload.h"

const char *workload_report_mode_name(enum workload_mode mode)
{
	switch (mode) {
	case WORKLOAD_MODE_TOUCH:
		return "touch";
	case WORKLOAD_MODE_REFAULT:
		return "refault";
	case WORKLOAD_MODE_ACCESS:
		return "access";
	}
	return "unknown";
}

static FILE *workload_report_open(const char *path)
{
	if (strcmp(path, "-") == 0)
		return stdout;
	return fopen(path, "w");
}

/* Closes (or, for stdout, flushes) and returns 0 or -errno, so a full
 * disk is an error, not a short file. */
static int workload_report_close(FILE *f)
{
	int err = ferror(f) ? -EIO : 0;

	if (f == stdout) {
		if (fflush(f) != 0 && !err)
			err = -errno;
	} else if (fclose(f) != 0 && !err) {
		err = -errno;
	}
	return err;
}

static int workload_report_fail(const char *what, const char *path, int err)
{
	fprintf(stderr, "memtop-workload: %s '%s': %s\n", what, path,
		strerror(-err));
	return err;
}

int workload_report_print_hot(const struct workload *wl, const char *path)
{
	unsigned long j;
	FILE *f;
	int ret;

	f = workload_report_open(path);
	if (!f)
		return workload_report_fail("cannot write --print-hot", path,
					    -errno);
	for (j = 0; j < wl->opts->hot; j++)
		fprintf(f, "0x%lx\n", (unsigned long)workload_hot_addr(wl, j));
	ret = workload_report_close(f);
	if (ret < 0)
		return workload_report_fail("cannot write --print-hot", path,
					    ret);
	return 0;
}

static void workload_report_hot(const struct workload *wl, FILE *f)
{
	unsigned long j;

	fputs("\"hot\":[", f);
	for (j = 0; j < wl->opts->hot; j++) {
		const struct workload_hot *h = &wl->hot[j];
		const struct workload_worker *w;

		w = &wl->workers[j % wl->nr_workers];
		fprintf(f, "%s{\"addr\":\"0x%lx\",\"faults\":%llu,"
			"\"reads\":%llu,\"writes\":%llu,\"owner\":%u,"
			"\"tid\":%d}",
			j ? "," : "", (unsigned long)workload_hot_addr(wl, j),
			(unsigned long long)h->faults,
			(unsigned long long)h->reads,
			(unsigned long long)h->writes, w->index, (int)w->tid);
	}
	fputs("],", f);
}

static void workload_report_workers(const struct workload *wl, FILE *f)
{
	unsigned int i;

	fputs("\"workers\":[", f);
	for (i = 0; i < wl->nr_workers; i++) {
		const struct workload_worker *w = &wl->workers[i];

		fprintf(f, "%s{\"index\":%u,\"tid\":%d,\"late\":%s,"
			"\"started\":%s,\"rounds\":%llu,"
			"\"touched_pages\":%llu,\"start_ns\":%llu}",
			i ? "," : "", i, (int)w->tid,
			w->late ? "true" : "false",
			w->started ? "true" : "false",
			(unsigned long long)w->rounds,
			(unsigned long long)w->touched_pages,
			(unsigned long long)w->start_ns);
	}
	fputs("],", f);
}

/* Only after workload_run() has joined the workers. */
int workload_report_write(const struct workload *wl, const char *path)
{
	const struct workload_opts *opts = wl->opts;
	unsigned long long rounds = 0, faults = 0, touched = 0, touches = 0;
	struct rusage ru;
	unsigned long j;
	unsigned int i;
	FILE *f;
	int ret;

	for (i = 0; i < wl->nr_workers; i++) {
		rounds += wl->workers[i].rounds;
		touched += wl->workers[i].touched_pages;
	}
	for (j = 0; j < opts->hot; j++) {
		faults += wl->hot[j].faults;
		touches += wl->hot[j].reads + wl->hot[j].writes;
	}
	if (opts->mode == WORKLOAD_MODE_TOUCH)
		touches = touched;
	if (getrusage(RUSAGE_SELF, &ru) < 0)
		memset(&ru, 0, sizeof(ru));

	f = workload_report_open(path);
	if (!f)
		return workload_report_fail("cannot write --report", path,
					    -errno);
	fprintf(f, "{\"pid\":%d,\"mode\":\"%s\",\"threads\":%u,"
		"\"early_threads\":%u,\"late_threads\":%u,\"rounds\":%llu,"
		"\"pages\":%lu,\"region\":\"0x%lx\",\"stride\":%lu,"
		"\"skew\":%g,\"write_ratio\":%g,\"exit_signal\":%d,",
		(int)getpid(), workload_report_mode_name(opts->mode),
		wl->nr_workers, opts->threads, opts->late_threads, rounds,
		opts->pages, (unsigned long)wl->region, wl->stride,
		opts->skew, opts->write_ratio, wl->exit_signal);
	workload_report_hot(wl, f);
	workload_report_workers(wl, f);
	fprintf(f, "\"faults\":%llu,\"touched_pages\":%llu,"
		"\"rusage_minflt\":%ld,\"touches\":%llu,\"run_s\":%.6f,"
		"\"touches_per_s\":%.0f}\n", faults, touched, ru.ru_minflt,
		touches, wl->run_s,
		wl->run_s > 0 ? (double)touches / wl->run_s : 0.0);
	ret = workload_report_close(f);
	if (ret < 0)
		return workload_report_fail("cannot write --report", path,
					    ret);
	return 0;
}
