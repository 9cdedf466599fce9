/*
 * NUMA panel (under the hot-pages table) and the full NUMA view, with the
 * per-node history behind their sparklines.  UI thread.
 *
 * Per node: CPU side (samples issued by the node's CPUs), memory side
 * (samples landing on the node's memory), local % (of the CPU side, the
 * part that stayed on the node), memory in use, and a sparkline of the
 * memory side over the last TUI_HISTORY frames.  All sparklines share one
 * scale so that nodes can be compared by eye.
 */
#include "config.h"

#include <curses.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "frame.h"
#include "tui.h"
#include "xalloc.h"

#define TUI_NUMA_COL_NODE 4
#define TUI_NUMA_COL_COUNT 9
#define TUI_NUMA_COL_LOCAL 7
#define TUI_NUMA_COL_MEM 17
#define TUI_NUMA_COL_CELL 9
#define TUI_NUMA_HISTORY_X (TUI_NUMA_COL_NODE + 1 + \
			    2 * (TUI_NUMA_COL_COUNT + 1) + \
			    TUI_NUMA_COL_LOCAL + 1 + TUI_NUMA_COL_MEM + 1)

void
tui_numa_history_push(struct tui *t, const struct frame *f)
{
	struct tui_history *h = &t->history;

	if (f->n_nodes == 0)
		return;
	if (h->nodes != f->n_nodes) {
		free(h->values);
		h->values = xcalloc(TUI_HISTORY * f->n_nodes,
				    sizeof(*h->values));
		h->nodes = f->n_nodes;
		h->len = 0;
		h->head = 0;
	}
	for (size_t i = 0; i < h->nodes; i++)
		h->values[h->head * h->nodes + i] = f->nodes[i].mem_samples;
	h->head = (h->head + 1) % TUI_HISTORY;
	if (h->len < TUI_HISTORY)
		h->len++;
}

void
tui_numa_history_fini(struct tui_history *h)
{
	free(h->values);
	h->values = NULL;
	h->nodes = h->len = h->head = 0;
}

/* Entry k of the newest `len` entries, oldest first. */
static uint64_t
tui_numa_history_at(const struct tui_history *h, size_t len, size_t k,
		    size_t node)
{
	size_t slot = (h->head + TUI_HISTORY - len + k) % TUI_HISTORY;

	return h->values[slot * h->nodes + node];
}

static void
tui_numa_sparkline(const struct tui *t, int y, int x, size_t node)
{
	const struct tui_history *h = &t->history;
	size_t width, len;
	uint64_t max = 0;

	if (x >= COLS || node >= h->nodes)
		return;
	width = (size_t)(COLS - x - 1);
	len = h->len < width ? h->len : width;
	for (size_t n = 0; n < h->nodes; n++)
		for (size_t k = 0; k < len; k++) {
			uint64_t v = tui_numa_history_at(h, len, k, n);

			max = v > max ? v : max;
		}
	move(y, x);
	attron(tui_draw_attr(t, TUI_COLOR_BAR, 0));
	for (size_t k = 0; k < len; k++)
		addstr(tui_draw_level(t, tui_numa_history_at(h, len, k, node),
				      max));
	attroff(tui_draw_attr(t, TUI_COLOR_BAR, 0));
}

static void
tui_numa_title(int y)
{
	if (y < 0)
		return;
	attron(A_REVERSE);
	mvhline(y, 0, ' ', COLS);
	tui_draw_text(y, 0, A_REVERSE, "%*s %*s %*s %*s %-*s %s",
		      TUI_NUMA_COL_NODE, "NODE", TUI_NUMA_COL_COUNT, "CPU-SIDE",
		      TUI_NUMA_COL_COUNT, "MEM-SIDE", TUI_NUMA_COL_LOCAL,
		      "LOCAL%", TUI_NUMA_COL_MEM, " MEM USED",
		      "HISTORY (mem side)");
	attroff(A_REVERSE);
}

static void
tui_numa_row(const struct tui *t, int y, size_t i)
{
	const struct frame_node *n = &t->cur->nodes[i];
	char cpu[16], mem[16], local[16], used[16], total[16], usage[40];

	if (y < 0)
		return;
	tui_draw_count(cpu, sizeof(cpu), n->cpu_samples);
	tui_draw_count(mem, sizeof(mem), n->mem_samples);
	if (n->local + n->remote)
		snprintf(local, sizeof(local), "%.1f",
			 100.0 * n->local / (n->local + n->remote));
	else
		snprintf(local, sizeof(local), "-");
	if (n->mem_total_kb && n->mem_free_kb <= n->mem_total_kb) {
		uint64_t in_use = n->mem_total_kb - n->mem_free_kb;

		snprintf(usage, sizeof(usage), " %s/%s %2.0f%%",
			 tui_draw_kb(used, sizeof(used), in_use),
			 tui_draw_kb(total, sizeof(total), n->mem_total_kb),
			 100.0 * in_use / n->mem_total_kb);
	} else {
		snprintf(usage, sizeof(usage), " -");
	}
	tui_draw_text(y, 0, 0, "%*" PRId32 " %*s %*s %*s %-*s",
		      TUI_NUMA_COL_NODE, n->node, TUI_NUMA_COL_COUNT, cpu,
		      TUI_NUMA_COL_COUNT, mem, TUI_NUMA_COL_LOCAL, local,
		      TUI_NUMA_COL_MEM, usage);
	tui_numa_sparkline(t, y, TUI_NUMA_HISTORY_X, i);
}

