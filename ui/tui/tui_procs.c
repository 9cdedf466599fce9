/*
 * Process view (P; the first view with -a or -G): one row per process of
 * the frame (processes[], in the frame's sort order), the selection kept
 * on the same pid across frames.  Enter asks the producer for that
 * process's hot pages (CMD_PAGES_OF) and shows them in the hot-pages
 * view; Esc there goes back here and asks for every process's pages
 * again.  UI thread.
 */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "frame.h"
#include "keys.h"
#include "queue.h"
#include "sortkey.h"
#include "tui.h"
#include "ui.h"

#define TUI_PROC_PID 7
#define TUI_PROC_COMM 15
#define TUI_PROC_COUNT 8
#define TUI_PROC_SHARE 6
#define TUI_PROC_BAR_MAX 12
#define TUI_PROC_LOCAL 6
#define TUI_PROC_REMOTE 8
#define TUI_PROC_NODE 4
#define TUI_PROC_THREADS 4
#define TUI_PROC_CGROUP_MIN 12

/* The column the sort key ranks by. */
static uint64_t
tui_procs_count(const struct frame *f, const struct frame_process *p)
{
	switch (f->sort) {
	case SORT_TOTAL:
		return p->total;
	case SORT_LOADS:
		return p->loads;
	case SORT_STORES:
		return p->stores;
	default:
		return p->samples;
	}
}

static const char *
tui_procs_count_name(const struct frame *f)
{
	switch (f->sort) {
	case SORT_TOTAL:
		return "TOTAL";
	case SORT_LOADS:
		return "LOADS";
	case SORT_STORES:
		return "STORES";
	default:
		return "SAMPLES";
	}
}

/* The node most of the process's memory-side samples landed on, "-"
 * when none is known. */
static void
tui_procs_node(const struct frame *f, const struct frame_process *p,
	       char *buf, size_t len)
{
	uint64_t best = 0;
	size_t at = 0;

	for (size_t j = 0; p->nodes && j < f->n_nodes; j++) {
		if (p->nodes[j] > best) {
			best = p->nodes[j];
			at = j;
		}
	}
	if (best)
		snprintf(buf, len, "%" PRId32, f->nodes[at].node);
	else
		snprintf(buf, len, "-");
}

static void
tui_procs_row(const struct tui *t, int y, const struct frame_process *p,
	      int bar_w, uint64_t max)
{
	const struct frame *f = t->cur;
	char count[16], remote[16], node[12], local[12];
	int x = 0, attr = p->alive ? 0 : tui_draw_attr(t, TUI_COLOR_DIM, 0);
	uint64_t v = tui_procs_count(f, p);

	tui_draw_text(y, x, attr, "%*" PRId32 " %-*.*s", TUI_PROC_PID, p->pid,
		      TUI_PROC_COMM, TUI_PROC_COMM, p->comm);
	x += TUI_PROC_PID + 1 + TUI_PROC_COMM + 1;
	tui_draw_text(y, x, attr, "%*s %5.1f%%", TUI_PROC_COUNT,
		      tui_draw_count(count, sizeof(count), v),
		      p->share * 100);
	x += TUI_PROC_COUNT + 1 + TUI_PROC_SHARE + 1;
	tui_draw_bar(t, y, x, bar_w, v, max);
	x += bar_w + (bar_w > 0);
	if (p->local + p->remote)
		snprintf(local, sizeof(local), "%.1f",
			 100.0 * (double)p->local /
			 (double)(p->local + p->remote));
	else
		snprintf(local, sizeof(local), "-");
	tui_procs_node(f, p, node, sizeof(node));
	tui_draw_text(y, x, attr, "%*s %*s %*s %*" PRIu32 " ",
		      TUI_PROC_LOCAL, local, TUI_PROC_REMOTE,
		      tui_draw_count(remote, sizeof(remote), p->remote),
		      TUI_PROC_NODE, node, TUI_PROC_THREADS, p->threads);
	x += TUI_PROC_LOCAL + 1 + TUI_PROC_REMOTE + 1 + TUI_PROC_NODE + 1 +
	     TUI_PROC_THREADS + 1;
	if (!p->alive)
		tui_draw_text(y, x, attr, "(exited)");
	else
		tui_draw_safe(y, x, COLS - x, p->cgroup ? p->cgroup : "-");
}

static void
tui_procs_title(const struct tui *t, int y, int bar_w)
{
	const struct frame *f = t->cur;
	int x;

	attron(A_REVERSE);
	mvhline(y, 0, ' ', COLS);
	tui_draw_text(y, 0, A_REVERSE, "%*s %-*s %*s %-*s", TUI_PROC_PID,
		      "PID", TUI_PROC_COMM, "COMM", TUI_PROC_COUNT,
		      tui_procs_count_name(f), TUI_PROC_SHARE, " SHARE");
	x = TUI_PROC_PID + 1 + TUI_PROC_COMM + 1 + TUI_PROC_COUNT + 1 +
	    TUI_PROC_SHARE + 1 + bar_w + (bar_w > 0);
	tui_draw_text(y, x, A_REVERSE, "%*s %*s %*s %*s CGROUP",
		      TUI_PROC_LOCAL, "LOCAL%", TUI_PROC_REMOTE, "REMOTE",
		      TUI_PROC_NODE, "NODE", TUI_PROC_THREADS, "THR");
	attroff(A_REVERSE);
}

