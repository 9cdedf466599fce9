#include "config.h"

/*
 * The code sites' callers (src/aggr/callers.h): the latest caller of each
 * (pid, ip) comes back exactly; sites whose keys collide never show each
 * other's; the vain looks for a site's caller are counted until it has
 * one; past CALLERS_MAX sites a new one gets none; a reset forgets.
 */

#include <stdint.h>

#include "callers.h"
#include "testlib.h"

int
main(void)
{
	struct callers c = { 0 };

	check_eq_u64(callers_get(&c, 1, 0x401000), 0);
	callers_note(&c, 1, 0x401000, 0x402000);
	callers_note(&c, 2, 0x401000, 0x403000);
	callers_note(&c, 1, 0x401008, 0);	/* no caller: not noted */
	check_eq_u64(callers_get(&c, 1, 0x401000), 0x402000);
	check_eq_u64(callers_get(&c, 2, 0x401000), 0x403000);
	check_eq_u64(callers_get(&c, 1, 0x401008), 0);
	/* The latest caller wins. */
	callers_note(&c, 1, 0x401000, 0x404000);
	check_eq_u64(callers_get(&c, 1, 0x401000), 0x404000);
	/* pid 65537 shares pid 1's key: it takes the entry, and pid 1 then
	 * has no caller rather than 65537's. */
	callers_note(&c, 65537, 0x401000, 0x405000);
	check_eq_u64(callers_get(&c, 65537, 0x401000), 0x405000);
	check_eq_u64(callers_get(&c, 1, 0x401000), 0);
	/* Looked for in vain: each look counted, no caller; a caller
	 * noted later stays, and further looks never erase it. */
	check_eq_u64(callers_tries(&c, 4, 0x401000), 0);
	check_eq_u64(callers_none(&c, 4, 0x401000), 1);
	check_eq_u64(callers_none(&c, 4, 0x401000), 2);
	check_eq_u64(callers_tries(&c, 4, 0x401000), 2);
	check_eq_u64(callers_get(&c, 4, 0x401000), 0);
	callers_note(&c, 4, 0x401000, 0x406000);
	check_eq_u64(callers_tries(&c, 4, 0x401000), UINT32_MAX);
	callers_none(&c, 4, 0x401000);
	check_eq_u64(callers_get(&c, 4, 0x401000), 0x406000);
	/* A look for the site sharing a key takes the entry over. */
	check_eq_u64(callers_none(&c, 65540, 0x401000), 1);
	check_eq_u64(callers_tries(&c, 4, 0x401000), 0);
	check_eq_u64(callers_get(&c, 4, 0x401000), 0);
	check(callers_room(&c));
	/* Bounded. */
	for (uint64_t i = 0; i < 2 * CALLERS_MAX; i++)
		callers_note(&c, 3, 0x10000000 + 8 * i, 0x20000000);
	check_eq_u64(callers_get(&c, 3, 0x10000000), 0x20000000);
	check_eq_u64(callers_get(&c, 3, 0x10000000 + 8 * (2 * CALLERS_MAX - 1)),
		     0);
	check(u64map_count(&c.map) <= CALLERS_MAX);
	/* Full: no room, and a look at a new site is not noted. */
	check(!callers_room(&c));
	check_eq_u64(callers_none(&c, 5, 0x401000), 0);
	check_eq_u64(callers_tries(&c, 5, 0x401000), 0);
	callers_clear(&c);
	check_eq_u64(callers_get(&c, 2, 0x401000), 0);
	callers_clear(&c);
	return test_result();
}
