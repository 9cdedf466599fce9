/*
 * Private state of the ncurses TUI, shared by the files of ui/tui/.
 * UI thread only.
 *
 * The model is the newest frame plus a little UI state (view, selection,
 * prompt, status message, node history).  tui.c changes the model from
 * keys, signals and frames and sets `dirty`; tui_draw.c and the per-view
 * files draw the whole screen from the model, once per wake-up, and never
 * change anything but layout figures they record for the key handlers.
 */
#ifndef MEMTOP_TUI_H
#define MEMTOP_TUI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keys.h"

struct frame;
struct frame_object;
struct ui_io;

/* Below this the screen shows one message instead of the views. */
#define TUI_MIN_COLS 40
#define TUI_MIN_ROWS 10

/* Frames of per-node history the sparklines cover. */
#define TUI_HISTORY 60

#define TUI_PROMPT_MAX 20
#define TUI_STATUS_MAX 160

/* Handler results: what the next draw has to do. */
enum {
	TUI_DIRTY = 1,
	TUI_RESIZE = 2,
};

enum tui_view {
	TUI_VIEW_MAIN = 0,	/* header, hot pages, NUMA panel */
	TUI_VIEW_NUMA,		/* nodes, history, node x node matrix */
	TUI_VIEW_CPU,		/* per-CPU bars or heat grid */
	TUI_VIEW_HELP,		/* generated from the key table */
	TUI_VIEW_DETAIL,	/* one page */
	TUI_VIEW_CODE,		/* functions causing most samples */
	TUI_VIEW_PROCS,		/* processes (the first view with -a, -G) */
	TUI_VIEW_OBJECTS,	/* allocation sites (issue 18) */
};

enum tui_color {
	TUI_COLOR_TITLE = 1,
	TUI_COLOR_BAR,
	TUI_COLOR_BANNER,
	TUI_COLOR_WARN,
	TUI_COLOR_DIM,
};

/* Glyph sets: UTF-8 block elements or an ASCII fallback.  Every glyph is
 * one column wide. */
struct tui_glyphs {
	const char *bar_full;
	const char *bar_part[8];	/* [k] = k/8 of a cell, [0] = "" */
	const char *level[9];		/* [0] = nothing, [8] = full */
	const char *zero_cell;		/* heat-grid cell with no samples */
	const char *dash;
};

/*
 * Per-node ring of mem_samples for the last TUI_HISTORY frames received
 * (skipped frames included).  `nodes` columns per entry; the ring restarts
 * when the frame's node count changes.
 */
struct tui_history {
	size_t nodes;
	size_t len;		/* valid entries, <= TUI_HISTORY */
	size_t head;		/* next entry to write */
	uint64_t *values;	/* TUI_HISTORY * nodes */
};

struct tui {
	const struct ui_io *io;
	bool utf8;
	bool colors;
	const struct tui_glyphs *glyphs;

	struct frame *cur;	/* newest frame, owned; NULL before the first */
	bool cur_drawn;		/* cur has been on screen */
	uint64_t shown;		/* distinct frames drawn */
	uint64_t skipped;	/* frames freed unseen, since start */
	bool final_seen;
	bool quit;		/* leave the loop */

	enum tui_view view;
	enum tui_view help_return;	/* view to go back to from help */

	/* Selection in cur->pages, kept on the same page (pid, addr) across
	 * frames while that page stays listed. */
	size_t sel;
	size_t sel_top;		/* first page row on screen */
	bool sel_valid;
	int32_t sel_pid;
	uint64_t sel_addr;
	/* A migration key pressed once, waiting for the same key again. */
	int confirm;		/* enum keys_action, KEYS_NONE when none */

	/* Selection in cur->processes, kept on the same pid across
	 * frames; the process whose pages the hot-pages view shows after
	 * Enter there (0: every process's). */
	size_t psel;
	size_t psel_top;
	int32_t psel_pid;
	int32_t pages_pid;
	char pages_comm[16];

	/* Scroll offset of the NUMA, CPU and help views. */
	size_t scroll;

	/* Figures the last draw recorded for the key handlers. */
	size_t page_rows;	/* page rows visible in the table */
	size_t body_rows;	/* rows of the scrolled views' body */
	size_t body_lines;	/* lines the current scrolled view has */

