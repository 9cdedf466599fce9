/* Limit hints and ring sizing (src/base/rlimits.c): the EMFILE/ENFILE fix text,
 * no double hint, and ring sizes that fit a locked-memory budget. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "rlimits.h"
#include "testlib.h"

static void
test_hint(void)
{
	struct rlimit rl, old;
	char buf[96];

	/* The soft limit only, so that it can be put back. */
	check(getrlimit(RLIMIT_NOFILE, &old) == 0);
	rl.rlim_cur = 40;
	rl.rlim_max = old.rlim_max;
	check(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	check_eq_str(rlimits_hint(-EMFILE, "epoll: Too many open files", buf,
				  sizeof(buf)),
		     "; raise RLIMIT_NOFILE (ulimit -n, now 40)");
	check_eq_str(rlimits_hint(EMFILE, NULL, buf, sizeof(buf)),
		     "; raise RLIMIT_NOFILE (ulimit -n, now 40)");
	check(setrlimit(RLIMIT_NOFILE, &old) == 0);
	/* The message already says it: no second hint. */
	check_eq_str(rlimits_hint(-EMFILE, "x; raise RLIMIT_NOFILE (ulimit "
				  "-n, now 5)", buf, sizeof(buf)), "");
	check(strstr(rlimits_hint(-ENFILE, "", buf, sizeof(buf)),
		     "fs.file-max") != NULL);
	check_eq_str(rlimits_hint(-ENOMEM, "", buf, sizeof(buf)), "");
	check_eq_str(rlimits_hint(0, NULL, buf, sizeof(buf)), "");
	/* A short buffer truncates, never overflows. */
	check_eq_u64(strlen(rlimits_hint(-EMFILE, NULL, buf, 8)), 7);
	check_eq_str(rlimits_hint(-EMFILE, NULL, NULL, 0), "");
}

static void
test_ring_pages(void)
{
	/* No limit, or nothing to shrink. */
	check_eq_u64(rlimits_ring_pages(64, 1000, 0, 2), 64);
	check_eq_u64(rlimits_ring_pages(2, 1000, 10, 2), 2);
	/* Plenty: full size. */
	check_eq_u64(rlimits_ring_pages(64, 1, 1u << 20, 2), 64);
	/* 2 CPUs x 516 KiB + 64 KiB = 274 pages. */
	check_eq_u64(rlimits_ring_pages(64, 1, 274, 0), 64);
	check_eq_u64(rlimits_ring_pages(64, 2, 274, 0), 64);
	check_eq_u64(rlimits_ring_pages(64, 3, 274, 0), 32);
	check_eq_u64(rlimits_ring_pages(64, 65, 274, 0), 2);
	/* A 2-page task ring per thread leaves less for the sample ring. */
	check_eq_u64(rlimits_ring_pages(64, 2, 274, 2), 64);
	check_eq_u64(rlimits_ring_pages(64, 3, 274, 2), 32);
	check_eq_u64(rlimits_ring_pages(64, 8, 274, 2), 8);
	check_eq_u64(rlimits_ring_pages(64, 9, 274, 2), 8);
	check_eq_u64(rlimits_ring_pages(64, 10, 274, 2), 8);
	check_eq_u64(rlimits_ring_pages(64, 15, 274, 2), 4);
	/* Too many threads: still the minimum; the kernel says EPERM. */
	check_eq_u64(rlimits_ring_pages(64, 300, 274, 2), 2);
	check_eq_u64(rlimits_ring_pages(64, 0, 274, 2), 64);
	/* Every result is a power of two that fits twice per thread. */
	for (unsigned t = 1; t < 200; t++) {
		for (unsigned x = 0; x <= 4; x += 2) {
			unsigned p = rlimits_ring_pages(128, t, 4096, x);

			check((p & (p - 1)) == 0 && p >= 2 && p <= 128);
			check(p == 2 || 2ul * t * (1 + p + x) <= 4096);
			check(p == 128 || 2ul * t * (1 + 2 * p + x) > 4096);
		}
	}
}

int
main(void)
{
	test_hint();
	test_ring_pages();
	return test_result();
}
