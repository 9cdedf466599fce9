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
};

struct cmd {
	enum cmd_type type;
	uint64_t value;
};

#endif
