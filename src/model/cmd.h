/* Commands from the UI to the collector; values copied through a queue. */
#ifndef MEMTOP_CMD_H
#define MEMTOP_CMD_H

#include <stdint.h>

enum cmd_type {
	CMD_SET_PERIOD,		/* value = new period (>= 1) */
	CMD_PAUSE,
	CMD_RESUME,
	CMD_TOGGLE_PAUSE,
	CMD_RESET,		/* clear page table and cumulative counters */
	CMD_SORT,		/* value = enum sort_key */
	CMD_SET_TOP,		/* value = pages per frame */
	CMD_QUIT,
	CMD_SET_GRANULARITY,	/* value = page shift: 12, 21 or 30 */
	/* value = move the best `value` remote-heavy pages of the last frame
	 * (0 = all of them), or, with addr != 0, the one page (pid, addr);
	 * each to the node whose CPUs touched it most.  The results come in
	 * the next frame's migrations. */
	CMD_MIGRATE,
	/* Replay (-i) only; the live collector ignores them. */
	CMD_REPLAY_FASTER,	/* double the playback speed */
	CMD_REPLAY_SLOWER,	/* halve it */
	CMD_REPLAY_END,		/* play the rest at full speed */
	/* pid > 0: frames list that process's pages only (the TUI's
	 * process view, Enter); pid 0: every process's again. */
	CMD_PAGES_OF,
};

struct cmd {
	enum cmd_type type;
	uint64_t value;
	int32_t pid;		/* CMD_MIGRATE of one page; CMD_PAGES_OF */
	uint64_t addr;		/* CMD_MIGRATE of one page; 0 = top pages */
};

#endif
