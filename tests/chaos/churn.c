#include "config.h"

/*
 * Thread and process churn for the chaos tests: a target whose threads and
 * child processes come and go as fast as they can while memtop watches.
 *
 * Until --duration ends (or --waves waves are done) it starts a wave of
 * --batch threads, each faulting --pages fresh pages and exiting, and
 * joins them; every --fork-every waves it forks a child that faults
 * --pages pages (in a thread of its own too, so the child's FORK records
 * cover both kinds) and exits.  --idle-threads N threads live the whole
 * run and fault one page every 20 ms, so a target can hold hundreds of
 * threads at once.
 *
 * --report FILE gets a JSON summary at exit: the pid, how many threads and
 * children were created, and every child pid, so a test can tell whether
 * memtop attributed a sample to a pid that was never ours.
 *
 * --hold FILE stops twice at a quiescent point, where only the main and
 * the idle threads are alive and no child is: once the idle threads run,
 * before the first wave ("PID before"), and after the last wave, every
 * short thread joined and every child reaped ("PID after").  At each it
 * appends that line to FILE and waits for SIGUSR1 (60 s at most), so a
 * test can count memtop's descriptors while the target's threads are
 * known exactly.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHURN_PAGE	4096u
#define CHURN_MAX_BATCH	256

struct churn_opts {
	double duration_s;
	long waves;		/* 0 = until duration */
	unsigned batch;
	unsigned fork_every;	/* 0 = never fork */
	unsigned pages;
	unsigned idle_threads;
	double start_delay_s;
	const char *report;
	const char *hold;
};

struct churn_state {
	const struct churn_opts *o;
	atomic_bool stop;
	unsigned long threads_made;
	unsigned long thread_failures;
	unsigned long forks;
	pid_t *children;
	size_t n_children;
	size_t cap_children;
};

static double
churn_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Faults n fresh anonymous pages: one write fault each. */
static void
churn_fault_pages(unsigned n)
{
	size_t len = (size_t)n * CHURN_PAGE;
	volatile char *p;

	if (n == 0)
		return;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	for (size_t i = 0; i < len; i += CHURN_PAGE)
		p[i] = 1;
	munmap((void *)p, len);
}

static void *
churn_short_thread(void *arg)
{
	const struct churn_opts *o = arg;

	churn_fault_pages(o->pages);
	return NULL;
}

static void *
churn_idle_thread(void *arg)
{
	struct churn_state *st = arg;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	volatile char *p;

	p = mmap(NULL, CHURN_PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	while (!atomic_load(&st->stop)) {
		p[0] = 1;
		madvise((void *)p, CHURN_PAGE, MADV_DONTNEED);
		nanosleep(&ts, NULL);
	}
	munmap((void *)p, CHURN_PAGE);
	return NULL;
}

/* The child: a thread of its own, faults, exits without atexit work. */
static void
churn_child(const struct churn_opts *o)
{
	pthread_t t;

	if (pthread_create(&t, NULL, churn_short_thread, (void *)o) == 0)
		pthread_join(t, NULL);
	churn_fault_pages(o->pages);
	_exit(0);
}

static void
churn_fork(struct churn_state *st)
{
	pid_t pid;

	if (st->n_children == st->cap_children) {
		size_t cap = st->cap_children ? 2 * st->cap_children : 64;
		pid_t *n = realloc(st->children, cap * sizeof(*n));

		if (!n)
			return;
		st->children = n;
		st->cap_children = cap;
	}
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0)
		churn_child(st->o);
	st->children[st->n_children++] = pid;
	st->forks++;
	waitpid(pid, NULL, 0);
}

static void
churn_wave(struct churn_state *st)
{
	pthread_t t[CHURN_MAX_BATCH];
	bool made[CHURN_MAX_BATCH];

	for (unsigned i = 0; i < st->o->batch; i++) {
		made[i] = pthread_create(&t[i], NULL, churn_short_thread,
					 (void *)st->o) == 0;
		if (made[i])
			st->threads_made++;
		else
			st->thread_failures++;
	}
	for (unsigned i = 0; i < st->o->batch; i++)
		if (made[i])
			pthread_join(t[i], NULL);
}

static int
churn_write_report(const struct churn_state *st, double elapsed)
{
	FILE *f = strcmp(st->o->report, "-") ? fopen(st->o->report, "w") :
					       stdout;

	if (!f) {
		fprintf(stderr, "churn: %s: %s\n", st->o->report,
			strerror(errno));
		return -1;
	}
	fprintf(f, "{\"pid\":%d,\"threads\":%lu,\"thread_failures\":%lu,"
		"\"idle_threads\":%u,\"forks\":%lu,\"seconds\":%.3f,"
		"\"children\":[", (int)getpid(), st->threads_made,
		st->thread_failures, st->o->idle_threads, st->forks, elapsed);
	for (size_t i = 0; i < st->n_children; i++)
		fprintf(f, "%s%d", i ? "," : "", (int)st->children[i]);
	fprintf(f, "]}\n");
	return f == stdout ? fflush(f) : fclose(f);
}

