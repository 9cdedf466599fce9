/*
 * CPU view: samples issued per CPU this interval.  UI thread.
 *
 * Few CPUs (they fit the screen one per row): a bar per CPU.  Many CPUs:
 * a heat grid, one cell per CPU, grouped by node, 8 cells to a block and
 * up to 64 to a row, so 512 CPUs on two nodes take about 12 rows.  Cells
 * share one scale, zero to the busiest CPU.
 */
#include "config.h"

#include <curses.h>
#include <inttypes.h>
#include <stdio.h>

#include "frame.h"
#include "tui.h"

/* More CPUs than this never get one row each. */
#define TUI_CPU_BARS_MAX 64
#define TUI_CPU_BLOCK 8
#define TUI_CPU_ROW_MAX 64
#define TUI_CPU_LABEL 7

static bool
tui_cpu_node_listed(const struct frame *f, int32_t node)
{
	for (size_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].node == node)
			return true;
	return false;
}

/* Group g < n_nodes is node nodes[g]; g == n_nodes collects CPUs whose
 * node the frame does not list. */
static bool
tui_cpu_in_group(const struct frame *f, const struct frame_cpu *c, size_t g)
{
	if (g < f->n_nodes)
		return c->node == f->nodes[g].node;
	return !tui_cpu_node_listed(f, c->node);
}

static void
tui_cpu_bars(const struct tui *t, struct tui_lines *l, uint64_t max)
{
	const struct frame *f = t->cur;
	int bar_w = COLS - 44;
	char buf[16], node[16];

	for (size_t i = 0; i < f->n_cpus; i++) {
		const struct frame_cpu *c = &f->cpus[i];
		int y = tui_draw_line(l);

		if (y < 0)
			continue;
		if (c->node == FRAME_NODE_UNKNOWN)
			snprintf(node, sizeof(node), "-");
		else
			snprintf(node, sizeof(node), "%" PRId32, c->node);
		tui_draw_text(y, 0, 0, "cpu %4" PRId32 "  node %-3s",
			      c->cpu, node);
		tui_draw_bar(t, y, 19, bar_w, c->samples, max);
		tui_draw_text(y, 19 + bar_w + 1, 0, "%9s %5.1f%%",
			      tui_draw_count(buf, sizeof(buf), c->samples),
			      f->totals.samples ? 100.0 * c->samples /
			      f->totals.samples : 0.0);
	}
}

static size_t
tui_cpu_per_row(void)
{
	size_t per_row = TUI_CPU_ROW_MAX;

	while (per_row > TUI_CPU_BLOCK &&
	       TUI_CPU_LABEL + per_row + per_row / TUI_CPU_BLOCK >
	       (size_t)COLS - 1)
		per_row /= 2;
	return per_row;
}

static void
tui_cpu_group(const struct tui *t, struct tui_lines *l, size_t g,
	      uint64_t max)
{
	const struct frame *f = t->cur;
	size_t per_row = tui_cpu_per_row(), count = 0, col = 0;
	uint64_t sum = 0;
	char buf[16];
	int y = -1;

	for (size_t i = 0; i < f->n_cpus; i++) {
		if (tui_cpu_in_group(f, &f->cpus[i], g)) {
			count++;
			sum += f->cpus[i].samples;
		}
	}
	if (count == 0)
		return;
	if (g < f->n_nodes)
		tui_draw_text(tui_draw_line(l), 0, A_BOLD, "node %" PRId32
			      ": %zu CPUs, %s samples", f->nodes[g].node,
			      count, tui_draw_count(buf, sizeof(buf), sum));
	else
		tui_draw_text(tui_draw_line(l), 0, A_BOLD, "node unknown: %zu "
			      "CPUs, %s samples", count,
			      tui_draw_count(buf, sizeof(buf), sum));
	for (size_t i = 0; i < f->n_cpus; i++) {
		const struct frame_cpu *c = &f->cpus[i];

		if (!tui_cpu_in_group(f, c, g))
			continue;
		if (col == 0) {
			y = tui_draw_line(l);
			tui_draw_text(y, 0, tui_draw_attr(t, TUI_COLOR_DIM, 0),
				      "%*" PRId32 " ", TUI_CPU_LABEL - 1,
				      c->cpu);
			if (y >= 0)
				move(y, TUI_CPU_LABEL);
		}
		if (y >= 0) {
			if (col && col % TUI_CPU_BLOCK == 0)
				addstr(" ");
			if (c->samples == 0)
				addstr(t->glyphs->zero_cell);
			else
				addstr(tui_draw_level(t, c->samples, max));
		}
		col = (col + 1) % per_row;
	}
}

static void
tui_cpu_grid(const struct tui *t, struct tui_lines *l, uint64_t max)
{
	const struct frame *f = t->cur;
	const struct tui_glyphs *g = t->glyphs;
	char buf[16];
	int y;

	/* The scale comes first: its glyphs are placed by hand and must
	 * not run past the right edge. */
	y = tui_draw_line(l);
	if (y >= 0) {
		tui_draw_text(y, 0, 0, "scale ");
		move(y, 6);
		addstr(g->zero_cell);
		for (int i = 1; i <= 8; i++)
			addstr(g->level[i]);
		tui_draw_text(y, 15, 0, " = 0 .. %s; one cell per CPU, row "
			      "label = first CPU",
			      tui_draw_count(buf, sizeof(buf), max));
	}
	for (size_t grp = 0; grp <= f->n_nodes; grp++)
		tui_cpu_group(t, l, grp, max);
}

void
tui_cpu_view(const struct tui *t, struct tui_lines *l)
{
	const struct frame *f = t->cur;
	uint64_t max = 0;
	size_t busiest = 0;
	char buf[16];

	if (!f)
		return;
	for (size_t i = 0; i < f->n_cpus; i++) {
		if (f->cpus[i].samples > max) {
			max = f->cpus[i].samples;
			busiest = i;
		}
	}
	tui_draw_text(tui_draw_line(l), 0, A_BOLD, "CPUs: %zu on %zu node%s, %"
		      PRIu64 " samples this interval", f->n_cpus, f->n_nodes,
		      f->n_nodes == 1 ? "" : "s", f->totals.samples);
	if (f->n_cpus == 0) {
		tui_draw_text(tui_draw_line(l), 0, 0,
			      "no per-CPU data in this frame");
		return;
	}
	if (max)
		tui_draw_text(tui_draw_line(l), 0, 0, "busiest: cpu %" PRId32
			      " with %s samples; CPU unknown: %" PRIu64,
			      f->cpus[busiest].cpu,
			      tui_draw_count(buf, sizeof(buf), max),
			      f->cpu_unknown);
	else
		tui_draw_text(tui_draw_line(l), 0, 0,
			      "no CPU issued samples this interval");
	if (f->n_cpus <= TUI_CPU_BARS_MAX && f->n_cpus + 2 <= l->rows)
		tui_cpu_bars(t, l, max);
	else
		tui_cpu_grid(t, l, max);
}
