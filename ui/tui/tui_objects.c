/*
 * Objects view (key o, issue 18): allocation sites ranked by this
 * interval's samples on the pages of their objects, with their loads and
 * stores, locality, memory-node mix, bytes mapped and asked, the threads
 * that made them and the threads that first touched them (the thread of each object's first
 * sample: first-touch placement put its pages on that thread's node), so
 * a remote-heavy data structure is seen with the code that allocated it.
 * UI thread.
 */
#include "config.h"

#include <curses.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "tui.h"

/* The node mix: "0:75% 1:25%" of the nodes with samples. */
static void
tui_objects_nodes(const struct frame *f, const struct frame_objsite *s,
		  char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t j = 0; s->nodes && j < f->n_nodes && used < len; j++) {
		if (!s->nodes[j] || !s->samples)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%d:%.0f%%",
					 used ? " " : "", f->nodes[j].node,
					 100.0 * s->nodes[j] / s->samples);
	}
	if (!buf[0])
		snprintf(buf, len, "-");
}

/* "12,13" of the first tids. */
static void
tui_objects_tids(const int32_t *v, size_t n, char *buf, size_t len)
{
	size_t used = 0;

	snprintf(buf, len, "-");
	for (size_t k = 0; k < n && used < len; k++)
		used += (size_t)snprintf(buf + used, len - used, "%s%" PRId32,
					 k ? "," : "", v[k]);
}

static void
tui_objects_row(const struct tui *t, struct tui_lines *l,
		const struct frame_objsite *s)
{
	const struct frame *f = t->cur;
	char a[16], b[16], c[16], d[16], e[16], nodes[48], loc[8], tids[48];
	char touch[48], g[16];
	int y = tui_draw_line(l);

	if (y < 0)
		return;
	if (s->local + s->remote)
		snprintf(loc, sizeof(loc), "%.0f%%",
			 100.0 * s->local / (s->local + s->remote));
	else
		snprintf(loc, sizeof(loc), "-");
	tui_objects_nodes(f, s, nodes, sizeof(nodes));
	tui_objects_tids(s->tids, s->n_tids, tids, sizeof(tids));
	tui_objects_tids(s->touch_tids, s->n_touch_tids, touch,
			 sizeof(touch));
	tui_draw_text(y, 0, 0, "%9s %8s %8s %6s %7s %9s %-12.12s %-10.10s ",
		      tui_draw_count(a, sizeof(a), s->samples),
		      tui_draw_count(b, sizeof(b), s->loads),
		      tui_draw_count(c, sizeof(c), s->stores), loc,
		      tui_draw_count(d, sizeof(d), s->objects),
		      tui_draw_kb(e, sizeof(e), s->bytes / 1024), nodes, tids);
	if (COLS > 78)
		tui_draw_safe(y, 78, COLS - 78, s->site);
	/* Under the bytes mapped, the bytes asked; under the allocating
	 * threads, the first-touching ones. */
	y = tui_draw_line(l);
	if (y >= 0)
		tui_draw_text(y, 35, 0, "%7s %9s", "asked",
			      tui_draw_kb(g, sizeof(g), s->requested / 1024));
	if (y >= 0 && COLS > 66)
		tui_draw_text(y, 66, 0, "1st %-6.6s", touch);
	if (y >= 0 && s->callers[0] && COLS > 80)
		tui_draw_safe(y, 80, COLS - 80, s->callers[0]);
}

void
tui_objects_view(const struct tui *t, struct tui_lines *l)
{
	const struct frame *f = t->cur;
	int dim = tui_draw_attr(t, TUI_COLOR_DIM, 0), y;

	if (!f)
		return;
	y = tui_draw_line(l);
	if (y >= 0)
		tui_draw_text(y, 0, tui_draw_attr(t, TUI_COLOR_TITLE, A_BOLD),
			      "Allocation sites, by samples this interval on "
			      "their objects' pages");
	if (!f->objects_on) {
		y = tui_draw_line(l);
		if (y >= 0)
			tui_draw_text(y, 0, dim, "objects are not named in "
				      "this run: the header's note says why");
		return;
	}
	y = tui_draw_line(l);
	if (y >= 0)
		tui_draw_text(y, 0, A_BOLD, "%9s %8s %8s %6s %7s %9s %-12s "
			      "%-10s %s", "samples", "loads", "stores",
			      "LOCAL%", "objects", "bytes", "nodes",
			      "threads", "site / caller");
	for (size_t i = 0; i < f->n_objects; i++)
		tui_objects_row(t, l, &f->objects[i]);
	y = tui_draw_line(l);
	y = tui_draw_line(l);
	if (y >= 0)
		tui_draw_text(y, 0, dim, "this interval: %" PRIu64 " samples "
			      "on objects, %" PRIu64 " on pages of none, %"
			      PRIu64 " of sites not listed; %" PRIu64
			      " objects live, %" PRIu64 " not kept (table "
			      "full, no memory, unknown break), %" PRIu64
			      " allocation "
			      "records lost",
			      f->objects_samples, f->objects_none,
			      f->objects_more, f->objects_live,
			      f->objects_untracked, f->objects_lost);
}

int
tui_objects_page(const struct frame_object *o, int y, int lab)
{
	char line[512];
	size_t used;

	frame_object_label(o, line, sizeof(line));
	used = strlen(line);
	snprintf(line + used, sizeof(line) - used, " at 0x%" PRIx64
		 ", thread %" PRId32 ", %.1f s old", o->base, o->tid, o->age);
	tui_draw_text(y, 0, 0, "%-*s", lab, "object");
	tui_draw_safe(y++, lab, COLS - lab, line);
	if (!o->callers[0])
		return y;
	used = 0;
	line[0] = '\0';
	for (size_t k = 0; k < FRAME_OBJ_CALLERS && o->callers[k] &&
	     used < sizeof(line); k++)
		used += (size_t)snprintf(line + used, sizeof(line) - used,
					 "%s%s", k ? " < " : "",
					 o->callers[k]);
	tui_draw_text(y, 0, 0, "%-*s", lab, "called from");
	tui_draw_safe(y++, lab, COLS - lab, line);
	return y;
}