/* --hold: appends "PID POINT" to the hold file and waits for SIGUSR1
 * (blocked in every thread since start) for 60 s at most. */
static int
churn_hold(const char *file, const char *point)
{
	struct timespec limit = { 60, 0 };
	char line[64];
	sigset_t usr1;
	int fd, n;

	n = snprintf(line, sizeof(line), "%d %s\n", (int)getpid(), point);
	fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, (size_t)n) != n) {
		fprintf(stderr, "churn: %s: %s\n", file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	while (sigtimedwait(&usr1, NULL, &limit) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "churn: no SIGUSR1 at the %s hold\n",
				point);
			return -1;
		}
	}
	return 0;
}

static void
churn_usage(FILE *out)
{
	fputs("Usage: churn [--duration S] [--waves N] [--batch B] "
	      "[--fork-every W]\n"
	      "             [--pages P] [--idle-threads N] "
	      "[--start-delay S] [--report FILE]\n"
	      "             [--hold FILE]\n"
	      "Creates and joins short-lived threads (B per wave) and forks a "
	      "child every W\n"
	      "waves, each faulting P fresh pages; N idle threads live the "
	      "whole run.\n"
	      "--batch 0 (with --waves) and --fork-every 0: only the idle "
	      "threads.\n", out);
}

static int
churn_parse(int argc, char **argv, struct churn_opts *o)
{
	static const struct option lo[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "waves", required_argument, NULL, 'w' },
		{ "batch", required_argument, NULL, 'b' },
		{ "fork-every", required_argument, NULL, 'f' },
		{ "pages", required_argument, NULL, 'p' },
		{ "idle-threads", required_argument, NULL, 'i' },
		{ "start-delay", required_argument, NULL, 's' },
		{ "report", required_argument, NULL, 'r' },
		{ "hold", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o->duration_s = atof(optarg); break;
		case 'w': o->waves = atol(optarg); break;
		case 'b': o->batch = (unsigned)atoi(optarg); break;
		case 'f': o->fork_every = (unsigned)atoi(optarg); break;
		case 'p': o->pages = (unsigned)atoi(optarg); break;
		case 'i': o->idle_threads = (unsigned)atoi(optarg); break;
		case 's': o->start_delay_s = atof(optarg); break;
		case 'r': o->report = optarg; break;
		case 'H': o->hold = optarg; break;
		case 'h': churn_usage(stdout); exit(0);
		default: churn_usage(stderr); return -1;
		}
	}
	/* --batch 0 only with --waves: idle threads and nothing else, not a
	 * loop of empty waves. */
	if (optind != argc || o->batch > CHURN_MAX_BATCH ||
	    (o->batch == 0 && o->waves <= 0) ||
	    (o->duration_s <= 0 && o->waves <= 0)) {
		churn_usage(stderr);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct churn_opts o = { .duration_s = 3, .batch = 8,
				.fork_every = 10, .pages = 4 };
	struct churn_state st = { .o = &o };
	pthread_t *idle = NULL;
	unsigned n_idle = 0;
	double t0, end, elapsed;
	sigset_t usr1;
	int ret = 0;

	if (churn_parse(argc, argv, &o) < 0)
		return 2;
	/* SIGUSR1 ends a hold; every thread inherits the mask, so only
	 * sigtimedwait() takes it. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (o.start_delay_s > 0) {
		struct timespec ts = {
			(time_t)o.start_delay_s,
			(long)((o.start_delay_s - (time_t)o.start_delay_s) *
			       1e9),
		};

		nanosleep(&ts, NULL);
	}
	if (o.idle_threads) {
		idle = calloc(o.idle_threads, sizeof(*idle));
		if (!idle)
			return 1;
		for (; n_idle < o.idle_threads; n_idle++) {
			if (pthread_create(&idle[n_idle], NULL,
					   churn_idle_thread, &st) != 0) {
				fprintf(stderr, "churn: only %u idle threads\n",
					n_idle);
				ret = 1;
				break;
			}
		}
	}
	if (o.hold && churn_hold(o.hold, "before") < 0)
		ret = 1;
	t0 = churn_now();
	end = t0 + o.duration_s;
	for (long w = 0; o.waves <= 0 || w < o.waves; w++) {
		if (o.duration_s > 0 && churn_now() >= end)
			break;
		churn_wave(&st);
		if (o.fork_every && w % o.fork_every == 0)
			churn_fork(&st);
	}
	/* With --waves and idle threads, keep them for the duration. */
	while (n_idle && o.duration_s > 0 && churn_now() < end)
		usleep(10000);
	elapsed = churn_now() - t0;
	if (o.hold && churn_hold(o.hold, "after") < 0)
		ret = 1;
	atomic_store(&st.stop, true);
	for (unsigned i = 0; i < n_idle; i++)
		pthread_join(idle[i], NULL);
	free(idle);
	if (o.report && churn_write_report(&st, elapsed) != 0)
		ret = 1;
	free(st.children);
	return ret;
}
