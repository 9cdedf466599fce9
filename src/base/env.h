/*
 * Numbers from the environment: the MEMTOP_* knobs that tests, benchmarks
 * and users set (timeouts, ring sizes).  Any thread.
 */
#ifndef MEMTOP_ENV_H
#define MEMTOP_ENV_H

#include <stdbool.h>

/* True, with *out set, when the variable name holds a decimal number in
 * [lo, hi] and nothing else; false when it is unset, empty or anything
 * else (the caller keeps its default). */
bool env_ulong(const char *name, unsigned long lo, unsigned long hi,
	       unsigned long *out);

#endif
