/*
 * The UI side (main thread): takes frames from the collector, shows them
 * (TUI) or writes them (batch), sends commands back.  It owns the terminal,
 * stdin and the signalfd.
 */
#ifndef MEMTOP_UI_H
#define MEMTOP_UI_H

#include <stdio.h>

#include "cli.h"

struct queue;
struct frame;

struct ui_io {
	struct queue *frames;	/* item: struct frame *; UI frees them */
	struct queue *cmds;	/* item: struct cmd */
	int sigfd;		/* signalfd for SIGINT, SIGTERM, SIGHUP, SIGWINCH,
				 * SIGTSTP, SIGCONT (blocked in all threads) */
	const struct options *opt;
	const char *target_desc; /* "pid 4242", "./bench --threads 16" */
	/* Shown every frame the UI takes from the queue, before the UI
	 * shows, writes or frees it; NULL when nobody listens.  The metrics
	 * exporter (ui/metrics) copies what it exports and keeps no pointer
	 * into the frame. */
	void (*frame_taken)(void *ctx, const struct frame *f);
	void *frame_taken_ctx;
};

/* What batch and the TUI call with each frame they take. */
static inline void
ui_frame_taken(const struct ui_io *io, const struct frame *f)
{
	if (io->frame_taken)
		io->frame_taken(io->frame_taken_ctx, f);
}

/*
 * Batch: writes every frame (text or JSON Lines per opt->json) to out until
 * the final frame, opt->iterations frames, or a signal (then pushes
 * CMD_QUIT and still writes the final frame the collector sends).  Returns
 * 0, or 1 when the final frame carried an error or a write failed.
 */
int batch_run(const struct ui_io *io, FILE *out);

/*
 * TUI: ncurses screen until q, a signal, or opt->iterations frames.  Keeps
 * the last picture with an "exited" banner after the final frame until q.
 * The terminal is restored on every return path.  Returns 0, or 1 on error
 * (message printed to stderr after endwin()).
 */
int tui_run(const struct ui_io *io);

/*
 * Whether the terminal interface can start on standard output: a terminal
 * type terminfo knows that can address the cursor (not TERM=dumb, not
 * unset).  Asked before anything is launched.  0, or -1 with a one-line
 * reason suggesting -b in why.
 */
int tui_check_terminal(char *why, size_t len);

#endif
