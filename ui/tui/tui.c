/*
 * The ncurses TUI: terminal set-up and restore, the event loop, signals
 * and frame intake (keys are in tui_input.c).  UI (main) thread only; it
 * owns the terminal, stdin, the signalfd and every frame it has popped.
 *
 * One wake-up: poll(stdin, signalfd, frame queue), let handlers update the
 * model and return flags, then draw once if anything was flagged.  Key
 * handlers never draw; they change the model or push a command.  The
 * terminal is restored on every way out of tui_run(): q, a signal, the
 * iteration limit, stdin hanging up, and xalloc's out-of-memory abort.
 */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "cmd.h"
#include "frame.h"
#include "log.h"
#include "queue.h"
#include "tui.h"
#include "ui.h"

/* How long q waits for the collector's final frame. */
#define TUI_QUIT_WAIT_MS 2000
/* Retry interval while the command queue is full at quit. */
#define TUI_RETRY_MS 20
/* Short enough that Esc feels immediate, long enough for ssh. */
#define TUI_ESCDELAY_MS 25
/* A sent period or sort is shown as pending for at most this many frames. */
#define TUI_PENDING_FRAMES 3

enum {
	TUI_PFD_STDIN,
	TUI_PFD_SIGNAL,
	TUI_PFD_FRAMES,
	TUI_PFD_COUNT,
};



static void
tui_adopt_frame(struct tui *t, struct frame *f)
{
	bool stale = f->seq >= t->pending_seq + TUI_PENDING_FRAMES;

	frame_free(t->cur);
	t->cur = f;
	t->cur_drawn = false;
	if (t->period_sent && (f->period == t->period_sent || stale))
		t->period_sent = 0;
	if (t->sort_sent >= 0 && ((int)f->sort == t->sort_sent || stale))
		t->sort_sent = -1;
	tui_input_follow(t);
	tui_procs_follow(t);
	if (f->migrations.moved || f->migrations.busy ||
	    f->migrations.denied || f->migrations.failed ||
	    f->migrations.skipped)
		snprintf(t->status, sizeof(t->status),
			 "migrated: %llu moved, %llu busy, %llu denied, "
			 "%llu failed, %llu skipped (no busier node)",
			 (unsigned long long)f->migrations.moved,
			 (unsigned long long)f->migrations.busy,
			 (unsigned long long)f->migrations.denied,
			 (unsigned long long)f->migrations.failed,
			 (unsigned long long)f->migrations.skipped);
}

/* Takes every pending frame, shows the newest, frees the rest unseen. */
static int
tui_take_frames(struct tui *t)
{
	struct frame *f, *newest = NULL;

	while (queue_pop(t->io->frames, &f) == 0) {
		if (!f)
			continue;
		ui_frame_taken(t->io, f);
		tui_numa_history_push(t, f);
		if (f->final)
			t->final_seen = true;
		if (newest) {
			frame_free(newest);
			t->skipped++;
		}
		newest = f;
	}
	if (!newest)
		return 0;
	tui_adopt_frame(t, newest);
	return TUI_DIRTY;
}

/* Reads every key curses has; stdin at EOF (poll readable, nothing to
 * read) stops being polled instead of spinning. */
static int
tui_keys(struct tui *t, struct pollfd *pfd)
{
	int ch, flags = 0, avail = 0;
	bool got = false;

	while (!t->quit && (ch = getch()) != ERR) {
		got = true;
		if (ch == KEY_RESIZE)
			flags |= TUI_RESIZE;
		else
			flags |= tui_input_key(t, ch);
	}
	if (!got && ioctl(pfd->fd, FIONREAD, &avail) == 0 && avail == 0)
		pfd->fd = -1;
	return flags;
}

static int
tui_signals(struct tui *t)
{
	struct signalfd_siginfo si[8];
	ssize_t n;
	int flags = 0;

	n = read(t->io->sigfd, si, sizeof(si));
	if (n <= 0)
		return 0;
	for (size_t i = 0; i < (size_t)n / sizeof(si[0]); i++) {
		switch (si[i].ssi_signo) {
		case SIGINT:
		case SIGTERM:
		case SIGHUP:
			t->quit = true;
			break;
		case SIGWINCH:
			flags |= TUI_RESIZE;
			break;
		case SIGTSTP:
			/* SIGSTOP cannot be blocked, so it stops us here;
			 * the SIGCONT that resumes us stays pending on the
			 * signalfd and brings the screen back. */
			endwin();
			raise(SIGSTOP);
			flags |= TUI_RESIZE;
			break;
		case SIGCONT:
			flags |= TUI_RESIZE;
			break;
		default:
			break;
		}
	}
	return flags;
}

/* curses' own SIGWINCH handler never runs (the signal is blocked), so the
 * new size comes from the terminal itself. */
static void
tui_resize(void)
{
	struct winsize ws;

	if ((ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ||
	     ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) &&
	    ws.ws_row > 0 && ws.ws_col > 0 &&
	    (ws.ws_row != LINES || ws.ws_col != COLS))
		resizeterm(ws.ws_row, ws.ws_col);
	clearok(curscr, TRUE);
}