	bool prompt_active;
	char prompt[TUI_PROMPT_MAX + 1];
	size_t prompt_len;
	char status[TUI_STATUS_MAX];

	/* Commands sent and not yet reflected by a frame; 0 / -1 for none. */
	uint64_t period_sent;
	int sort_sent;
	uint64_t pending_seq;	/* cur->seq when they were sent */

	struct tui_history history;
};

/* tui_input.c */
/* One key; returns TUI_DIRTY or 0.  Sets t->quit for q. */
int tui_input_key(struct tui *t, int ch);
/* Moves the selection onto the same page in the new t->cur. */
void tui_input_follow(struct tui *t);
/* Moves *sel among n rows (page of them on screen) as a movement key
 * does; false when action is no movement or there are no rows. */
bool tui_input_step(size_t *sel, size_t n, size_t page,
		    enum keys_action action);

/* tui_header.c: the header; returns the rows it used.  Every fact fits
 * the width, wrapped or broken between facts. */
int tui_draw_header(const struct tui *t);
/* Bytes of s that fit a row of width columns, broken at a space when
 * one is there (the whole of s when it fits). */
size_t tui_wrap_next(const char *s, size_t width);

/* tui_draw.c: the screen, hot-pages table, status line. */
const struct tui_glyphs *tui_draw_glyphs(bool utf8);
void tui_draw(struct tui *t);
/* Text clipped at the right edge; ASCII only (bytes == columns). */
void tui_draw_text(int y, int x, int attr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* External text (paths, symbols): control and non-ASCII bytes shown as
 * '?', at most width columns. */
void tui_draw_safe(int y, int x, int width, const char *s);
/* Horizontal bar of `width` cells filled to value/max. */
void tui_draw_bar(const struct tui *t, int y, int x, int width,
		  uint64_t value, uint64_t max);
/* One glyph of t->glyphs->level[] for value/max; zero -> level[0]. */
const char *tui_draw_level(const struct tui *t, uint64_t value,
			   uint64_t max);
/* Compact count: up to 7 digits as is, then k, M, G, T. */
char *tui_draw_count(char *buf, size_t len, uint64_t n);
/* Kilobytes as K/M/G/T with one decimal. */
char *tui_draw_kb(char *buf, size_t len, uint64_t kb);
int tui_draw_attr(const struct tui *t, enum tui_color color, int mono);

/*
 * Scrolled bodies (NUMA, CPU, help views): lines are numbered from 0 and
 * only those inside the window [skip, skip + rows) get a screen row.
 */
struct tui_lines {
	int y0;
	size_t rows;
	size_t skip;
	size_t n;		/* lines emitted so far */
};
/* Screen row for the next line, or -1 when it is scrolled out. */
int tui_draw_line(struct tui_lines *l);

/* tui_numa.c */
/* Node table (and sparklines) from row y, at most max_rows rows; returns
 * rows used.  Used by the main view's panel. */
int tui_numa_panel(const struct tui *t, int y, int max_rows);
void tui_numa_view(const struct tui *t, struct tui_lines *l);
void tui_numa_history_push(struct tui *t, const struct frame *f);
void tui_numa_history_fini(struct tui_history *h);

/* tui_cpu.c */
void tui_cpu_view(const struct tui *t, struct tui_lines *l);

/* tui_help.c */
void tui_help_view(const struct tui *t, struct tui_lines *l);

/* tui_detail.c */
void tui_detail_view(const struct tui *t, int y0, int rows);

/* tui_procs.c */
void tui_procs_view(struct tui *t, int y, int rows);
void tui_procs_follow(struct tui *t);
void tui_procs_move(struct tui *t, enum keys_action action);
void tui_procs_enter(struct tui *t);
void tui_procs_back(struct tui *t);

/* tui_code.c */
struct frame_page;
void tui_code_view(const struct tui *t, struct tui_lines *l);
/* tui_objects.c: the objects view. */
void tui_objects_view(const struct tui *t, struct tui_lines *l);
/* The detail view's part: the page's object at row y, labels lab wide;
 * returns the next row. */
int tui_objects_page(const struct frame_object *o, int y, int lab);
/* Code sites and cache-line heat of page p from row y, rows < end;
 * returns the next free row. */
int tui_code_page(const struct tui *t, const struct frame_page *p, int y,
		  int end);

#endif