int
tui_numa_panel(const struct tui *t, int y, int max_rows)
{
	const struct frame *f = t->cur;
	size_t rows = max_rows > 1 ? (size_t)max_rows - 1 : 0;
	size_t shown;

	if (!f || max_rows < 2)
		return 0;
	tui_numa_title(y);
	shown = f->n_nodes <= rows ? f->n_nodes : rows - 1;
	for (size_t i = 0; i < shown; i++)
		tui_numa_row(t, y + 1 + (int)i, i);
	if (shown < f->n_nodes)
		tui_draw_text(y + 1 + (int)shown, 0, 0,
			      "... %zu more nodes: press n",
			      f->n_nodes - shown);
	return 1 + (int)(shown < f->n_nodes ? shown + 1 : shown);
}

static void
tui_numa_matrix(const struct tui *t, struct tui_lines *l)
{
	const struct frame *f = t->cur;
	char buf[16];
	int y, x;

	tui_draw_line(l);
	tui_draw_text(tui_draw_line(l), 0, A_BOLD, "Node x node matrix, this "
		      "interval: rows = CPU node, columns = memory node");
	y = tui_draw_line(l);
	if (y >= 0) {
		attron(A_REVERSE);
		mvhline(y, 0, ' ', COLS);
		tui_draw_text(y, 0, A_REVERSE, "%-8s", "");
		x = 8;
		for (size_t j = 0; j < f->n_nodes; j++) {
			snprintf(buf, sizeof(buf), "mem %" PRId32,
				 f->nodes[j].node);
			tui_draw_text(y, x, A_REVERSE, "%*s",
				      TUI_NUMA_COL_CELL, buf);
			x += TUI_NUMA_COL_CELL;
		}
		tui_draw_text(y, x, A_REVERSE, "%*s", TUI_NUMA_COL_CELL,
			      "unknown");
		attroff(A_REVERSE);
	}
	for (size_t i = 0; i < f->n_nodes; i++) {
		y = tui_draw_line(l);
		if (y < 0)
			continue;
		tui_draw_text(y, 0, 0, "cpu %-4" PRId32, f->nodes[i].node);
		x = 8;
		for (size_t j = 0; j < f->n_nodes; j++, x += TUI_NUMA_COL_CELL)
			tui_draw_text(y, x, i == j ? A_BOLD : 0, "%*s",
				      TUI_NUMA_COL_CELL,
				      tui_draw_count(buf, sizeof(buf),
					f->matrix[i * f->n_nodes + j]));
		tui_draw_text(y, x, 0, "%*s", TUI_NUMA_COL_CELL,
			      tui_draw_count(buf, sizeof(buf),
					     f->matrix_unknown[i]));
	}
	tui_draw_text(tui_draw_line(l), 0, 0, "CPU of unknown node: %" PRIu64
		      " samples; page of unknown node: %" PRIu64 " samples",
		      f->cpu_unknown, f->mem_unknown);
}

void
tui_numa_view(const struct tui *t, struct tui_lines *l)
{
	const struct frame *f = t->cur;
	char imbalance[48] = "";

	if (!f)
		return;
	/* Imbalance: 1.0 = memory-side samples spread evenly over the
	 * nodes, n_nodes = all on one node; negative when unknown. */
	if (f->imbalance >= 0)
		snprintf(imbalance, sizeof(imbalance), ", imbalance %.2f "
			 "(1.00 = even)", f->imbalance);
	tui_draw_text(tui_draw_line(l), 0, A_BOLD, "NUMA: %zu node%s, %" PRIu64
		      " samples this interval%s", f->n_nodes,
		      f->n_nodes == 1 ? "" : "s", f->totals.samples,
		      imbalance);
	if (f->n_nodes == 0) {
		tui_draw_text(tui_draw_line(l), 0, 0,
			      "no node information in this frame");
		return;
	}
	tui_numa_title(tui_draw_line(l));
	for (size_t i = 0; i < f->n_nodes; i++)
		tui_numa_row(t, tui_draw_line(l), i);
	if (f->matrix && f->matrix_unknown)
		tui_numa_matrix(t, l);
	tui_draw_line(l);
	tui_draw_text(tui_draw_line(l), 0, 0, "LOCAL%%: share of the node's "
		      "CPU-side samples that touched its own memory.");
	tui_draw_text(tui_draw_line(l), 0, 0, "HISTORY: memory-side samples "
		      "of the last %d frames, one scale for all nodes.",
		      TUI_HISTORY);
}
