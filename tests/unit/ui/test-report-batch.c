#include "config.h"

/*
 * Batch output besides the JSON writer: the text writer's header and rows,
 * and batch_run()'s stopping rules (-n, final frame, error frame, signals,
 * broken pipe) against a fake collector thread, every JSON line it writes
 * run through the strict syntax checker (tests/lib/jsoncheck.c).
 */

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "frame.h"
#include "jsoncheck.h"
#include "queue.h"
#include "report-frame.h"
#include "report.h"
#include "testlib.h"
#include "ui.h"

static void
test_text(void)
{
	struct frame *f = make_frame(3);
	char *s, *line;
	size_t rows = 0;
	bool header = false, counts = false, nodes = false, cpus = false;

	free(f->pages[1].region);
	f->pages[1].region = dup_str("bad\nregion");
	f->pages[2].node = FRAME_NODE_UNKNOWN;
	s = render(f, false, 2);
	check(s != NULL);
	for (line = s ? strtok(s, "\n") : NULL; line;
	     line = strtok(NULL, "\n")) {
		if (strncmp(line, "memtop frame 3 ", 15) == 0)
			header = strstr(line, "source faults") &&
				 strstr(line, "period 1") &&
				 strstr(line, "threads 4");
		else if (strncmp(line, "samples 3: loads 1, stores 1, "
				 "other 1;", 30) == 0)
			counts = strstr(line, "lost 2") &&
				 strstr(line, "unattributed 5");
		else if (strstr(line, " 0x7f3a1c00"))
			rows++;
		else if (strncmp(line, "nodes: 0: cpu 3 mem 3 local 100.0%",
				 34) == 0)
			nodes = true;
		else if (strcmp(line, "cpus: 0:1 1:2") == 0)
			cpus = true;
	}
	check(header);
	check(counts);
	check_eq_u64(rows, 2);
	check(nodes);
	check(cpus);
	free(s);

	s = render(f, false, 10);
	contains(s, "    0x7f3a1c000000    4242        3        1        1"
		 "         10 100.00%    0  [heap]\n");
	contains(s, "  bad?region\n");
	contains(s, "0.00%    -  [heap]\n");
	free(s);
	frame_free(f);
}

struct fake_collector {
	struct queue *frames;
	struct queue *cmds;
	unsigned published;
	unsigned limit;		/* publish final after this many if no quit */
	unsigned final_delay_ms; /* wait this long after CMD_QUIT */
	bool saw_quit;
	const char *error;	/* set on the final frame */
};

static void
fake_publish(struct fake_collector *fc, bool final)
{
	struct frame *f = make_frame(1);

	f->seq = ++fc->published;
	f->final = final;
	if (final && fc->error)
		f->error = dup_str(fc->error);
	/* The queue is deep enough for every scenario below; a full one
	 * means batch_run stopped reading, and the frame is dropped. */
	if (queue_push(fc->frames, &f) != 0)
		frame_free(f);
}

/* Publishes a frame every 2 ms; on CMD_QUIT (or at its limit) it sends
 * the final frame and ends, as the real collector does. */
static void *
fake_collector_main(void *arg)
{
	struct fake_collector *fc = arg;
	struct cmd c;

	for (;;) {
		while (queue_pop(fc->cmds, &c) == 0)
			if (c.type == CMD_QUIT)
				fc->saw_quit = true;
		if (fc->saw_quit || fc->published + 1 >= fc->limit)
			break;
		fake_publish(fc, false);
		usleep(2000);
	}
	if (fc->saw_quit && fc->final_delay_ms)
		usleep(fc->final_delay_ms * 1000);
	fake_publish(fc, true);
	return NULL;
}

static int
run_batch(struct fake_collector *fc, long iterations, int sigfd, FILE *out)
{
	struct options opt = { .json = true, .iterations = iterations,
			       .top = 20 };
	struct ui_io io = { .sigfd = sigfd, .opt = &opt };
	struct frame *f;
	pthread_t th;
	int ret;

	fc->frames = queue_new(256, sizeof(struct frame *));
	fc->cmds = queue_new(8, sizeof(struct cmd));
	io.frames = fc->frames;
	io.cmds = fc->cmds;
	pthread_create(&th, NULL, fake_collector_main, fc);
	ret = batch_run(&io, out);
	pthread_join(th, NULL);
	/* frames batch_run left behind when it gave up early */
	while (queue_pop(fc->frames, &f) == 0)
		frame_free(f);
	queue_free(fc->frames);
	queue_free(fc->cmds);
	return ret;
}

