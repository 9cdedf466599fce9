/*
 * Help view, generated from the key table in keys.c so that it always
 * says what the keys do.  UI thread.
 */
#include "config.h"

#include <curses.h>

#include "base.h"
#include "frame.h"
#include "keys.h"
#include "tui.h"
#include "ui.h"

#define TUI_HELP_LABEL 8

static const char *const tui_help_notes[] = {
	"Hot pages: ADDRESS is the page base; LOADS/STORES (or SAMPLES,",
	"FAULTS) count this interval, TOTAL since start or r; SHARE is the",
	"page's part of this interval's samples; NODE is the memory node the",
	"page lives on (- unknown); LOCAL% is the part of its samples issued",
	"by CPUs of that node; LAT is the mean latency when the source has it.",
	"The header counts lost, throttled, unattributed and untracked",
	"samples as this interval/total: nothing is dropped silently.",
	"With the faults source a sample is a page fault (first touch,",
	"copy-on-write, refault), not an access: hot means recently faulted.",
	"Processes (P): SAMPLES (or the sort key's count) and SHARE of this",
	"interval; LOCAL% of samples from CPUs of the page's node; REMOTE",
	"samples from other nodes; NODE the node most of its samples landed",
	"on; THR threads sampled; CGROUP its cgroup2 path.",
};

/* label and text, wrapped at COLS on lines of l (the header may have
 * wrapped or cut them). */
static void
tui_help_full(struct tui_lines *l, const char *label, const char *text)
{
	int w = COLS - TUI_HELP_LABEL - 2;

	if (!text || !*text || w <= 0)
		return;
	tui_draw_text(tui_draw_line(l), 0, A_BOLD, "%s", label);
	while (*text) {
		size_t n = tui_wrap_next(text, (size_t)w);

		tui_draw_safe(tui_draw_line(l), TUI_HELP_LABEL + 2, (int)n,
			      text);
		text += n;
		while (*text == ' ')
			text++;
	}
}

void
tui_help_view(const struct tui *t, struct tui_lines *l)
{
	const struct keys_binding *kb;
	size_t n;

	kb = keys_table(&n);
	tui_draw_text(tui_draw_line(l), 0,
		      tui_draw_attr(t, TUI_COLOR_TITLE, A_BOLD),
		      "Keys (h, ? or Esc to leave this help)");
	/* First, the header's free texts in full. */
	tui_help_full(l, "Watching", t->io->target_desc);
	if (t->cur)
		tui_help_full(l, "Source", t->cur->source_note);
	tui_draw_line(l);
	for (size_t i = 0; i < n; i++) {
		int y = tui_draw_line(l);

		tui_draw_text(y, 2, A_BOLD, "%-*s", TUI_HELP_LABEL,
			      kb[i].label);
		tui_draw_text(y, 2 + TUI_HELP_LABEL + 1, 0, "%s", kb[i].help);
	}
	tui_draw_line(l);
	for (size_t i = 0; i < ARRAY_SIZE(tui_help_notes); i++)
		tui_draw_text(tui_draw_line(l), 0, 0, "%s", tui_help_notes[i]);
}
