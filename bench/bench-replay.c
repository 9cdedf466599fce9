#include "config.h"

/*
 * Replay throughput: writes a synthetic `perf mem record`-like capture
 * (tests/perfdata-synth.h: DATA_SRC, WEIGHT, PHYS_ADDR, 4 nodes) of
 * BENCH_SAMPLES samples, then times on that same file, in one run:
 *
 *   reader      perfdata_reader_next + record_parse_sample only
 *   replay      the replay thread in batch mode: reader, decoding, page
 *               table, node lookup, frames (what `memtop -i -b` does,
 *               minus writing the frames)
 *   memtop      `memtop -i FILE -b --json -d 1` end to end (--memtop PATH)
 *   perf        `perf report --mem-mode --sort=symbol_daddr --stdio`
 *
 * and prints each in samples/s beside the machine it ran on.  --quick
 * (meson's benchmark run) uses 1/100 of the samples.  Figures are
 * printed, not enforced.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "frame.h"
#include "perfdata-synth.h"
#include "perfdata_read.h"
#include "queue.h"
#include "record.h"
#include "replay.h"
#include "topo.h"

#define BENCH_SAMPLES	3000000ull

static double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
bench_machine(void)
{
	char line[256], model[256] = "unknown";
	struct utsname un;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon) {
			snprintf(model, sizeof(model), "%s", colon + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	uname(&un);
	printf("machine: %s, %ld CPUs online, Linux %s\n", model,
	       sysconf(_SC_NPROCESSORS_ONLN), un.release);
}

/* Reader and decoder alone.  Samples decoded, or -1. */
static long long
bench_reader(const char *path, double *secs)
{
	struct perfdata_reader *r;
	struct perfdata_record rec;
	long long n = 0;
	uint64_t sum = 0;
	char err[256];
	double t0 = bench_now();

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
	*secs = bench_now() - t0;
	perfdata_reader_free(r);
	return sum ? n : -1;
}

/* The replay thread, batch mode, frames taken and freed as they come. */
static long long
bench_replay(const char *path, double *secs)
{
	struct replay_config cfg = { 0 };
	struct perfdata_reader *r = NULL;
	struct replay *rp = NULL;
	struct topo *topo = NULL;
	struct frame *f;
	long long samples = -1;
	char err[256];
	bool final = false;
	double t0 = bench_now();

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
	    replay_start(rp) < 0)
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
	replay_join(rp);
	*secs = bench_now() - t0;
out:
	replay_free(rp);
	perfdata_reader_free(r);
	topo_free(topo);
	queue_free(cfg.frames);
	queue_free(cfg.cmds);
	return samples;
}

/* Runs argv with stdout and stderr to /dev/null; wall seconds or -1. */
static double
bench_command(const char *const argv[])
{
	double t0;
	int status;
	pid_t pid;

	fflush(stdout);		/* or the child's freopen writes it again */
	t0 = bench_now();
	pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) ||
		    !freopen("/dev/null", "w", stderr))
			_exit(127);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return bench_now() - t0;
}

static void
bench_line(const char *what, unsigned long long n, double secs)
{
	if (secs <= 0)
		printf("  %-58s   n/a\n", what);
	else
		printf("  %-58s %8.2f M samples/s  (%.2f s)\n", what,
		       (double)n / secs / 1e6, secs);
}

int
main(int argc, char **argv)
{
	struct synth_opts o;
	const char *memtop = getenv("MEMTOP");
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[512], err[256];
	double secs = 0, t0;
	long long n;
	int ret = 0;

	synth_defaults(&o);
	o.samples = BENCH_SAMPLES;
	o.pages = 65536;
	o.pids = 4;
	o.seconds = 30;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			o.samples = BENCH_SAMPLES / 100;
		else if (strcmp(argv[i], "--memtop") == 0 && i + 1 < argc)
			memtop = argv[++i];
		else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
			o.samples = strtoull(argv[++i], NULL, 0);
	}
	snprintf(path, sizeof(path), "%s/memtop-bench-replay.%d.data", tmp,
		 (int)getpid());
	bench_machine();
	t0 = bench_now();
	if (synth_write(path, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench-replay: %s\n", err);
		return 1;
	}
	printf("file: %llu samples (2 events, DATA_SRC + WEIGHT + PHYS_ADDR, "
	       "%d nodes, %llu pages x %d processes), written in %.2f s\n",
	       (unsigned long long)o.samples, o.nodes,
	       (unsigned long long)o.pages, o.pids, bench_now() - t0);

	n = bench_reader(path, &secs);
	if (n != (long long)o.samples) {
		fprintf(stderr, "bench-replay: reader saw %lld samples\n", n);
		ret = 1;
	}
	bench_line("reader + sample decoding", o.samples, secs);
	n = bench_replay(path, &secs);
	if (n != (long long)o.samples) {
		fprintf(stderr, "bench-replay: replay counted %lld samples\n",
			n);
		ret = 1;
	}
	bench_line("replay thread (memtop -i -b without output)", o.samples,
		   secs);
	if (memtop) {
		const char *args[] = { memtop, "-i", path, "-b", "--json",
				       "-d", "1", NULL };

		bench_line("memtop -i FILE -b --json -d 1", o.samples,
			   bench_command(args));
	}
	{
		const char *args[] = { "perf", "report", "--mem-mode",
				       "--sort=symbol_daddr", "-i", path,
				       "--stdio", NULL };

		bench_line("perf report --mem-mode --sort=symbol_daddr",
			   o.samples, bench_command(args));
	}
	unlink(path);
	return ret;
}
