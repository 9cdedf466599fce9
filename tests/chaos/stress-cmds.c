#include "config.h"

/*
 * Command stress: the real collector thread on a launched full-speed
 * refault workload, while this thread (playing the UI) pushes thousands
 * of CMD_SET_PERIOD, CMD_TOGGLE_PAUSE, CMD_RESET, CMD_SORT and
 * CMD_SET_TOP commands and takes every frame, checking each with
 * frame_check().  The first period change also moves the launched
 * command from inherited per-CPU channels to per-thread ones.
 *
 * Built in every build; its point is the ThreadSanitizer build (the
 * hand-off through the two queues, the collector's own state), where
 * scripts/test runs it with halt_on_error.  Asserted here: every frame
 * passes frame_check(), the final frame arrives after CMD_QUIT, the
 * collector thread returns 0, samples were taken, and at least
 * STRESS_MIN_COMMANDS commands went through (the run lasts
 * STRESS_SECONDS, longer if needed, at most STRESS_MAX_SECONDS).
 *
 * Environment: MEMTOP_WORKLOAD (required), STRESS_SECONDS (default 4).
 */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "cli.h"
#include "cmd.h"
#include "collector.h"
#include "frame.h"
#include "launch.h"
#include "producer.h"
#include "queue.h"
#include "source.h"
#include "topo.h"

#define STRESS_MIN_COMMANDS	2000
#define STRESS_MAX_SECONDS	60
#define STRESS_QUIT_MS		5000

struct stress {
	struct source src;
	struct topo *topo;
	struct queue *frames;
	struct queue *cmds;
	struct collector *c;
	struct launch launch;
	bool launched;
	uint64_t pushed, refused, frames_seen, samples, bad_frames;
	bool final_seen;
};

static double
stress_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Takes every pending frame, checking each; a bad one is counted and
 * reported (the first five), and freed like the rest. */
static void
stress_take_frames(struct stress *s)
{
	struct frame *f;
	char why[256];

	while (queue_pop(s->frames, &f) == 0) {
		s->frames_seen++;
		if (frame_check(f, why, sizeof(why)) != 0) {
			if (s->bad_frames++ < 5)
				fprintf(stderr, "FAIL: frame %llu: %s\n",
					(unsigned long long)f->seq, why);
		}
		s->samples += f->totals.samples;
		if (f->final)
			s->final_seen = true;
		frame_free(f);
	}
}

/* One command of a fixed rotation, with pseudo-random values. */
static struct cmd
stress_next_cmd(uint64_t *x)
{
	struct cmd cmd = { 0 };

	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	switch (*x % 8) {
	case 0: case 1: case 2:
		cmd.type = CMD_SET_PERIOD;
		cmd.value = UINT64_C(1) << ((*x >> 8) % 11);
		break;
	case 3: case 4:
		cmd.type = CMD_TOGGLE_PAUSE;
		break;
	case 5:
		cmd.type = CMD_RESET;
		break;
	case 6:
		cmd.type = CMD_SORT;
		cmd.value = (*x >> 8) % SORT__COUNT;
		break;
	default:
		cmd.type = CMD_SET_TOP;
		cmd.value = 1 + (*x >> 8) % 200;
		break;
	}
	return cmd;
}

static int
stress_start(struct stress *s, const char *workload)
{
	static const char *const args[] = {
		"--mode", "refault", "--threads", "2", "--hot", "64",
		"--pages", "1024", "--interval-ms", "0", "--duration", "0",
		"--quiet", NULL,
	};
	char *argv[ARRAY_SIZE(args) + 1];
	struct collector_config cfg = { 0 };
	char err[512];
	sigset_t none;
	int ret;

	ret = source_select(SOURCE_FAULTS, &s->src, err, sizeof(err));
	if (ret < 0) {
		printf("SKIP: faults source: %s\n", err);
		return 77;
	}
	s->topo = topo_new_system();
	s->frames = queue_new(64, sizeof(struct frame *));
	s->cmds = queue_new(64, sizeof(struct cmd));
	if (!s->topo || !s->frames || !s->cmds)
		return 1;
	cfg.src = &s->src;
	cfg.topo = s->topo;
	cfg.period = 1;
	cfg.interval_s = 0.05;
	cfg.top_k = 50;
	cfg.ring_pages = 64;
	cfg.resolve_nodes = true;
	cfg.inherit_launched = true;
	cfg.frames = s->frames;
	cfg.cmds = s->cmds;
	ret = collector_new(&s->c, &cfg, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "FAIL: collector_new: %s\n", err);
		return 1;
	}
	argv[0] = (char *)workload;
	for (size_t i = 0; i < ARRAY_SIZE(args); i++)
		argv[i + 1] = (char *)args[i];
	sigemptyset(&none);
	if (launch_prepare(&s->launch, argv, &none) < 0)
		return 1;
	ret = collector_attach_child(s->c, s->launch.pid, err, sizeof(err));
	if (ret < 0) {
		launch_abort(&s->launch);
		if (ret == -EACCES || ret == -EPERM) {
			printf("SKIP: %s\n", err);
			return 77;
		}
		fprintf(stderr, "FAIL: attach: %s\n", err);
		return 1;
	}
	if (launch_go(&s->launch) < 0) {
		fprintf(stderr, "FAIL: cannot execute %s\n", workload);
		return 1;
	}
	s->launched = true;
	if (producer_start(collector_producer(s->c)) < 0)
		return 1;
	return 0;
}

