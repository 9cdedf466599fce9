/*
 * Key table.  UI thread.  Each row is one line of the help screen; a row
 * may carry several key codes (Enter arrives as '\r' with nonl(), as '\n'
 * without, and as KEY_ENTER from a keypad).
 */
#include "config.h"

#include <curses.h>

#include "base.h"
#include "keys.h"

#define KEYS_ESC 27
#define KEYS_DEL 127

static const struct keys_binding keys_bindings[] = {
	{ { '+', '=' }, "+", KEYS_PERIOD_UP,
	  "double the sampling period (fewer samples)", "x2" },
	{ { '-', '_' }, "-", KEYS_PERIOD_DOWN,
	  "halve the sampling period (more samples, never below 1)", "/2" },
	{ { 'p' }, "p", KEYS_PERIOD_PROMPT,
	  "type a sampling period, Enter sets it, Esc cancels",
	  "period" },
	{ { 's' }, "s", KEYS_SORT,
	  "cycle the sort key: samples, total, loads, stores, latency",
	  "sort" },
	{ { ' ' }, "space", KEYS_PAUSE, "pause or resume sampling", "pause" },
	{ { 'r' }, "r", KEYS_RESET,
	  "reset the page table and the cumulative counters" },
	{ { '>' }, ">", KEYS_REPLAY_FASTER,
	  "replay (-i): play twice as fast" },
	{ { '<' }, "<", KEYS_REPLAY_SLOWER,
	  "replay (-i): play half as fast" },
	{ { 'E' }, "E", KEYS_REPLAY_END,
	  "replay (-i): play the rest at full speed, to the end" },
	{ { 'm' }, "m", KEYS_MIGRATE_PAGE,
	  "move the selected page to the node whose CPUs touch it most "
	  "(press m again to confirm)" },
	{ { 'M' }, "M", KEYS_MIGRATE_HOT,
	  "move every remote-heavy page of the last frame to its busiest "
	  "node (press M again to confirm)" },
	{ { 'n' }, "n", KEYS_VIEW_NUMA,
	  "NUMA view: nodes, history, node x node matrix", "NUMA" },
	{ { 'c' }, "c", KEYS_VIEW_CPU, "CPU view: samples per CPU", "CPU" },
	{ { 'P' }, "P", KEYS_VIEW_PROCS,
	  "process view: samples, locality, busiest node per process (the "
	  "first view with -a or -G); Enter shows the selected one's pages, "
	  "Esc comes back" },
	{ { 'f' }, "f", KEYS_VIEW_CODE,
	  "code view: the functions causing most samples" },
	{ { 'o' }, "o", KEYS_VIEW_OBJECTS,
	  "objects view: allocation sites by samples on their objects' pages, "
	  "LOCAL%, node mix, allocating threads" },
	{ { 'g' }, "g", KEYS_GRANULARITY,
	  "cycle the page size: 4 KiB, 2 MiB, 1 GiB (live)" },
	{ { '\r', '\n', KEY_ENTER }, "Enter", KEYS_DETAIL,
	  "details of the selected page", "detail" },
	{ { 'h', '?', KEY_F(1) }, "h ?", KEYS_HELP,
	  "this help; again to leave it", "help" },
	{ { KEYS_ESC, KEY_BACKSPACE, KEYS_DEL, KEY_LEFT }, "Esc", KEYS_BACK,
	  "back to the hot-pages view" },
	{ { 'q', 'Q', KEY_F(10) }, "q", KEYS_QUIT, "quit", "quit" },
	{ { KEY_UP, 'k' }, "Up", KEYS_UP, "select the previous page / scroll" },
	{ { KEY_DOWN, 'j' }, "Down", KEYS_DOWN,
	  "select the next page / scroll" },
	{ { KEY_PPAGE }, "PgUp", KEYS_PAGE_UP, "one screen up" },
	{ { KEY_NPAGE }, "PgDn", KEYS_PAGE_DOWN, "one screen down" },
	{ { KEY_HOME }, "Home", KEYS_HOME, "first page / top" },
	{ { KEY_END, 'G' }, "End", KEYS_END, "last page / bottom" },
};

#define KEYS_N_BINDINGS ARRAY_SIZE(keys_bindings)

enum keys_action
keys_lookup(int ch)
{
	if (ch == 0)
		return KEYS_NONE;
	for (size_t i = 0; i < KEYS_N_BINDINGS; i++)
		for (size_t k = 0; k < KEYS_PER_BINDING; k++)
			if (keys_bindings[i].keys[k] == ch)
				return keys_bindings[i].action;
	return KEYS_NONE;
}

const struct keys_binding *
keys_table(size_t *n)
{
	*n = KEYS_N_BINDINGS;
	return keys_bindings;
}