static void
tui_colors(struct tui *t)
{
	short bg = COLOR_BLACK;

	if (!has_colors() || start_color() != OK)
		return;
	if (use_default_colors() == OK)
		bg = -1;
	init_pair(TUI_COLOR_TITLE, COLOR_CYAN, bg);
	init_pair(TUI_COLOR_BAR, COLOR_GREEN, bg);
	init_pair(TUI_COLOR_BANNER, COLOR_WHITE, COLOR_RED);
	init_pair(TUI_COLOR_WARN, COLOR_YELLOW, bg);
	init_pair(TUI_COLOR_DIM, COLOR_BLUE, bg);
	t->colors = true;
}

static SCREEN *
tui_start(struct tui *t)
{
	const char *codeset, *cup;
	SCREEN *screen;

	setlocale(LC_CTYPE, "");
	codeset = nl_langinfo(CODESET);
	t->utf8 = codeset && strcmp(codeset, "UTF-8") == 0;
	t->glyphs = tui_draw_glyphs(t->utf8);

	screen = newterm(NULL, stdout, stdin);
	if (!screen)
		return NULL;
	set_term(screen);
	/* A terminal that cannot address the cursor (TERM=dumb) would get a
	 * stream of garbage: refuse it like an unknown one. */
	cup = tigetstr("cup");
	if (!cup || cup == (const char *)-1) {
		endwin();
		delscreen(screen);
		return NULL;
	}
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(TUI_ESCDELAY_MS);
	curs_set(0);
	tui_colors(t);
	return screen;
}

static void
tui_discard_frames(struct tui *t)
{
	struct frame *f;

	while (queue_pop(t->io->frames, &f) == 0) {
		if (!f)
			continue;
		if (f->final)
			t->final_seen = true;
		/* Keep the newest so an error it carries is reported. */
		tui_adopt_frame(t, f);
	}
}

/* The terminal is already restored: the wait for the collector's final
 * frame happens off screen. */
static void
tui_quit_drain(struct tui *t)
{
	struct cmd cmd = { .type = CMD_QUIT };
	struct pollfd pfd = { .fd = queue_fd(t->io->frames), .events = POLLIN };
	int64_t deadline = base_now_ms() + TUI_QUIT_WAIT_MS;
	bool sent = false;

	for (;;) {
		int64_t left;

		if (!sent)
			sent = queue_push(t->io->cmds, &cmd) == 0;
		tui_discard_frames(t);
		if (sent && t->final_seen)
			break;
		left = deadline - base_now_ms();
		if (left <= 0)
			break;
		if (!sent && left > TUI_RETRY_MS)
			left = TUI_RETRY_MS;
		poll(&pfd, 1, (int)left);
	}
}

static bool
tui_iterations_done(const struct tui *t)
{
	const struct options *opt = t->io->opt;

	return opt && opt->iterations > 0 &&
	       t->shown >= (uint64_t)opt->iterations;
}

int
tui_run(const struct ui_io *io)
{
	struct tui t = { .io = io, .sort_sent = -1 };
	struct pollfd pfd[TUI_PFD_COUNT] = {
		[TUI_PFD_STDIN] = { .fd = STDIN_FILENO, .events = POLLIN },
		[TUI_PFD_SIGNAL] = { .fd = io->sigfd, .events = POLLIN },
		[TUI_PFD_FRAMES] = { .fd = queue_fd(io->frames),
				     .events = POLLIN },
	};
	SCREEN *screen;
	int flags = TUI_DIRTY, ret = 0, poll_errno = 0;

	/* A whole machine is first a list of processes. */
	if (io->opt && io->opt->mode == MODE_SYSTEM)
		t.view = TUI_VIEW_PROCS;
	screen = tui_start(&t);
	if (!screen) {
		const char *term = getenv("TERM");

		log_error("cannot start the terminal UI (TERM=%s); use -b for "
			  "batch output", term && *term ? term : "(unset)");
		return 1;
	}

	while (!t.quit) {
		if (flags & TUI_RESIZE)
			tui_resize();
		if (flags) {
			tui_draw(&t);
			if (t.cur && !t.cur_drawn) {
				t.cur_drawn = true;
				t.shown++;
			}
		}
		if (tui_iterations_done(&t))
			break;
		flags = 0;
		if (poll(pfd, TUI_PFD_COUNT, -1) < 0) {
			if (errno == EINTR)
				continue;
			poll_errno = errno;
			break;
		}
		if (pfd[TUI_PFD_SIGNAL].revents & POLLIN)
			flags |= tui_signals(&t);
		if (pfd[TUI_PFD_STDIN].revents & (POLLHUP | POLLERR | POLLNVAL))
			t.quit = true;
		else if (pfd[TUI_PFD_STDIN].revents & POLLIN)
			flags |= tui_keys(&t, &pfd[TUI_PFD_STDIN]);
		if (pfd[TUI_PFD_FRAMES].revents & POLLIN)
			flags |= tui_take_frames(&t);
	}

	endwin();
	delscreen(screen);
	tui_quit_drain(&t);
	if (poll_errno) {
		log_error("poll: %s", strerror(poll_errno));
		ret = 1;
	}
	if (t.cur && t.cur->error) {
		log_error("%s", t.cur->error);
		ret = 1;
	}
	frame_free(t.cur);
	tui_numa_history_fini(&t.history);
	return ret;
}
