/*
 * Nothing unnamed silently (issue 12): the two naming counts that were
 * only in the log reach the JSON frame, each forced to a known number.
 * maps_skipped: pids above 2^22 (no such process: every /proc/PID/maps
 * open fails) are read once, pushed out of the name cache by
 * NAMES_MAX_PROCS others, and asked for again inside the 10 s a failure
 * is remembered: each such ask is one skipped read.  unwind_fallbacks:
 * the allocation table's unwind helper is stopped (a hang), so a request
 * of two pcs is named without it after the timeout: two fallback frames.
 * The oracle is the test's own count of what it forced.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggr.h"
#include "allocs.h"
#include "frame.h"
#include "framebuild.h"
#include "names.h"
#include "report.h"
#include "sides.h"
#include "testlib.h"
#include "topo.h"
#include "unwind.h"

#define NTEST_PID0	0x400010	/* above pid_max's ceiling, 2^22 */
#define NTEST_SKIPS	3		/* pids asked for again */
/* The fillers start past the asked ones; none of these pids shares a
 * slot of the failure memory (src/names/names.c, names_failed_of). */
#define NTEST_FILL0	(NTEST_PID0 + 100)

__attribute__((noinline, used)) static int
ntest_marker(int x)
{
	return x * 5 + 2;
}

/* The frame's JSON in a heap string (NULL and a failure if none). */
static char *
ntest_json(const struct frame *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!check(out != NULL))
		return NULL;
	check_eq_i64(report_json_write(out, f), 0);
	fclose(out);
	return buf;
}

/* names.KEY in the JSON text s equals want. */
static void
ntest_field(const char *s, const char *key, uint64_t want)
{
	char needle[64];
	const char *names = s ? strstr(s, "\"names\":{") : NULL;
	const char *at;

	snprintf(needle, sizeof(needle), "\"%s\":", key);
	at = names ? strstr(names, needle) : NULL;
	if (!check(at != NULL))
		return;
	check_eq_u64(strtoull(at + strlen(needle), NULL, 10), want);
}

/* Forces NTEST_SKIPS skipped reads; returns how many it forced. */
static uint64_t
ntest_force_skips(struct names *n)
{
	struct names_stats st0, st1;

	for (int i = 0; i < NTEST_SKIPS; i++)
		names_prepare(n, NTEST_PID0 + i);
	for (int i = 0; i < NAMES_MAX_PROCS; i++)
		names_prepare(n, NTEST_FILL0 + i);
	names_stats(n, &st0);
	check_eq_u64(st0.maps_skipped, 0);
	check_eq_u64(st0.maps_failures, NTEST_SKIPS + NAMES_MAX_PROCS);
	for (int i = 0; i < NTEST_SKIPS; i++)
		names_prepare(n, NTEST_PID0 + i);
	names_stats(n, &st1);
	check_eq_u64(st1.maps_failures, st0.maps_failures);
	return NTEST_SKIPS;
}

/* Stops the helper and names two pcs: returns the fallbacks forced (0
 * under valgrind, whose helper restarts are too slow to time). */
static uint64_t
ntest_force_fallbacks(struct allocs *al)
{
	uint64_t pcs[2] = { (uint64_t)(uintptr_t)&ntest_marker + 4,
			    (uint64_t)(uintptr_t)&getpid };
	struct unwind_frame out[2];
	struct unwind_stats st;

	if (getenv("MEMTOP_WRAPPER")) {
		printf("# SKIP unwind fallbacks: under valgrind\n");
		return 0;
	}
	unwinder_stats(al->unw, &st);
	if (!check(st.pid > 0))
		return 0;
	unwinder_timeout(al->unw, 300);
	kill(st.pid, SIGSTOP);
	check_eq_i64(unwind_names(al->unw, (int)getpid(), pcs, 2, out), 2);
	check(strncmp(out[0].name, "[test-names-counts]+0x", 22) == 0);
	unwinder_stats(al->unw, &st);
	check_eq_u64(st.failures, 1);
	return 2;
}

int
main(void)
{
	static const int cpu_node[2] = { 0, 0 };
	static const char *const events[] = { "mem-loads" };
	struct frame_meta m = {
		.seq = 1, .time = 1.0, .interval = 1.0, .source = "pebs",
		.events = events, .n_events = 1, .period = 1,
		.sort = SORT_SAMPLES, .top_k = 10, .exit_status = -1,
	};
	struct topo *topo = topo_new_fake(2, cpu_node);
	uint64_t skips, fallbacks;
	struct allocs al;
	struct frame *f;
	struct aggr a;
	char *s;

	if (!check(topo != NULL))
		return test_result();
	if (!check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0) ||
	    !check_eq_i64(allocs_init(&al, 1024), 0))
		return test_result();
	skips = ntest_force_skips(sides_names(a.sides));
	fallbacks = ntest_force_fallbacks(&al);
	f = frame_build(&a, &m);
	if (check(f != NULL)) {
		allocs_frame(&al, f);
		s = ntest_json(f);
		ntest_field(s, "maps_skipped", skips);
		ntest_field(s, "unwind_fallbacks", fallbacks);
		ntest_field(s, "maps_failed", NTEST_SKIPS + NAMES_MAX_PROCS);
		free(s);
		frame_free(f);
	}
	allocs_fini(&al);
	aggr_fini(&a);
	topo_free(topo);
	return test_result();
}
