/*
 * Drawing: the header, the hot-pages table, the status line, and the
 * helpers the per-view files share.  UI thread.  Everything is drawn from
 * t->cur and the UI state alone; the only things written back are layout
 * figures (rows visible, first row shown) that the key handlers need.
 *
 * Screen layout, top to bottom: header (4-6 rows), the view's body, one
 * status row.  Below TUI_MIN_COLS x TUI_MIN_ROWS only a message is shown.
 */
#include "config.h"

#include <curses.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "keys.h"
#include "tui.h"
#include "ui.h"

/* Table columns; the region/symbol column takes what is left. */
#define TUI_COL_ADDR 14
#define TUI_COL_PID 7
#define TUI_COL_COUNT 8
#define TUI_COL_TOTAL 9
#define TUI_COL_SHARE 6
#define TUI_COL_BAR_MAX 12
#define TUI_COL_NODE 4
#define TUI_COL_LOCAL 6
#define TUI_COL_LAT 7
#define TUI_COL_REGION_MIN 14

/* Rows of the NUMA panel under the table, title included, at most. */
#define TUI_PANEL_MAX_ROWS 9

static const struct tui_glyphs tui_glyphs_utf8 = {
	.bar_full = "\u2588",
	.bar_part = { "", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b",
		      "\u258a", "\u2589" },
	.level = { " ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585",
		   "\u2586", "\u2587", "\u2588" },
	.zero_cell = "\u00b7",
	.dash = "\u2014",
};

static const struct tui_glyphs tui_glyphs_ascii = {
	.bar_full = "#",
	.bar_part = { "", "", "", "", "=", "=", "=", "=" },
	.level = { " ", ".", ":", "-", "=", "+", "*", "#", "@" },
	.zero_cell = "_",
	.dash = "-",
};

const struct tui_glyphs *
tui_draw_glyphs(bool utf8)
{
	return utf8 ? &tui_glyphs_utf8 : &tui_glyphs_ascii;
}

/* Colour when the terminal has it, else the monochrome attribute. */
int
tui_draw_attr(const struct tui *t, enum tui_color color, int mono)
{
	if (t->colors)
		return (int)COLOR_PAIR(color) | (mono & A_BOLD);
	return mono;
}

/* Bytes that are not printable ASCII become '?', so one byte is one
 * column and clipping at the right edge is exact. */
