#include "config.h"

/*
 * Replay throughput on three capture shapes (issue 15), each timed in
 * the same run as perf report on the same file:
 *
 *   page faults   a real `perf record -e page-faults -c 1 -d` capture of
 *                 memtop-workload refaulting 4096 hot pages
 *                 (BENCH_FAULT_ROUNDS rounds: about 2.4 M samples; needs
 *                 --workload PATH and perf, else it says why it is left
 *                 out)
 *   perf mem      a synthetic `perf mem record`-like capture
 *                 (tests/lib/perfdata-synth.h: two events, DATA_SRC and
 *                 WEIGHT, 4 processes of 64 Ki pages), BENCH_SAMPLES
 *   system-wide   the same with PHYS_ADDR and MEM_TOPOLOGY, 64 processes
 *                 over 64 CPUs on 4 nodes (as `perf mem record -a
 *                 --phys-data`), BENCH_SAMPLES
 *
 * and on each:
 *
 *   reader      perfdata_reader_next + record_parse_sample only
 *   replay      the replay thread in batch mode: reader, decoding, page
 *               table, node lookup, frames (what `memtop -i -b` does,
 *               minus writing the frames)
 *   memtop      `memtop -i FILE -b --json -d 1` end to end (--memtop PATH),
 *               as it chooses (the aggregation on a thread of its own
 *               from four CPUs on), with MEMTOP_REPLAY_THREADS=1 and =2:
 *               the median of BENCH_RUNS runs of each, interleaved
 *   perf        `perf report --mem-mode --sort=symbol_daddr --stdio`
 *
 * and prints each in samples/s beside the machine it ran on, by wall
 * clock and by CPU time (the thread's, the process's or the child's
 * user + system), then memtop's ratio to perf report both ways: on a
 * machine shared with other work the CPU figures move far less.  --quick
 * (meson's benchmark run) uses 1/100 of the samples.  Figures are
 * printed, not enforced.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"
#include "frame.h"
#include "perfdata-synth.h"
#include "perfdata_read.h"
#include "record.h"
#include "replay-run.h"
#include "replay.h"

#define BENCH_SAMPLES	3000000ull
#define BENCH_FAULT_HOT	4096
#define BENCH_FAULT_ROUNDS	600	/* --quick: 8 */

static double
bench_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wall and CPU seconds of one measurement; <= 0 = failed. */
struct bench_time {
	double wall;
	double cpu;
};

/* Reader and decoder alone.  Samples decoded, or -1. */
static long long
bench_reader(const char *path, struct bench_time *bt)
{
	struct perfdata_reader *r;
	struct perfdata_record rec;
	long long n = 0;
	uint64_t sum = 0;
	char err[256];
	double t0 = benchlib_now();
	double c0 = bench_clock(CLOCK_THREAD_CPUTIME_ID);

	if (perfdata_reader_open(&r, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench-replay: %s\n", err);
		return -1;
	}
	while (perfdata_reader_next(r, &rec, err, sizeof(err)) == 1) {
		const struct perfdata_event *ev =
			perfdata_reader_event(r, rec.event_idx);
		struct record_sample s;

		if (rec.hdr->type == PERF_RECORD_SAMPLE && ev &&
		    record_parse_sample(&ev->layout, rec.hdr, &s) == 0) {
			sum += s.addr;
			n++;
		}
	}
	bt->wall = benchlib_now() - t0;
	bt->cpu = bench_clock(CLOCK_THREAD_CPUTIME_ID) - c0;
	perfdata_reader_free(r);
	return sum ? n : -1;
}

/* The replay thread, batch mode, frames taken and freed as they come;
 * CPU is the process's (this thread mostly sleeps). */
static void
bench_replay_frame(const struct frame *f, void *ctx)
{
	if (f->final)
		*(long long *)ctx = (long long)f->cumulative.samples;
}

static long long
bench_replay(const char *path, struct bench_time *bt)
{
	struct replay_run rr;
	long long samples = -1;
	char err[256];
	double t0 = benchlib_now();
	double c0 = bench_clock(CLOCK_PROCESS_CPUTIME_ID);

	if (replay_run_open(&rr, path, 64, 1.0, 20, true, false, err,
			    sizeof(err)) == 0 &&
	    replay_run_frames(&rr, bench_replay_frame, &samples) == 0) {
		bt->wall = benchlib_now() - t0;
		bt->cpu = bench_clock(CLOCK_PROCESS_CPUTIME_ID) - c0;
	} else {
		samples = -1;
	}
	replay_run_close(&rr);
	return samples;
}

/* Runs argv with stdout and stderr to /dev/null; wall and CPU seconds
 * (the child's user + system), or -1. */
static struct bench_time
bench_command(const char *const argv[])
{
	struct bench_time bt = { -1, -1 };
	struct rusage ru;
	double t0;
	int status;
	pid_t pid;

	fflush(stdout);		/* or the child's freopen writes it again */
	t0 = benchlib_now();
	pid = fork();

	if (pid < 0)
		return bt;
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) ||
		    !freopen("/dev/null", "w", stderr))
			_exit(127);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return bt;
	bt.wall = benchlib_now() - t0;
	bt.cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	return bt;
}