static size_t
count_valid_lines(char *buf)
{
	struct json_check jc;
	size_t n = 0;
	char *line = buf, *nl;

	while (line && (nl = strchr(line, '\n'))) {
		char save = nl[1];

		nl[1] = '\0';
		check(json_line_valid(line, &jc));
		nl[1] = save;
		n++;
		line = nl + 1;
	}
	return n;
}

/* No final frame within 3 s of CMD_QUIT: status 1, no hang; with
 * MEMTOP_QUIT_TIMEOUT_MS=5000 the same collector's final frame comes in
 * time (a sanitizer build's slow drain). */
static void
test_quit_timeout(int sigfd)
{
	struct fake_collector fc;
	FILE *m;
	time_t t0;

	unsetenv("MEMTOP_QUIT_TIMEOUT_MS");
	fc = (struct fake_collector){ .limit = 1000, .final_delay_ms = 3300 };
	m = fopen("/dev/null", "w");
	raise(SIGHUP);
	t0 = time(NULL);
	check_eq_i64(run_batch(&fc, 0, sigfd, m), 1);
	check(time(NULL) - t0 <= 6);
	fclose(m);

	setenv("MEMTOP_QUIT_TIMEOUT_MS", "5000", 1);
	fc = (struct fake_collector){ .limit = 1000, .final_delay_ms = 3300 };
	m = fopen("/dev/null", "w");
	raise(SIGHUP);
	check_eq_i64(run_batch(&fc, 0, sigfd, m), 0);
	fclose(m);
	unsetenv("MEMTOP_QUIT_TIMEOUT_MS");
}

static void
test_batch(int sigfd)
{
	struct fake_collector fc;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int pfd[2];

	/* -n 3 while the collector would go on: exactly 3 frames */
	fc = (struct fake_collector){ .limit = 1000 };
	m = open_memstream(&buf, &len);
	check_eq_i64(run_batch(&fc, 3, sigfd, m), 0);
	fclose(m);
	check(fc.saw_quit);
	check_eq_u64(count_valid_lines(buf), 3);
	check(buf && strstr(buf, "\"seq\":3,") && !strstr(buf, "\"seq\":4,"));
	free(buf);

	/* targets exit after 5 frames: all 5 written, the last final */
	fc = (struct fake_collector){ .limit = 5 };
	buf = NULL;
	m = open_memstream(&buf, &len);
	check_eq_i64(run_batch(&fc, 0, sigfd, m), 0);
	fclose(m);
	check(!fc.saw_quit);
	check_eq_u64(count_valid_lines(buf), 5);
	check(buf && strstr(buf, "\"seq\":5,") && strstr(buf, "\"final\":true"));
	free(buf);

	/* a final frame with an error: written, and status 1 */
	fc = (struct fake_collector){ .limit = 2, .error = "ring: gone" };
	buf = NULL;
	m = open_memstream(&buf, &len);
	check_eq_i64(run_batch(&fc, 0, sigfd, m), 1);
	fclose(m);
	check_eq_u64(count_valid_lines(buf), 2);
	check(buf && strstr(buf, "\"error\":\"ring: gone\""));
	free(buf);

	/* SIGINT: CMD_QUIT, then the final frame is still written */
	fc = (struct fake_collector){ .limit = 1000 };
	buf = NULL;
	m = open_memstream(&buf, &len);
	raise(SIGINT);
	check_eq_i64(run_batch(&fc, 0, sigfd, m), 0);
	fclose(m);
	check(fc.saw_quit);
	check(buf && strstr(buf, "\"final\":true"));
	check(count_valid_lines(buf) >= 1);
	free(buf);

	/* two terminating signals: give up at once with status 1 */
	fc = (struct fake_collector){ .limit = 1000 };
	m = fopen("/dev/null", "w");
	raise(SIGINT);
	raise(SIGTERM);
	check_eq_i64(run_batch(&fc, 0, sigfd, m), 1);
	fclose(m);

	/* reader gone (`| head`): quiet end, status 0, collector told */
	if (pipe(pfd) == 0) {
		close(pfd[0]);
		m = fdopen(pfd[1], "w");
		fc = (struct fake_collector){ .limit = 1000 };
		check_eq_i64(run_batch(&fc, 0, sigfd, m), 0);
		check(fc.saw_quit);
		fclose(m);
	}
}

int
main(void)
{
	sigset_t set;
	int sigfd;

	test_text();

	/* as main does: terminating signals blocked and read from a
	 * signalfd, SIGPIPE ignored so a closed pipe is EPIPE */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	check(sigfd >= 0);
	if (sigfd >= 0) {
		test_batch(sigfd);
		test_quit_timeout(sigfd);
		close(sigfd);
	}
	return test_result();
}
