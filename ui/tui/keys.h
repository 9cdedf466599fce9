/*
 * The TUI's key bindings: one table of keys, action and help text.  The
 * help screen is generated from it, so help cannot drift from behaviour.
 * UI thread.
 */
#ifndef MEMTOP_KEYS_H
#define MEMTOP_KEYS_H

#include <stddef.h>

enum keys_action {
	KEYS_NONE = 0,
	KEYS_PERIOD_UP,
	KEYS_PERIOD_DOWN,
	KEYS_PERIOD_PROMPT,
	KEYS_SORT,
	KEYS_PAUSE,
	KEYS_RESET,
	KEYS_VIEW_NUMA,
	KEYS_VIEW_CPU,
	KEYS_DETAIL,
	KEYS_HELP,
	KEYS_BACK,
	KEYS_QUIT,
	KEYS_UP,
	KEYS_DOWN,
	KEYS_PAGE_UP,
	KEYS_PAGE_DOWN,
	KEYS_HOME,
	KEYS_END,
	KEYS_GRANULARITY,
	KEYS_VIEW_CODE,
	KEYS_REPLAY_FASTER,	/* replay (-i) only */
	KEYS_REPLAY_SLOWER,
	KEYS_REPLAY_END,
	KEYS_MIGRATE_PAGE,	/* press twice: the second press confirms */
	KEYS_MIGRATE_HOT,
	KEYS_VIEW_PROCS,
	KEYS_VIEW_OBJECTS,
};

#define KEYS_PER_BINDING 4

struct keys_binding {
	int keys[KEYS_PER_BINDING];	/* curses key codes; 0 ends the list */
	const char *label;		/* how the help screen names the keys */
	enum keys_action action;
	const char *help;
	const char *hint;		/* status-line hint, NULL for none */
};

/* The action bound to a curses key code, KEYS_NONE if unbound. */
enum keys_action keys_lookup(int ch);
/* The whole table, in help-screen order. */
const struct keys_binding *keys_table(size_t *n);

#endif