#define BENCH_RUNS	5	/* memtop -i runs of each kind, median */

static int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of n runs' wall and CPU times (each on its own); -1 when a
 * run failed. */
static struct bench_time
bench_median(struct bench_time *runs, size_t n)
{
	double wall[BENCH_RUNS], cpu[BENCH_RUNS];
	struct bench_time bt = { -1, -1 };

	for (size_t i = 0; i < n; i++) {
		if (runs[i].wall <= 0)
			return bt;
		wall[i] = runs[i].wall;
		cpu[i] = runs[i].cpu;
	}
	qsort(wall, n, sizeof(wall[0]), bench_cmp_double);
	qsort(cpu, n, sizeof(cpu[0]), bench_cmp_double);
	bt.wall = wall[n / 2];
	bt.cpu = cpu[n / 2];
	return bt;
}

/*
 * memtop -i on path BENCH_RUNS times each way of collector/replay/
 * replay_pipe.h, the three interleaved so that a change of the machine's
 * load falls on all: as memtop chooses (the aggregation on its own
 * thread from four CPUs on), MEMTOP_REPLAY_THREADS=1 and =2.  Medians.
 */
static void
bench_memtop(const char *memtop, const char *path, struct bench_time out[3])
{
	static const char *const env[3] = { NULL, "1", "2" };
	const char *args[] = { memtop, "-i", path, "-b", "--json", "-d", "1",
			       NULL };
	struct bench_time runs[3][BENCH_RUNS];

	for (size_t r = 0; r < BENCH_RUNS; r++) {
		for (size_t k = 0; k < 3; k++) {
			if (env[k])
				setenv("MEMTOP_REPLAY_THREADS", env[k], 1);
			runs[k][r] = bench_command(args);
			unsetenv("MEMTOP_REPLAY_THREADS");
		}
	}
	for (size_t k = 0; k < 3; k++)
		out[k] = bench_median(runs[k], BENCH_RUNS);
}

static void
bench_line(const char *what, unsigned long long n, struct bench_time bt)
{
	if (bt.wall <= 0 || bt.cpu <= 0)
		printf("  %-44s   n/a\n", what);
	else
		printf("  %-44s %7.2f M samples/s (%6.2f s), by CPU %7.2f M/s "
		       "(%6.2f s)\n", what, (double)n / bt.wall / 1e6,
		       bt.wall, (double)n / bt.cpu / 1e6, bt.cpu);
}

/* The command line: --quick, --memtop PATH, --workload PATH, --samples N
 * (the synthetic shapes'), --keep DIR (the captures are written to
 * DIR/faults.data, DIR/mem.data and DIR/phys.data and kept, for a
 * profile or a comparison of frames: bench/replay-same.sh), --write-only
 * (with --keep: the captures and nothing else), --shapes LIST (a comma-
 * separated subset of faults, mem and phys; default all three: a before/
 * after comparison of one shape need not wait for perf report on the
 * others). */
struct bench_opts {
	unsigned long long samples;
	unsigned fault_rounds;
	const char *memtop, *workload, *keep;
	bool write_only;
	const char *shapes;
};

/* Whether --shapes names this shape (every one without --shapes). */
static bool
bench_wants(const struct bench_opts *o, const char *shape)
{
	size_t n = strlen(shape);

	for (const char *p = o->shapes; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (strncmp(p, shape, n) == 0 && (p[n] == ',' || !p[n]))
			return true;
	}
	return !o->shapes;
}

