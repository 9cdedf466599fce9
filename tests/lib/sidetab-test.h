/*
 * Key sets shared by the side-table tests (test-sitetab.c,
 * test-sidetabs.c): keys that defeat weak hashes, a heap's consecutive
 * pages and the same few pages of many pids (the spread tests).
 */
#ifndef MEMTOP_SIDETAB_TEST_H
#define MEMTOP_SIDETAB_TEST_H

#include <stdint.h>

struct spread_set {
	uint32_t pids, pages;
	uint64_t first;
};
#define SPREAD_SETS 2
static const struct spread_set spread_sets[SPREAD_SETS] = {
	{ 1, 1u << 16, 0x555555554ull },
	{ 8192, 8, 0x1fcull },
};

#endif
