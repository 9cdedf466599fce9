/*
 * Keys of the TUI: selection, scrolling, the period prompt and the
 * commands sent to the collector.  UI thread.  Handlers change the model
 * and return TUI_DIRTY; they never draw.
 */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "frame.h"
#include "granularity.h"
#include "keys.h"
#include "queue.h"
#include "tui.h"
#include "ui.h"

#define TUI_INPUT_ESC 27

static int
tui_input_same_type(const void *queued, const void *item)
{
	const struct cmd *a = queued, *b = item;

	return a->type == b->type;
}

/* The collector applies commands between drains; a newer period replaces
 * a pending one so that key repeat cannot fill the queue with periods. */
static int
tui_input_send(struct tui *t, enum cmd_type type, uint64_t value)
{
	struct cmd cmd = { .type = type, .value = value };
	int ret;

	if (type == CMD_SET_PERIOD)
		ret = queue_push_replace(t->io->cmds, &cmd,
					 tui_input_same_type);
	else
		ret = queue_push(t->io->cmds, &cmd);
	if (ret == -EAGAIN)
		snprintf(t->status, sizeof(t->status), "command queue full");
	return ret;
}

static void
tui_input_remember(struct tui *t)
{
	const struct frame *f = t->cur;

	if (!f || t->sel >= f->n_pages)
		return;
	t->sel_valid = true;
	t->sel_pid = f->pages[t->sel].pid;
	t->sel_addr = f->pages[t->sel].addr;
}

/* After a new frame: the selection stays on the page the user picked
 * while that page is listed, else on the same row. */
void
tui_input_follow(struct tui *t)
{
	const struct frame *f = t->cur;

	if (t->sel_valid) {
		for (size_t i = 0; i < f->n_pages; i++) {
			if (f->pages[i].pid == t->sel_pid &&
			    f->pages[i].addr == t->sel_addr) {
				t->sel = i;
				return;
			}
		}
	}
	if (f->n_pages == 0)
		t->sel = 0;
	else if (t->sel >= f->n_pages)
		t->sel = f->n_pages - 1;
	/* The detail view keeps asking for its page and says when it is
	 * gone; the table moves on to the row's new page. */
	if (t->sel_valid && t->view != TUI_VIEW_DETAIL)
		tui_input_remember(t);
}

bool
tui_input_step(size_t *sel, size_t n, size_t page, enum keys_action action)
{
	if (n == 0)
		return false;
	if (page == 0)
		page = 1;
	switch (action) {
	case KEYS_UP:
		*sel -= *sel > 0;
		break;
	case KEYS_DOWN:
		*sel += *sel + 1 < n;
		break;
	case KEYS_PAGE_UP:
		*sel = *sel > page ? *sel - page : 0;
		break;
	case KEYS_PAGE_DOWN:
		*sel = *sel + page < n ? *sel + page : n - 1;
		break;
	case KEYS_HOME:
		*sel = 0;
		break;
	case KEYS_END:
		*sel = n - 1;
		break;
	default:
		return false;
	}
	return true;
}

static void
tui_input_sel_move(struct tui *t, enum keys_action action)
{
	if (tui_input_step(&t->sel, t->cur ? t->cur->n_pages : 0,
			   t->page_rows, action))
		tui_input_remember(t);
}

static void
tui_input_scroll(struct tui *t, enum keys_action action)
{
	size_t page = t->body_rows ? t->body_rows : 1;
	size_t max = t->body_lines > t->body_rows ?
		     t->body_lines - t->body_rows : 0;

	switch (action) {
	case KEYS_UP:
		t->scroll -= t->scroll > 0;
		break;
	case KEYS_DOWN:
		t->scroll++;
		break;
	case KEYS_PAGE_UP:
		t->scroll = t->scroll > page ? t->scroll - page : 0;
		break;
	case KEYS_PAGE_DOWN:
		t->scroll += page;
		break;
	case KEYS_HOME:
		t->scroll = 0;
		break;
	case KEYS_END:
		t->scroll = max;
		break;
	default:
		break;
	}
	if (t->scroll > max)
		t->scroll = max;
}

static void
tui_input_set_period(struct tui *t, uint64_t period)
{
	if (tui_input_send(t, CMD_SET_PERIOD, period) == 0) {
		t->period_sent = period;
		t->pending_seq = t->cur ? t->cur->seq : 0;
	}
}

static void
tui_input_period_step(struct tui *t, bool up)
{
	uint64_t period;

	if (!t->cur) {
		snprintf(t->status, sizeof(t->status),
			 "no frame yet: the period is not known");
		return;
	}
	period = t->cur->period;
	if (up) {
		if (period > UINT64_MAX / 2) {
			snprintf(t->status, sizeof(t->status),
				 "period is at its maximum");
			return;
		}
		tui_input_set_period(t, period ? period * 2 : 1);
	} else {
		if (period <= 1) {
			snprintf(t->status, sizeof(t->status),
				 "period is at its minimum (1)");
			return;
		}
		tui_input_set_period(t, period / 2);
	}
}

