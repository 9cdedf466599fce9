/*
 * Code view: the functions that cause most samples (frame.code_sites),
 * the ips of each summed per function.  UI thread.  "?" is a function no
 * symbol covers (stripped code, JIT, a process gone before memtop read its
 * maps); its module or region still says where the code is.
 */
#include "config.h"

#include <curses.h>
#include <inttypes.h>
#include <stdio.h>

#include "frame.h"
#include "sortkey.h"
#include "tui.h"

#define TUI_CODE_BAR 16

void
tui_code_view(const struct tui *t, struct tui_lines *l)
{
	const struct frame *f = t->cur;
	bool by_total = f && f->sort == SORT_TOTAL;
	uint64_t max = 0, whole;
	char a[16], b[16];
	int y;

	if (t->view == TUI_VIEW_OBJECTS) {
		tui_objects_view(t, l);
		return;
	}
	if (!f)
		return;
	whole = by_total ? f->cumulative.samples : f->totals.samples;
	for (size_t i = 0; i < f->n_code_sites; i++) {
		uint64_t v = by_total ? f->code_sites[i].total :
					f->code_sites[i].samples;

		if (v > max)
			max = v;
	}
	y = tui_draw_line(l);
	if (y >= 0)
		tui_draw_text(y, 0, tui_draw_attr(t, TUI_COLOR_TITLE, A_BOLD),
			      "Functions causing most samples, by %s",
			      by_total ? "samples since start" :
					 "samples this interval");
	y = tui_draw_line(l);
	if (y >= 0)
		tui_draw_text(y, 0, A_BOLD, "%9s %9s %6s %-*s %s", "interval",
			      "total", "share", TUI_CODE_BAR, "",
			      "function / module");
	if (f->n_code_sites == 0) {
		y = tui_draw_line(l);
		if (y >= 0)
			tui_draw_text(y, 0, tui_draw_attr(t, TUI_COLOR_DIM, 0),
				      "no sample carried an instruction "
				      "pointer yet");
	}
	for (size_t i = 0; i < f->n_code_sites; i++) {
		const struct frame_code_site *c = &f->code_sites[i];
		uint64_t v = by_total ? c->total : c->samples;
		int x = 0;

		y = tui_draw_line(l);
		if (y < 0)
			continue;
		tui_draw_text(y, x, 0, "%9s %9s %5.1f%% ",
			      tui_draw_count(a, sizeof(a), c->samples),
			      tui_draw_count(b, sizeof(b), c->total),
			      whole ? 100.0 * v / whole : 0.0);
		x += 27;
		tui_draw_bar(t, y, x, TUI_CODE_BAR, v, max);
		x += TUI_CODE_BAR + 1;
		if (x >= COLS)
			continue;
		if (c->function)
			tui_draw_safe(y, x, COLS - x, c->function);
		else
			tui_draw_text(y, x, 0, "?");
		y = tui_draw_line(l);
		if (y >= 0 && c->module) {
			tui_draw_text(y, x, tui_draw_attr(t, TUI_COLOR_DIM, 0),
				      "pid %" PRId32 " ", c->pid);
			tui_draw_safe(y, x + 12, COLS - x - 12, c->module);
		}
	}
	y = tui_draw_line(l);
	y = tui_draw_line(l);
	if (y >= 0)
		tui_draw_text(y, 0, tui_draw_attr(t, TUI_COLOR_DIM, 0),
			      "this interval: %" PRIu64 " samples without an "
			      "instruction pointer, %" PRIu64 " past the code "
			      "table", f->code_unknown, f->code_untracked);
}

/* The detail view's part: the page's code sites and its cache-line heat,
 * from row y up to (not including) row end.  Returns the next free row. */
int
tui_code_page(const struct tui *t, const struct frame_page *p, int y,
	      int end)
{
	int dim = tui_draw_attr(t, TUI_COLOR_DIM, 0), x;
	uint32_t max = 0;
	size_t hot = 0;
	char a[16];

	if (y < end)
		tui_draw_text(y++, 0, A_BOLD, "%-16s%14s  %s", "code sites",
			      "samples", "ip, function (since start/reset)");
	if (p->n_sites == 0 && y < end)
		tui_draw_text(y++, 0, dim, "%-16s%14s  %s", "", "-",
			      "no sample on this page carried an ip");
	for (size_t i = 0; i < p->n_sites && y < end; i++) {
		const struct frame_site *s = &p->sites[i];

		tui_draw_text(y, 0, 0, "%-16s%14s  0x%-14" PRIx64, "",
			      tui_draw_count(a, sizeof(a), s->samples), s->ip);
		tui_draw_safe(y++, 49, COLS - 49, s->symbol ? s->symbol : "?");
		if (!s->caller || y >= end)
			continue;
		tui_draw_text(y, 0, dim, "%-16s%14s  0x%-14" PRIx64,
			      "  called from", "", s->caller);
		tui_draw_safe(y++, 49, COLS - 49,
			      s->caller_symbol ? s->caller_symbol : "?");
	}
	if (p->sites_other && y < end)
		tui_draw_text(y++, 0, 0, "%-16s%14s  other ips (beyond %d "
			      "kept per page) or none", "",
			      tui_draw_count(a, sizeof(a), p->sites_other),
			      FRAME_SITES);
	if (y < end)
		y++;
	if (y >= end)
		return y;
	if (!p->lines) {
		tui_draw_text(y++, 0, dim, "%-16s%s", "cache lines",
			      "not kept for this page (only the first pages "
			      "of a frame carry them)");
		return y;
	}
	for (size_t i = 0; i < FRAME_LINES; i++)
		if (p->lines[i] > max) {
			max = p->lines[i];
			hot = i;
		}
	tui_draw_text(y, 0, 0, "%-16s", "cache lines");
	x = 16;
	for (size_t i = 0; i < FRAME_LINES && x < COLS; i++, x++)
		mvaddstr(y, x, tui_draw_level(t, p->lines[i], max));
	y++;
	if (y < end)
		tui_draw_text(y++, 0, dim, "%-16s%" PRIu32 " lines of %" PRIu32
			      " bytes; hottest +0x%zx with %" PRIu32
			      " samples", "", (uint32_t)FRAME_LINES,
			      p->size / FRAME_LINES, hot * (p->size / FRAME_LINES),
			      max);
	return y;
}