void
tui_procs_view(struct tui *t, int y, int rows)
{
	const struct frame *f = t->cur;
	uint64_t max = 0;
	int fixed, bar_w;

	t->page_rows = rows > 2 ? (size_t)rows - 2 : 0;
	if (!f || rows < 3)
		return;
	tui_draw_text(y++, 0, tui_draw_attr(t, TUI_COLOR_TITLE, A_BOLD),
		      "%zu processes%s  untracked %" PRIu64 "  unknown %"
		      PRIu64 "   Enter: its pages, P: hot pages",
		      f->n_processes, f->n_processes ? ", best first" : "",
		      f->processes_untracked, f->processes_unknown);
	for (size_t i = 0; i < f->n_processes; i++)
		if (tui_procs_count(f, &f->processes[i]) > max)
			max = tui_procs_count(f, &f->processes[i]);
	fixed = TUI_PROC_PID + 1 + TUI_PROC_COMM + 1 + TUI_PROC_COUNT + 1 +
		TUI_PROC_SHARE + 1 + TUI_PROC_LOCAL + 1 + TUI_PROC_REMOTE + 1 +
		TUI_PROC_NODE + 1 + TUI_PROC_THREADS + 1;
	bar_w = COLS - fixed - TUI_PROC_CGROUP_MIN - 1;
	bar_w = bar_w < 0 ? 0 : bar_w > TUI_PROC_BAR_MAX ? TUI_PROC_BAR_MAX :
		bar_w;
	tui_procs_title(t, y++, bar_w);
	if (f->n_processes == 0) {
		tui_draw_text(y, 0, 0, "no process sampled in this interval");
		return;
	}
	if (t->psel >= f->n_processes)
		t->psel = f->n_processes - 1;
	if (t->psel < t->psel_top)
		t->psel_top = t->psel;
	else if (t->psel >= t->psel_top + t->page_rows)
		t->psel_top = t->psel - t->page_rows + 1;
	if (t->psel_top >= f->n_processes)
		t->psel_top = 0;
	for (size_t r = 0; r < t->page_rows; r++) {
		size_t i = t->psel_top + r;

		if (i >= f->n_processes)
			break;
		tui_procs_row(t, y + (int)r, &f->processes[i], bar_w, max);
		if (i == t->psel)
			mvchgat(y + (int)r, 0, -1, A_REVERSE, 0, NULL);
	}
}

/* After a new frame: the selection stays on the same pid while listed. */
void
tui_procs_follow(struct tui *t)
{
	const struct frame *f = t->cur;

	for (size_t i = 0; t->psel_pid && i < f->n_processes; i++) {
		if (f->processes[i].pid == t->psel_pid) {
			t->psel = i;
			return;
		}
	}
	if (t->psel >= f->n_processes)
		t->psel = f->n_processes ? f->n_processes - 1 : 0;
	t->psel_pid = f->n_processes ? f->processes[t->psel].pid : 0;
}

void
tui_procs_move(struct tui *t, enum keys_action action)
{
	if (tui_input_step(&t->psel, t->cur ? t->cur->n_processes : 0,
			   t->page_rows, action))
		t->psel_pid = t->cur->processes[t->psel].pid;
}

static int
tui_procs_send(struct tui *t, int32_t pid)
{
	struct cmd cmd = { .type = CMD_PAGES_OF, .pid = pid };

	if (queue_push(t->io->cmds, &cmd) == -EAGAIN) {
		snprintf(t->status, sizeof(t->status), "command queue full");
		return -EAGAIN;
	}
	return 0;
}

/* Enter: the selected process's hot pages, in the hot-pages view. */
void
tui_procs_enter(struct tui *t)
{
	const struct frame_process *p;

	if (!t->cur || t->psel >= t->cur->n_processes)
		return;
	p = &t->cur->processes[t->psel];
	if (tui_procs_send(t, p->pid) < 0)
		return;
	t->pages_pid = p->pid;
	snprintf(t->pages_comm, sizeof(t->pages_comm), "%s", p->comm);
	t->sel = 0;
	t->sel_valid = false;
	t->view = TUI_VIEW_MAIN;
}

/* Esc from a process's pages: every process's pages, and this view. */
void
tui_procs_back(struct tui *t)
{
	if (tui_procs_send(t, 0) < 0)
		return;
	t->pages_pid = 0;
	t->sel = 0;
	t->sel_valid = false;
	t->view = TUI_VIEW_PROCS;
}
