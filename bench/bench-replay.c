#include "config.h"

/*
 * Replay throughput: writes a synthetic `perf mem record`-like capture
 * (tests/lib/perfdata-synth.h: DATA_SRC, WEIGHT, PHYS_ADDR, 4 nodes) of
 * BENCH_SAMPLES samples, then times on that same file, in one run:
 *
 *   reader      perfdata_reader_next + record_parse_sample only
 *   replay      the replay thread in batch mode: reader, decoding, page
 *               table, node lookup, frames (what `memtop -i -b` does,
 *               minus writing the frames)
 *   memtop      `memtop -i FILE -b --json -d 1` end to end (--memtop PATH)
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
#include "cmd.h"
#include "frame.h"
#include "perfdata-synth.h"
#include "perfdata_read.h"
#include "producer.h"
#include "queue.h"
#include "record.h"
#include "replay.h"
#include "topo.h"

#define BENCH_SAMPLES	3000000ull

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
static long long
bench_replay(const char *path, struct bench_time *bt)
{
	struct replay_config cfg = { 0 };
	struct perfdata_reader *r = NULL;
	struct replay *rp = NULL;
	struct topo *topo = NULL;
	struct frame *f;
	long long samples = -1;
	char err[256];
	bool final = false;
	double t0 = benchlib_now();
	double c0 = bench_clock(CLOCK_PROCESS_CPUTIME_ID);

	cfg.frames = queue_new(64, sizeof(struct frame *));
	cfg.cmds = queue_new(64, sizeof(struct cmd));
	if (!cfg.frames || !cfg.cmds ||
	    perfdata_reader_open(&r, path, err, sizeof(err)) < 0)
		goto out;
	topo = perfdata_info_topo(perfdata_reader_info(r), err, sizeof(err));
	if (!topo)
		goto out;
	cfg.reader = r;
	cfg.topo = topo;
	cfg.path = path;
	cfg.interval_s = 1.0;
	cfg.top_k = 20;
	cfg.batch = true;
	if (replay_new(&rp, &cfg, err, sizeof(err)) < 0 ||
	    producer_start(replay_producer(rp)) < 0)
		goto out;
	while (!final) {
		if (queue_pop(cfg.frames, &f) < 0) {
			usleep(1000);
			continue;
		}
		final = f->final;
		if (final)
			samples = (long long)f->cumulative.samples;
		frame_free(f);
	}
	producer_join(replay_producer(rp));
	bt->wall = benchlib_now() - t0;
	bt->cpu = bench_clock(CLOCK_PROCESS_CPUTIME_ID) - c0;
out:
	if (rp)
		producer_free(replay_producer(rp));
	perfdata_reader_free(r);
	topo_free(topo);
	queue_free(cfg.frames);
	queue_free(cfg.cmds);
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

static void
bench_args(int argc, char **argv, struct synth_opts *o, const char **memtop)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			o->samples = BENCH_SAMPLES / 100;
		else if (strcmp(argv[i], "--memtop") == 0 && i + 1 < argc)
			*memtop = argv[++i];
		else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
			o->samples = strtoull(argv[++i], NULL, 0);
	}
}

/* A name of this run's own (mkstemps): another run's file, or one left by
 * a run killed before its unlink, is never written over.  0 or -1. */
static int
bench_temp_file(char *path, size_t len)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int fd;

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

int
main(int argc, char **argv)
{
	struct synth_opts o;
	const char *memtop = getenv("MEMTOP");
	char path[512], err[256];
	struct bench_time bt = { 0 }, mt = { -1, -1 }, pr = { -1, -1 };
	double t0;
	long long n;
	int ret = 0;

	synth_defaults(&o);
	o.samples = BENCH_SAMPLES;
	o.pages = 65536;
	o.pids = 4;
	o.seconds = 30;
	bench_args(argc, argv, &o, &memtop);
	if (bench_temp_file(path, sizeof(path)) < 0)
		return 1;
	benchlib_print_machine();
	t0 = benchlib_now();
	if (synth_write(path, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench-replay: %s\n", err);
		unlink(path);
		return 1;
	}
	printf("file: %llu samples (2 events, DATA_SRC + WEIGHT + PHYS_ADDR, "
	       "%d nodes, %llu pages x %d processes), written in %.2f s\n",
	       (unsigned long long)o.samples, o.nodes,
	       (unsigned long long)o.pages, o.pids, benchlib_now() - t0);

	n = bench_reader(path, &bt);
	if (n != (long long)o.samples) {
		fprintf(stderr, "bench-replay: reader saw %lld samples\n", n);
		ret = 1;
	}
	bench_line("reader + sample decoding", o.samples, bt);
	n = bench_replay(path, &bt);
	if (n != (long long)o.samples) {
		fprintf(stderr, "bench-replay: replay counted %lld samples\n",
			n);
		ret = 1;
	}
	bench_line("replay thread (memtop -i -b, no output)", o.samples, bt);
	if (memtop) {
		const char *args[] = { memtop, "-i", path, "-b", "--json",
				       "-d", "1", NULL };

		mt = bench_command(args);
		bench_line("memtop -i FILE -b --json -d 1", o.samples, mt);
	}
	{
		const char *args[] = { "perf", "report", "--mem-mode",
				       "--sort=symbol_daddr", "-i", path,
				       "--stdio", NULL };

		pr = bench_command(args);
		bench_line("perf report --mem-mode --sort=symbol_daddr",
			   o.samples, pr);
	}
	/* The target: memtop -i at >= 20 x perf report's rate. */
	if (mt.wall > 0 && mt.cpu > 0 && pr.wall > 0 && pr.cpu > 0)
		printf("  memtop -i / perf report: %.1f x by wall clock, %.1f x "
		       "by CPU time (target 20 x)\n", pr.wall / mt.wall,
		       pr.cpu / mt.cpu);
	unlink(path);
	return ret;
}
