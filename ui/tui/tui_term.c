#include "config.h"

/*
 * Whether the terminal interface can start at all, asked on the main
 * thread before anything is launched (see ui.h).  Apart from tui.c
 * because <term.h> defines macros (lines, columns ...) that clash with
 * memtop's names.
 */

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <term.h>
#include <unistd.h>

#include "ui.h"

int
tui_check_terminal(char *why, size_t len)
{
	const char *term = getenv("TERM"), *cup;
	int err = 0, ret = -1;

	/* A TERMINAL of our own, released before newterm() makes its own. */
	if (setupterm(NULL, STDOUT_FILENO, &err) == OK) {
		cup = tigetstr("cup");
		if (cup && cup != (const char *)-1)
			ret = 0;
		del_curterm(cur_term);
	}
	if (ret < 0)
		snprintf(why, len, "cannot start the terminal UI (TERM=%s); use "
			 "-b for batch output", term && *term ? term : "(unset)");
	return ret;
}