static void
tui_input_sort_next(struct tui *t)
{
	int key;

	if (t->sort_sent >= 0)
		key = t->sort_sent;
	else if (t->cur)
		key = t->cur->sort;
	else
		key = t->io->opt ? (int)t->io->opt->sort : SORT_SAMPLES;
	key = (key + 1) % SORT__COUNT;
	if (tui_input_send(t, CMD_SORT, (uint64_t)key) == 0) {
		t->sort_sent = key;
		t->pending_seq = t->cur ? t->cur->seq : 0;
	}
}

static void
tui_input_prompt_confirm(struct tui *t)
{
	char *end;
	unsigned long long v;

	t->prompt_active = false;
	t->prompt[t->prompt_len] = '\0';
	if (t->prompt_len == 0)
		return;
	errno = 0;
	v = strtoull(t->prompt, &end, 10);
	if (t->prompt[0] < '0' || t->prompt[0] > '9' || *end != '\0' ||
	    errno == ERANGE || v == 0) {
		snprintf(t->status, sizeof(t->status),
			 "invalid period '%s': type a whole number >= 1",
			 t->prompt);
		return;
	}
	tui_input_set_period(t, v);
}

/* While the prompt is open every key belongs to it. */
static int
tui_input_prompt_key(struct tui *t, int ch)
{
	switch (ch) {
	case TUI_INPUT_ESC:
		t->prompt_active = false;
		break;
	case '\r':
	case '\n':
	case KEY_ENTER:
		tui_input_prompt_confirm(t);
		break;
	case KEY_BACKSPACE:
	case 127:
	case '\b':
		t->prompt_len -= t->prompt_len > 0;
		break;
	default:
		if (ch >= 0x20 && ch < 0x7f && t->prompt_len < TUI_PROMPT_MAX)
			t->prompt[t->prompt_len++] = (char)ch;
		break;
	}
	t->prompt[t->prompt_len] = '\0';
	return TUI_DIRTY;
}

/* g: the next page size after the one the newest frame shows. */
static void
tui_input_granularity(struct tui *t)
{
	unsigned shift = GRANULARITY_4K;

	if (t->cur && t->cur->granularity)
		shift = (unsigned)__builtin_ctz(t->cur->granularity);
	shift = granularity_next(shift);
	if (tui_input_send(t, CMD_SET_GRANULARITY, shift) == 0)
		snprintf(t->status, sizeof(t->status), "page size: %s (%s)",
			 granularity_name(shift),
			 shift > GRANULARITY_4K ? "pages fold together" :
			 "finer pages start empty");
}

static void
tui_input_toggle_view(struct tui *t, enum tui_view view)
{
	t->view = t->view == view ? TUI_VIEW_MAIN : view;
	t->scroll = 0;
}

/* > < E: a live source has no recorded time to move through. */
static void
tui_input_replay(struct tui *t, enum keys_action action)
{
	enum cmd_type type = action == KEYS_REPLAY_FASTER ? CMD_REPLAY_FASTER :
			     action == KEYS_REPLAY_SLOWER ? CMD_REPLAY_SLOWER :
			     CMD_REPLAY_END;

	if (!t->cur || strcmp(t->cur->source, "replay") != 0) {
		snprintf(t->status, sizeof(t->status),
			 "> < E move through a replay (-i FILE) only");
		return;
	}
	if (tui_input_send(t, type, 0) == 0)
		snprintf(t->status, sizeof(t->status), "replay: %s",
			 type == CMD_REPLAY_FASTER ? "twice as fast" :
			 type == CMD_REPLAY_SLOWER ? "half as fast" :
			 "to the end at full speed");
}

/*
 * m / M: the first press says what would move, the second sends it.
 * Nothing moves without the user asking twice.
 */
