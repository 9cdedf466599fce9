/*
 * Code-site table growth and eviction (issue 15): 128 Ki new pages into a
 * table of the capacity memtop gives it (SIDES_SITE_PAGES, 16 Ki
 * pages), one sample each, from 1024 pages up through every doubling,
 * then at capacity, where each new page displaces one; prints the
 * slowest single update (thread CPU time, so time off the CPU on a shared
 * machine does not count), the average, the table's final size and the
 * pages displaced.  Three runs; --quick: 16 Ki pages (the sets fill
 * unevenly, so some are displaced there too).
 */
#include "config.h"

#include <stdio.h>

#include "benchlib.h"
#include "sides.h"
#include "sitetab.h"

int
main(int argc, char **argv)
{
	size_t div = benchlib_quick_divisor(argc, argv);
	size_t n = div > 1 ? (1u << 14) : (1u << 17);

	if (div == 0)
		return 2;
	printf("memtop code-site table growth: %zu new pages, capacity "
	       "%u\n", n, SIDES_SITE_PAGES);
	benchlib_print_machine();
	for (int run = 0; run < 3; run++) {
		struct sitetab *t = sitetab_new(SIDES_SITE_PAGES);
		uint64_t worst = 0, all = 0;
		size_t at = 0;

		if (!t) {
			perror("bench-sitetab");
			return 1;
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t c = benchlib_thread_cpu_ns(), d;

			sitetab_add(t, 4000001, i * 7 + (size_t)run,
				    0x401000);
			d = benchlib_thread_cpu_ns() - c;
			all += d;
			if (d > worst) {
				worst = d;
				at = i;
			}
		}
		printf("  run %d: slowest update %.3f ms (page %zu), average "
		       "%.0f ns, %zu slots, %zu pages, %llu displaced  target: "
		       "no stall > 10 ms\n", run, (double)worst / 1e6, at,
		       (double)all / (double)n, sitetab_slots(t),
		       sitetab_used(t),
		       (unsigned long long)sitetab_evicted(t));
		sitetab_free(t);
	}
	return 0;
}
