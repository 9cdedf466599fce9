/*
 * Batch mode (-b): the UI thread's loop when there is no terminal UI.  It
 * sleeps in poll() on the frame queue's eventfd and the signalfd, writes
 * every frame it takes (JSON Lines or text), and ends after the collector's
 * final frame.  Batch never skips a frame.
 *
 * Every way of stopping (signal, -n limit, broken pipe, write error) goes
 * through CMD_QUIT and then waits for the final frame, because the
 * collector always sends one and only then releases its fds and reaps a
 * launched command.  Two escapes keep memtop from hanging on a collector
 * that does not answer: a second terminating signal, or
 * BATCH_QUIT_TIMEOUT_MS (MEMTOP_QUIT_TIMEOUT_MS) without the final frame;
 * both return 1.
 *
 * -n N: exactly N frames are written.  The N-th is written as it comes,
 * final or not (the collector cannot know in advance that it is the last),
 * then CMD_QUIT is sent and the frames that follow, the final one
 * included, are freed unwritten.  A final frame's error is still reported
 * on stderr.
 *
 * --quiet: frames are taken, counted for -n and shown to ui_io's
 * frame_taken hook (the fleet metrics), but nothing is written.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "cmd.h"
#include "env.h"
#include "frame.h"
#include "log.h"
#include "queue.h"
#include "report.h"
#include "ui.h"

#define BATCH_QUIT_TIMEOUT_MS 3000
#define BATCH_QUIT_TIMEOUT_MAX_MS 600000
/* Retry interval while the command queue is full and CMD_QUIT waits. */
#define BATCH_QUIT_RETRY_MS 20

struct batch {
	const struct ui_io *io;
	FILE *out;
	long written;		/* frames written to out */
	bool writing;		/* false once output stopped (limit, error) */
	bool quit_wanted;	/* CMD_QUIT decided on */
	bool quit_sent;		/* ... and queued */
	bool signalled;		/* a terminating signal arrived */
	bool finished;		/* final frame seen */
	int status;		/* return value so far */
	int64_t deadline_ms;	/* CLOCK_MONOTONIC; valid when quit_wanted */
	int timeout_ms;		/* what deadline_ms was set from */
};


/* How long to wait for the final frame: MEMTOP_QUIT_TIMEOUT_MS (1 ms to
 * 10 min; a sanitizer build's drain of full rings takes seconds), else
 * BATCH_QUIT_TIMEOUT_MS. */
static int
batch_quit_timeout_ms(void)
{
	unsigned long ms;

	if (!env_ulong("MEMTOP_QUIT_TIMEOUT_MS", 1, BATCH_QUIT_TIMEOUT_MAX_MS,
		       &ms))
		return BATCH_QUIT_TIMEOUT_MS;
	return (int)ms;
}

/* Sends CMD_QUIT once; a full queue leaves quit_sent false for a retry. */
static void
batch_quit(struct batch *b)
{
	struct cmd quit = { .type = CMD_QUIT, .value = 0 };

	if (!b->quit_wanted) {
		b->quit_wanted = true;
		b->timeout_ms = batch_quit_timeout_ms();
		b->deadline_ms = base_now_ms() + b->timeout_ms;
	}
	if (!b->quit_sent && queue_push(b->io->cmds, &quit) == 0)
		b->quit_sent = true;
}

static int
batch_write(struct batch *b, const struct frame *f)
{
	int ret;

	if (b->io->opt->quiet)
		return 0;
	if (b->io->opt->json)
		ret = report_json_write(b->out, f);
	else
		ret = report_text_write(b->out, f, b->io->opt->top);
	if (ret == 0 && fflush(b->out) != 0)
		ret = errno ? -errno : -EIO;
	return ret;
}

/* Takes ownership of f. */
static void
batch_frame(struct batch *b, struct frame *f)
{
	long limit = b->io->opt->iterations;

	ui_frame_taken(b->io, f);
	if (b->writing) {
		int ret = batch_write(b, f);

		if (ret < 0) {
			/* A reader that went away (`| head`) is an end,
			 * not a failure; SIGPIPE is ignored by main. */
			if (ret != -EPIPE) {
				const char *path = b->io->opt->output_path;

				log_error("%s%s: %s",
					path ? "-o " : "standard output",
					path ? path : "", strerror(-ret));
				b->status = 1;
			}
			b->writing = false;
			batch_quit(b);
		} else {
			b->written++;
			if (limit > 0 && b->written >= limit) {
				b->writing = false;
				if (!f->final)
					batch_quit(b);
			}
		}
	}
	if (f->final) {
		b->finished = true;
		if (f->error) {
			log_error("%s", f->error);
			b->status = 1;
		}
	}
	frame_free(f);
}

/* Returns false when a second terminating signal asks to give up. */
static bool
batch_signals(struct batch *b)
{
	struct signalfd_siginfo si;
	ssize_t n;

	for (;;) {
		n = read(b->io->sigfd, &si, sizeof(si));
		if (n != (ssize_t)sizeof(si))
			return true;
		switch (si.ssi_signo) {
		case SIGINT:
		case SIGTERM:
		case SIGHUP:
			if (b->signalled)
				return false;
			b->signalled = true;
			batch_quit(b);
			break;
		case SIGTSTP:
			/* Blocked everywhere, so stop the process by hand,
			 * as the default action would have. */
			raise(SIGSTOP);
			break;
		default:
			/* SIGWINCH, SIGCONT: nothing to redraw. */
			break;
		}
	}
}

/* Frees frames left when returning without the final frame, so an early
 * return leaks nothing already queued. */
static void
batch_drop_pending(struct batch *b)
{
	struct frame *f;

	while (queue_pop(b->io->frames, &f) == 0)
		frame_free(f);
}

int
batch_run(const struct ui_io *io, FILE *out)
{
	struct batch b = {
		.io = io,
		.out = out,
		.writing = true,
	};
	struct pollfd pfd[2] = {
		{ .fd = queue_fd(io->frames), .events = POLLIN },
		{ .fd = io->sigfd, .events = POLLIN },
	};

	while (!b.finished) {
		int timeout = -1;
		struct frame *f;
		int n;

		if (b.quit_wanted) {
			int64_t left = b.deadline_ms - base_now_ms();

			if (!b.quit_sent)
				batch_quit(&b);
			if (left <= 0) {
				log_error("no final frame from "
					"the collector within %d ms",
					b.timeout_ms);
				b.status = 1;
				break;
			}
			timeout = left > INT32_MAX ? INT32_MAX : (int)left;
			if (!b.quit_sent && timeout > BATCH_QUIT_RETRY_MS)
				timeout = BATCH_QUIT_RETRY_MS;
		}

		n = poll(pfd, 2, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_error("poll: %s", strerror(errno));
			b.status = 1;
			break;
		}
		if (pfd[1].revents & POLLIN && !batch_signals(&b)) {
			log_error("second signal, quitting "
				"without the final frame");
			b.status = 1;
			break;
		}
		while (!b.finished && queue_pop(io->frames, &f) == 0)
			batch_frame(&b, f);
	}
	batch_drop_pending(&b);
	return b.status;
}