static void
tui_input_migrate(struct tui *t, enum keys_action action)
{
	const struct frame *f = t->cur;
	struct cmd cmd = { .type = CMD_MIGRATE };

	if (!f || (action == KEYS_MIGRATE_PAGE && t->sel >= f->n_pages)) {
		snprintf(t->status, sizeof(t->status), "no page selected");
		return;
	}
	if (t->confirm != (int)action) {
		t->confirm = (int)action;
		if (action == KEYS_MIGRATE_PAGE)
			snprintf(t->status, sizeof(t->status),
				 "move page 0x%llx of pid %d to the node whose "
				 "CPUs touch it most? m again = yes, any other "
				 "key = no",
				 (unsigned long long)f->pages[t->sel].addr,
				 (int)f->pages[t->sel].pid);
		else
			snprintf(t->status, sizeof(t->status),
				 "move every remote-heavy page of this frame to "
				 "its busiest node? M again = yes, any other "
				 "key = no");
		return;
	}
	t->confirm = KEYS_NONE;
	if (action == KEYS_MIGRATE_PAGE) {
		cmd.pid = f->pages[t->sel].pid;
		cmd.addr = f->pages[t->sel].addr;
		cmd.value = 1;
	}
	if (queue_push(t->io->cmds, &cmd) == -EAGAIN)
		snprintf(t->status, sizeof(t->status), "command queue full");
	else
		snprintf(t->status, sizeof(t->status),
			 "migration requested: results in the next frame");
}

/* One key: the command keys.c binds it to, applied.  Long because it is
 * the one switch over every key command, each case a line or two. */
int
tui_input_key(struct tui *t, int ch)
{
	enum keys_action action;

	if (t->prompt_active)
		return tui_input_prompt_key(t, ch);
	t->status[0] = '\0';
	action = keys_lookup(ch);
	if (t->confirm != KEYS_NONE && (int)action != t->confirm) {
		t->confirm = KEYS_NONE;
		snprintf(t->status, sizeof(t->status), "migration cancelled");
		return TUI_DIRTY;
	}
	switch (action) {
	case KEYS_NONE:
		break;
	case KEYS_MIGRATE_PAGE:
	case KEYS_MIGRATE_HOT:
		tui_input_migrate(t, action);
		break;
	case KEYS_PERIOD_UP:
	case KEYS_PERIOD_DOWN:
		tui_input_period_step(t, action == KEYS_PERIOD_UP);
		break;
	case KEYS_PERIOD_PROMPT:
		t->prompt_active = true;
		t->prompt_len = 0;
		t->prompt[0] = '\0';
		break;
	case KEYS_SORT:
		tui_input_sort_next(t);
		break;
	case KEYS_PAUSE:
		tui_input_send(t, CMD_TOGGLE_PAUSE, 0);
		break;
	case KEYS_RESET:
		if (tui_input_send(t, CMD_RESET, 0) == 0)
			snprintf(t->status, sizeof(t->status),
				 "reset: page table and totals cleared");
		break;
	case KEYS_VIEW_NUMA:
		tui_input_toggle_view(t, TUI_VIEW_NUMA);
		break;
	case KEYS_VIEW_CPU:
		tui_input_toggle_view(t, TUI_VIEW_CPU);
		break;
	case KEYS_VIEW_OBJECTS:
		tui_input_toggle_view(t, TUI_VIEW_OBJECTS);
		break;
	case KEYS_VIEW_CODE:
		tui_input_toggle_view(t, TUI_VIEW_CODE);
		break;
	case KEYS_VIEW_PROCS:
		tui_input_toggle_view(t, TUI_VIEW_PROCS);
		break;
	case KEYS_GRANULARITY:
		tui_input_granularity(t);
		break;
	case KEYS_DETAIL:
		if (t->view == TUI_VIEW_PROCS)
			tui_procs_enter(t);
		else if ((t->view == TUI_VIEW_MAIN ||
			  t->view == TUI_VIEW_DETAIL) &&
		    t->cur && t->cur->n_pages > 0) {
			tui_input_remember(t);
			t->view = TUI_VIEW_DETAIL;
		}
		break;
	case KEYS_HELP:
		if (t->view == TUI_VIEW_HELP) {
			t->view = t->help_return;
		} else {
			t->help_return = t->view;
			t->view = TUI_VIEW_HELP;
		}
		t->scroll = 0;
		break;
	case KEYS_BACK:
		if (t->view == TUI_VIEW_MAIN && t->pages_pid)
			tui_procs_back(t);
		else
			t->view = t->view == TUI_VIEW_HELP ? t->help_return :
				  TUI_VIEW_MAIN;
		t->scroll = 0;
		break;
	case KEYS_QUIT:
		t->quit = true;
		break;
	case KEYS_REPLAY_FASTER:
	case KEYS_REPLAY_SLOWER:
	case KEYS_REPLAY_END:
		tui_input_replay(t, action);
		break;
	case KEYS_UP:
	case KEYS_DOWN:
	case KEYS_PAGE_UP:
	case KEYS_PAGE_DOWN:
	case KEYS_HOME:
	case KEYS_END:
		if (t->view == TUI_VIEW_MAIN || t->view == TUI_VIEW_DETAIL)
			tui_input_sel_move(t, action);
		else if (t->view == TUI_VIEW_PROCS)
			tui_procs_move(t, action);
		else
			tui_input_scroll(t, action);
		break;
	}
	return TUI_DIRTY;
}
