/* What the maps unit tests share (tests/unit/names). */
#ifndef MEMTOP_TEST_MAPS_TEST_H
#define MEMTOP_TEST_MAPS_TEST_H

#include <stdint.h>

#include "maps.h"

/* The name of the region holding addr ("(none)" when none does), in a
 * buffer the next call reuses. */
static inline const char *
maps_test_name(const struct maps *m, uint64_t addr)
{
	static char buf[4200];
	const struct maps_region *r = maps_lookup(m, addr);

	if (!r)
		return "(none)";
	maps_region_name(r, addr, buf, sizeof(buf));
	return buf;
}

#endif