static void
bench_args(int argc, char **argv, struct bench_opts *o)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			o->samples = BENCH_SAMPLES / 100;
			o->fault_rounds = 8;
		} else if (strcmp(argv[i], "--memtop") == 0 && i + 1 < argc) {
			o->memtop = argv[++i];
		} else if (strcmp(argv[i], "--workload") == 0 &&
			   i + 1 < argc) {
			o->workload = argv[++i];
		} else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc) {
			o->keep = argv[++i];
		} else if (strcmp(argv[i], "--shapes") == 0 && i + 1 < argc) {
			o->shapes = argv[++i];
		} else if (strcmp(argv[i], "--write-only") == 0) {
			o->write_only = true;
		} else if (strcmp(argv[i], "--samples") == 0 &&
			   i + 1 < argc) {
			o->samples = strtoull(argv[++i], NULL, 0);
		}
	}
}

/* A name of this run's own (mkstemps): another run's file, or one left by
 * a run killed before its unlink, is never written over; with --keep,
 * DIR/name.  0 or -1. */
static int
bench_temp_file(char *path, size_t len, const struct bench_opts *o,
		const char *name)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int fd;

	if (o->keep) {
		snprintf(path, len, "%s/%s.data", o->keep, name);
		return 0;
	}
	snprintf(path, len, "%s/memtop-bench-replay.XXXXXX.data", tmp);
	fd = mkstemps(path, 5);
	if (fd < 0) {
		fprintf(stderr, "bench-replay: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/* Removes a capture unless --keep asked for it. */
static void
bench_drop(const char *path, const struct bench_opts *o)
{
	if (!o->keep)
		unlink(path);
}

/*
 * Times the reader, the replay thread, memtop -i and perf report on path
 * and prints memtop's ratio to perf report.  want: the file's samples (0:
 * whatever the reader finds).  0, or -1 when a count is wrong.
 */
static int
bench_shape(const char *path, long long want, const struct bench_opts *o)
{
	static const char *const ways[3] = {
		"memtop -i / perf report", "with MEMTOP_REPLAY_THREADS=1",
		"with MEMTOP_REPLAY_THREADS=2",
	};
	struct bench_time bt = { 0 }, pr = { -1, -1 };
	struct bench_time mt[3] = { { -1, -1 }, { -1, -1 }, { -1, -1 } };
	long long n = bench_reader(path, &bt);
	int ret = 0;

	if (n <= 0 || (want && n != want)) {
		fprintf(stderr, "bench-replay: reader saw %lld samples\n", n);
		return -1;
	}
	bench_line("reader + sample decoding", (unsigned long long)n, bt);
	if (bench_replay(path, &bt) != n) {
		fprintf(stderr, "bench-replay: replay counted other than "
			"%lld samples\n", n);
		ret = -1;
	}
	bench_line("replay thread (memtop -i -b, no output)",
		   (unsigned long long)n, bt);
	if (o->memtop) {
		bench_memtop(o->memtop, path, mt);
		bench_line("memtop -i FILE -b --json -d 1", (unsigned long long)n,
			   mt[0]);
		bench_line("  the same, MEMTOP_REPLAY_THREADS=1",
			   (unsigned long long)n, mt[1]);
		bench_line("  the same, MEMTOP_REPLAY_THREADS=2",
			   (unsigned long long)n, mt[2]);
	}
	{
		const char *args[] = { "perf", "report", "--mem-mode",
				       "--sort=symbol_daddr", "-i", path,
				       "--stdio", NULL };

		struct bench_time runs[3];

		/* Three runs, the median, where one takes under 10 s (the
		 * page-fault capture's): a short run moves with the load. */
		pr = runs[0] = bench_command(args);
		if (pr.wall > 0 && pr.wall < 10) {
			runs[1] = bench_command(args);
			runs[2] = bench_command(args);
			pr = bench_median(runs, 3);
		}
		bench_line("perf report --mem-mode --sort=symbol_daddr",
			   (unsigned long long)n, pr);
	}
	/* The target: memtop -i at >= 20 x perf report's rate. */
	for (size_t k = 0; k < 3; k++)
		if (mt[k].wall > 0 && mt[k].cpu > 0 && pr.wall > 0 &&
		    pr.cpu > 0)
			printf("  %s: %.1f x by wall clock, %.1f x by CPU "
			       "time%s\n", ways[k], pr.wall / mt[k].wall,
			       pr.cpu / mt[k].cpu, k ? "" : " (target 20 x)");
	return ret;
}

/* A synthetic shape: writes it to path, then bench_shape. */
static int
bench_synth(const char *path, const struct synth_opts *so,
	    const struct bench_opts *o, const char *label)
{
	char err[256];
	double t0 = benchlib_now();

	if (synth_write(path, so, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench-replay: %s\n", err);
		return -1;
	}
	printf("\n%s: %llu samples (2 events, DATA_SRC + WEIGHT%s, %d nodes, "
	       "%d CPUs, %llu pages x %d processes), written in %.2f s\n",
	       label, (unsigned long long)so->samples,
	       so->phys ? " + PHYS_ADDR" : "", so->nodes, so->cpus,
	       (unsigned long long)so->pages, so->pids, benchlib_now() - t0);
	return o->write_only ? 0 : bench_shape(path, (long long)so->samples, o);
}

/* The page-fault shape: perf record of the workload into path.  1 when
 * it cannot be made here (said why), else as bench_shape. */
static int
bench_faults(const char *path, const struct bench_opts *o)
{
	char hot[16], rounds[16];
	const char *args[] = { "perf", "record", "-q", "-e", "page-faults",
			       "-c", "1", "-d", "-o", path, "--",
			       o->workload, "--mode", "refault",
			       "--interval-ms", "0", "--hot", hot,
			       "--pages", "8192", "--rounds", rounds,
			       "--duration", "0", "--quiet", NULL };
	struct bench_time bt;
	double t0 = benchlib_now();

	if (!o->workload) {
		printf("\npage faults: left out (no --workload PATH)\n");
		return 1;
	}
	snprintf(hot, sizeof(hot), "%d", BENCH_FAULT_HOT);
	snprintf(rounds, sizeof(rounds), "%u", o->fault_rounds);
	bt = bench_command(args);
	if (bt.wall <= 0) {
		printf("\npage faults: left out (perf record -e page-faults "
		       "failed: no perf, or no permission to sample)\n");
		return 1;
	}
	printf("\npage faults: perf record -e page-faults -c 1 -d of "
	       "memtop-workload refaulting %d pages x %u rounds, recorded "
	       "in %.2f s\n", BENCH_FAULT_HOT, o->fault_rounds,
	       benchlib_now() - t0);
	return o->write_only ? 0 : bench_shape(path, 0, o);
}

/* A synthetic shape when --shapes names it: written, replayed beside
 * perf report, dropped unless kept.  -1: no temporary file; 1: the run
 * failed; 0. */
static int
bench_synth_shape(const struct bench_opts *o, const struct synth_opts *so,
		  const char *shape, const char *label)
{
	char path[512];
	int ret;

	if (!bench_wants(o, shape))
		return 0;
	if (bench_temp_file(path, sizeof(path), o, shape) < 0)
		return -1;
	ret = bench_synth(path, so, o, label) < 0;
	bench_drop(path, o);
	return ret;
}

int
main(int argc, char **argv)
{
	struct bench_opts o = { BENCH_SAMPLES, BENCH_FAULT_ROUNDS,
				getenv("MEMTOP"), NULL, NULL, false, NULL };
	struct synth_opts so;
	char path[512];
	int ret = 0, r;

	bench_args(argc, argv, &o);
	if (o.write_only && !o.keep) {
		fprintf(stderr, "bench-replay: --write-only needs --keep DIR\n");
		return 2;
	}
	printf("memtop replay benchmark: memtop -i beside perf report "
	       "--mem-mode on three capture shapes\n");
	benchlib_print_machine();
	if (bench_wants(&o, "faults")) {
		if (bench_temp_file(path, sizeof(path), &o, "faults") < 0)
			return 1;
		if (bench_faults(path, &o) < 0)
			ret = 1;
		bench_drop(path, &o);
	}
	synth_defaults(&so);
	so.samples = o.samples;
	so.pages = 65536;
	so.pids = 4;
	so.seconds = 30;
	so.phys = false;
	r = bench_synth_shape(&o, &so, "mem", "perf mem");
	if (r < 0)
		return 1;
	ret |= r;
	so.phys = true;
	so.pids = 64;
	so.cpus = 64;
	so.pages = 4096;
	r = bench_synth_shape(&o, &so, "phys", "system-wide PHYS_ADDR");
	return r < 0 ? 1 : ret | r;
}