static void
tui_draw_clean(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

void
tui_draw_text(int y, int x, int attr, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (y < 0 || y >= LINES || x < 0 || x >= COLS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	tui_draw_clean(buf);
	attron(attr);
	mvaddnstr(y, x, buf, COLS - x);
	attroff(attr);
}

void
tui_draw_safe(int y, int x, int width, const char *s)
{
	if (s && width > 0)
		tui_draw_text(y, x, 0, "%.*s", width, s);
}

void
tui_draw_bar(const struct tui *t, int y, int x, int width, uint64_t value,
	     uint64_t max)
{
	uint64_t eighths;
	int full, part;

	if (width <= 0 || max == 0 || y >= LINES)
		return;
	if (value > max)
		value = max;
	eighths = (uint64_t)((double)value / (double)max * width * 8 + 0.5);
	full = (int)(eighths / 8);
	part = (int)(eighths % 8);
	move(y, x);
	attron(tui_draw_attr(t, TUI_COLOR_BAR, 0));
	for (int i = 0; i < full && x + i < COLS; i++)
		addstr(t->glyphs->bar_full);
	if (part && full < width && x + full < COLS)
		addstr(t->glyphs->bar_part[part]);
	attroff(tui_draw_attr(t, TUI_COLOR_BAR, 0));
}

const char *
tui_draw_level(const struct tui *t, uint64_t value, uint64_t max)
{
	if (value == 0 || max == 0)
		return t->glyphs->level[0];
	if (value >= max)
		return t->glyphs->level[8];
	return t->glyphs->level[1 + (int)((double)value / (double)max * 7)];
}

char *
tui_draw_count(char *buf, size_t len, uint64_t n)
{
	static const char units[] = "kMGTPE";
	double v = (double)n;
	int u = -1;

	if (n < 10000000) {
		snprintf(buf, len, "%" PRIu64, n);
		return buf;
	}
	while (v >= 9999.5 && u < (int)sizeof(units) - 2) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, "%.*f%c", v < 100 ? 1 : 0, v, units[u]);
	return buf;
}

char *
tui_draw_kb(char *buf, size_t len, uint64_t kb)
{
	static const char units[] = "KMGTPE";
	double v = (double)kb;
	int u = 0;

	while (v >= 1024 && u < (int)sizeof(units) - 2) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f%c" : "%.0f%c", v, units[u]);
	return buf;
}

int
tui_draw_line(struct tui_lines *l)
{
	size_t i = l->n++;

	if (i < l->skip || i - l->skip >= l->rows)
		return -1;
	return l->y0 + (int)(i - l->skip);
}

/* Bars are scaled to the frame's hottest page so that ranks stand out;
 * the exact share is printed beside them. */
static void
tui_draw_page_row(const struct tui *t, int y, const struct frame_page *p,
		  int bar_w, bool latency, double max_share)
{
	char addr[24], a[16], b[16], tot[16], obj[160];
	int x = 0;

	snprintf(addr, sizeof(addr), "0x%" PRIx64, p->addr);
	tui_draw_text(y, x, 0, "%-*s %*d", TUI_COL_ADDR, addr, TUI_COL_PID,
		      p->pid);
	x += TUI_COL_ADDR + 1 + TUI_COL_PID + 1;
	if (t->cur->has_kinds) {
		tui_draw_text(y, x, 0, "%*s %*s", TUI_COL_COUNT,
			      tui_draw_count(a, sizeof(a), p->loads),
			      TUI_COL_COUNT,
			      tui_draw_count(b, sizeof(b), p->stores));
		x += 2 * (TUI_COL_COUNT + 1);
	} else {
		tui_draw_text(y, x, 0, "%*s", TUI_COL_COUNT,
			      tui_draw_count(a, sizeof(a), p->samples));
		x += TUI_COL_COUNT + 1;
	}
	tui_draw_text(y, x, 0, "%*s %5.1f%%", TUI_COL_TOTAL,
		      tui_draw_count(tot, sizeof(tot), p->total),
		      p->share * 100);
	x += TUI_COL_TOTAL + 1 + TUI_COL_SHARE + 1;
	if (max_share > 0)
		tui_draw_bar(t, y, x, bar_w,
			     (uint64_t)(p->share / max_share * 1000000),
			     1000000);
	x += bar_w + (bar_w > 0);
	if (p->node == FRAME_NODE_UNKNOWN)
		tui_draw_text(y, x, 0, "%*s", TUI_COL_NODE, "-");
	else
		tui_draw_text(y, x, 0, "%*d", TUI_COL_NODE, p->node);
	x += TUI_COL_NODE + 1;
	if (p->local + p->remote)
		tui_draw_text(y, x, 0, "%*.1f", TUI_COL_LOCAL, 100.0 *
			      p->local / (p->local + p->remote));
	else
		tui_draw_text(y, x, 0, "%*s", TUI_COL_LOCAL, "-");
	x += TUI_COL_LOCAL + 1;
	if (latency) {
		if (p->latency >= 0)
			tui_draw_text(y, x, 0, "%*.0f", TUI_COL_LAT,
				      p->latency);
		else
			tui_draw_text(y, x, 0, "%*s", TUI_COL_LAT, "-");
		x += TUI_COL_LAT + 1;
	}
	if (p->region) {
		tui_draw_safe(y, x, COLS - x, p->region);
		x += (int)strlen(p->region) + 1;
	}
	if (p->object)	/* heap and anonymous memory: the object's site */
		frame_object_label(p->object, obj, sizeof(obj));
	if ((p->object || p->symbol) && x < COLS)
		tui_draw_safe(y, x, COLS - x, p->object ? obj : p->symbol);
}

static void
tui_draw_pages(struct tui *t, int y, int rows)
{
	const struct frame *f = t->cur;
	double max_share = 0;
	bool latency = false;
	int fixed, bar_w, x;

	t->page_rows = rows > 1 ? (size_t)rows - 1 : 0;
	if (!f || rows < 2)
		return;
	for (size_t i = 0; i < f->n_pages; i++) {
		latency |= f->pages[i].latency >= 0;
		if (f->pages[i].share > max_share)
			max_share = f->pages[i].share;
	}
	fixed = TUI_COL_ADDR + 1 + TUI_COL_PID + 1 +
		(f->has_kinds ? 2 : 1) * (TUI_COL_COUNT + 1) +
		TUI_COL_TOTAL + 1 + TUI_COL_SHARE + 1 + TUI_COL_NODE + 1 +
		TUI_COL_LOCAL + 1 + (latency ? TUI_COL_LAT + 1 : 0);
	bar_w = COLS - fixed - TUI_COL_REGION_MIN - 1;
	bar_w = bar_w < 0 ? 0 : bar_w > TUI_COL_BAR_MAX ? TUI_COL_BAR_MAX :
		bar_w;

	attron(A_REVERSE);
	mvhline(y, 0, ' ', COLS);
	tui_draw_text(y, 0, A_REVERSE, "%-*s %*s", TUI_COL_ADDR, "ADDRESS",
		      TUI_COL_PID, "PID");
	x = TUI_COL_ADDR + 1 + TUI_COL_PID + 1;
	if (f->has_kinds) {
		tui_draw_text(y, x, A_REVERSE, "%*s %*s", TUI_COL_COUNT,
			      "LOADS", TUI_COL_COUNT, "STORES");
		x += 2 * (TUI_COL_COUNT + 1);
	} else {
		tui_draw_text(y, x, A_REVERSE, "%*s", TUI_COL_COUNT,
			      strcmp(f->source, "faults") == 0 ? "FAULTS" :
			      "SAMPLES");
		x += TUI_COL_COUNT + 1;
	}
	tui_draw_text(y, x, A_REVERSE, "%*s %-*s", TUI_COL_TOTAL, "TOTAL",
		      TUI_COL_SHARE, " SHARE");
	x += TUI_COL_TOTAL + 1 + TUI_COL_SHARE + 1 + bar_w + (bar_w > 0);
	tui_draw_text(y, x, A_REVERSE, "%*s %*s", TUI_COL_NODE, "NODE",
		      TUI_COL_LOCAL, "LOCAL%");
	x += TUI_COL_NODE + 1 + TUI_COL_LOCAL + 1;
	if (latency) {
		tui_draw_text(y, x, A_REVERSE, "%*s", TUI_COL_LAT, "LAT");
		x += TUI_COL_LAT + 1;
	}
	tui_draw_text(y, x, A_REVERSE, "REGION/SYMBOL");
	attroff(A_REVERSE);
	y++;

	if (f->n_pages == 0) {
		tui_draw_text(y, 0, 0, "no samples in this interval");
		return;
	}
	/* Keep the selection on screen. */
	if (t->sel < t->sel_top)
		t->sel_top = t->sel;
	else if (t->sel >= t->sel_top + t->page_rows)
		t->sel_top = t->sel - t->page_rows + 1;
	if (t->sel_top >= f->n_pages)
		t->sel_top = 0;
	for (size_t r = 0; r < t->page_rows; r++) {
		size_t i = t->sel_top + r;

		if (i >= f->n_pages)
			break;
		tui_draw_page_row(t, y + (int)r, &f->pages[i], bar_w, latency,
				  max_share);
		if (i == t->sel)
			mvchgat(y + (int)r, 0, -1, A_REVERSE, 0, NULL);
	}
}

static void
tui_draw_status(const struct tui *t)
{
	int y = LINES - 1, x = 0;
	size_t n;
	const struct keys_binding *kb = keys_table(&n);

	move(y, 0);
	clrtoeol();
	if (t->prompt_active) {
		tui_draw_text(y, 0, A_BOLD, "period: %s", t->prompt);
		x = (int)(sizeof("period: ") - 1 + t->prompt_len);
		tui_draw_text(y, x, A_REVERSE, " ");
		tui_draw_text(y, x + 1, 0, "  Enter sets it, Esc cancels");
		return;
	}
	if (t->status[0]) {
		tui_draw_text(y, 0, tui_draw_attr(t, TUI_COLOR_WARN, A_BOLD),
			      "%s", t->status);
		return;
	}
	for (size_t i = 0; i < n && x < COLS - 1; i++) {
		if (!kb[i].hint)
			continue;
		tui_draw_text(y, x, A_BOLD, "%s", kb[i].label);
		x += (int)strlen(kb[i].label) + 1;
		tui_draw_text(y, x, 0, "%s", kb[i].hint);
		x += (int)strlen(kb[i].hint) + 2;
	}
}

static void
tui_draw_too_small(void)
{
	char msg[80];
	int len, cols = COLS > 1 ? COLS - 1 : 1;

	len = snprintf(msg, sizeof(msg), "terminal too small (%dx%d), "
		       "need %dx%d", COLS, LINES, TUI_MIN_COLS, TUI_MIN_ROWS);
	/* Wraps by hand, leaving the last column free so that nothing
	 * ever writes the bottom-right cell. */
	for (int y = 0, off = 0; y < LINES && off < len; y++, off += cols)
		mvaddnstr(y, 0, msg + off, cols);
}

static void
tui_draw_main(struct tui *t, int y, int rows)
{
	const struct frame *f = t->cur;
	int panel = 0;

	if (f && f->n_nodes > 0) {
		panel = 1 + (int)f->n_nodes;
		if (panel > TUI_PANEL_MAX_ROWS)
			panel = TUI_PANEL_MAX_ROWS;
		/* The panel yields to the table on short screens. */
		if (rows - panel - 1 < 4)
			panel = 0;
	}
	tui_draw_pages(t, y, rows - panel - (panel > 0));
	if (panel)
		tui_numa_panel(t, y + rows - panel, panel);
}

void
tui_draw(struct tui *t)
{
	struct tui_lines lines = { 0 };
	int y, rows;

	erase();
	if (COLS < TUI_MIN_COLS || LINES < TUI_MIN_ROWS) {
		tui_draw_too_small();
		refresh();
		return;
	}
	y = tui_draw_header(t);
	rows = LINES - 1 - y;
	lines.y0 = y;
	lines.rows = (size_t)rows;
	lines.skip = t->scroll;
	switch (t->view) {
	case TUI_VIEW_MAIN:
		tui_draw_main(t, y, rows);
		break;
	case TUI_VIEW_DETAIL:
		tui_detail_view(t, y, rows);
		break;
	case TUI_VIEW_NUMA:
		tui_numa_view(t, &lines);
		break;
	case TUI_VIEW_CPU:
		tui_cpu_view(t, &lines);
		break;
	case TUI_VIEW_HELP:
		tui_help_view(t, &lines);
		break;
	case TUI_VIEW_CODE:
	case TUI_VIEW_OBJECTS:	/* tui_code_view hands it on */
		tui_code_view(t, &lines);
		break;
	case TUI_VIEW_PROCS:
		tui_procs_view(t, y, rows);
		break;
	}
	t->body_rows = (size_t)rows;
	t->body_lines = lines.n;
	tui_draw_status(t);
	refresh();
}
