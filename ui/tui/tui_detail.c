/*
 * Detail view: everything the current frame knows about the selected
 * page.  UI thread.  The page is found again by (pid, addr) in every new
 * frame; when it drops out of the frame's top list the view says so
 * rather than showing another page.
 */
#include "config.h"

#include <curses.h>
#include <inttypes.h>
#include <stdio.h>

#include "datasrc.h"
#include "frame.h"
#include "tui.h"

#define TUI_DETAIL_LABEL 16
#define TUI_DETAIL_BAR 20

static const struct frame_page *
tui_detail_page(const struct tui *t, size_t *rank)
{
	const struct frame *f = t->cur;

	if (!f || !t->sel_valid)
		return NULL;
	for (size_t i = 0; i < f->n_pages; i++) {
		if (f->pages[i].pid == t->sel_pid &&
		    f->pages[i].addr == t->sel_addr) {
			*rank = i + 1;
			return &f->pages[i];
		}
	}
	return NULL;
}

static double
tui_detail_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

void
tui_detail_view(const struct tui *t, int y0, int rows)
{
	const struct frame *f = t->cur;
	const struct frame_page *p;
	int y = y0, end = y0 + rows, lab = TUI_DETAIL_LABEL;
	size_t rank = 0;
	uint64_t seen;

	p = tui_detail_page(t, &rank);
	if (!p) {
		tui_draw_text(y++, 0, A_BOLD, "page 0x%" PRIx64 " of pid %"
			      PRId32 " is not among this frame's top pages",
			      t->sel_addr, t->sel_pid);
		tui_draw_text(y, 0, 0, "Up/Down pick another page, Esc goes "
			      "back");
		return;
	}
	tui_draw_text(y++, 0, tui_draw_attr(t, TUI_COLOR_TITLE, A_BOLD),
		      "page 0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu32 " bytes), "
		      "pid %" PRId32 ", rank %zu of %zu by %s", p->addr,
		      p->addr + (p->size ? p->size - 1 : 0), p->size, p->pid,
		      rank, f->n_pages, sortkey_name(f->sort));
	tui_draw_text(y, 0, 0, "%-*s", lab, "region");
	tui_draw_safe(y++, lab, COLS - lab, p->region ? p->region : "-");
	tui_draw_text(y, 0, 0, "%-*s", lab, "symbol");
	tui_draw_safe(y++, lab, COLS - lab, p->symbol ? p->symbol : "-");
	if (p->object)
		y = tui_objects_page(p->object, y, lab);
	y++;
	tui_draw_text(y++, 0, A_BOLD, "%-*s%14s %18s", lab, "",
		      "this interval", "since start/reset");
	tui_draw_text(y++, 0, 0, "%-*s%14" PRIu64 " %18" PRIu64, lab,
		      f->has_kinds ? "samples" : "samples (faults)",
		      p->samples, p->total);
	if (f->has_kinds) {
		tui_draw_text(y++, 0, 0, "%-*s%14" PRIu64, lab, "loads",
			      p->loads);
		tui_draw_text(y++, 0, 0, "%-*s%14" PRIu64, lab, "stores",
			      p->stores);
		tui_draw_text(y++, 0, 0, "%-*s%14" PRIu64, lab, "other",
			      p->other);
	}
	tui_draw_text(y, 0, 0, "%-*s%13.1f%% ", lab, "share", p->share * 100);
	tui_draw_bar(t, y++, lab + 16, TUI_DETAIL_BAR,
		     (uint64_t)(p->share * 1000000), 1000000);
	if (p->node == FRAME_NODE_UNKNOWN)
		tui_draw_text(y++, 0, 0, "%-*s%14s", lab, "memory node",
			      "unknown");
	else
		tui_draw_text(y++, 0, 0, "%-*s%14" PRId32, lab, "memory node",
			      p->node);
	seen = p->local + p->remote;
	tui_draw_text(y++, 0, 0, "%-*s%14" PRIu64 " %5.1f%%  from CPUs on "
		      "the page's node", lab, "local", p->local,
		      tui_detail_pct(p->local, seen));
	tui_draw_text(y++, 0, 0, "%-*s%14" PRIu64 " %5.1f%%  from CPUs on "
		      "other nodes", lab, "remote", p->remote,
		      tui_detail_pct(p->remote, seen));
	if (p->latency >= 0)
		tui_draw_text(y++, 0, 0, "%-*s%14.1f  cycles, mean weight",
			      lab, "latency", p->latency);
	else
		tui_draw_text(y++, 0, 0, "%-*s%14s  (not given by %s)", lab,
			      "latency", "-", f->source);
	if (p->levels) {
		char mix[256];
		size_t off = 0;

		for (int i = 0; i < FRAME_LEVELS && off < sizeof(mix); i++)
			if (p->levels[i])
				off += (size_t)snprintf(mix + off,
					sizeof(mix) - off, "%s%s %" PRIu64,
					off ? ", " : "",
					datasrc_level_name(
						(enum datasrc_level)i),
					p->levels[i]);
		tui_draw_text(y++, 0, 0, "%-*s  %s", lab, "served from", mix);
	}
	y++;
	tui_code_page(t, p, y, end);
}