static void
stress_hammer(struct stress *s, double seconds)
{
	struct pollfd pfd = { .fd = queue_fd(s->frames), .events = POLLIN };
	double now = stress_now(), end = now + seconds;
	double hard_end = now + STRESS_MAX_SECONDS;
	uint64_t x = 0x2545f4914f6cdd1d;

	/* A sanitizer build is slower: go on until enough commands went
	 * through, within STRESS_MAX_SECONDS. */
	while (now < end ||
	       (s->pushed < STRESS_MIN_COMMANDS && now < hard_end)) {
		/* Bursts of commands, then the frames that came meanwhile. */
		for (int i = 0; i < 16; i++) {
			struct cmd cmd = stress_next_cmd(&x);

			if (queue_push(s->cmds, &cmd) == 0)
				s->pushed++;
			else
				s->refused++;
		}
		poll(&pfd, 1, 1);
		stress_take_frames(s);
		now = stress_now();
	}
}

static int
stress_quit(struct stress *s)
{
	struct pollfd pfd = { .fd = queue_fd(s->frames), .events = POLLIN };
	struct cmd quit = { .type = CMD_QUIT };
	double end = stress_now() + STRESS_QUIT_MS / 1000.0;
	bool sent = false;
	int ret;

	while (!s->final_seen && stress_now() < end) {
		if (!sent)
			sent = queue_push(s->cmds, &quit) == 0;
		poll(&pfd, 1, 10);
		stress_take_frames(s);
	}
	ret = producer_join(collector_producer(s->c));
	stress_take_frames(s);
	if (!s->final_seen)
		fprintf(stderr, "FAIL: no final frame within %d ms of "
			"CMD_QUIT\n", STRESS_QUIT_MS);
	if (ret < 0)
		fprintf(stderr, "FAIL: collector thread: %s\n",
			strerror(-ret));
	return s->final_seen && ret == 0 ? 0 : 1;
}

static void
stress_cleanup(struct stress *s)
{
	if (s->launched && collector_child_wstatus(s->c) == -1) {
		kill(s->launch.pid, SIGTERM);
		waitpid(s->launch.pid, NULL, 0);
	}
	if (s->c)
		producer_free(collector_producer(s->c));
	if (s->frames)
		stress_take_frames(s);
	queue_free(s->frames);
	queue_free(s->cmds);
	topo_free(s->topo);
}

int
main(void)
{
	const char *workload = getenv("MEMTOP_WORKLOAD");
	const char *secs = getenv("STRESS_SECONDS");
	struct stress s = { 0 };
	int ret;

	if (!workload || access(workload, X_OK) != 0) {
		fprintf(stderr, "FAIL: MEMTOP_WORKLOAD does not name the "
			"workload generator\n");
		return 1;
	}
	ret = stress_start(&s, workload);
	if (ret == 0) {
		stress_hammer(&s, secs ? atof(secs) : 4.0);
		ret = stress_quit(&s);
	}
	stress_cleanup(&s);
	if (ret == 77)
		return 77;
	if (s.bad_frames || s.samples == 0 || s.pushed < STRESS_MIN_COMMANDS)
		ret = 1;
	printf("%s: %llu commands (%llu refused: queue full), %llu frames "
	       "checked (%llu bad), %llu samples\n", ret ? "FAIL" : "ok",
	       (unsigned long long)s.pushed, (unsigned long long)s.refused,
	       (unsigned long long)s.frames_seen,
	       (unsigned long long)s.bad_frames,
	       (unsigned long long)s.samples);
	return ret;
}
