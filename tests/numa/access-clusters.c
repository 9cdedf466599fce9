#include "config.h"

/*
 * access-clusters: writes one cluster of pages and reads another, with no
 * fault after their first touch, for the no-PMU access tests (--rearm,
 * -e damon: tests/numa/access-qemu.sh, tests/e2e/e2e-rearm.sh) and the
 * benchmark bench/bench-rearm.py.
 *
 * Two private anonymous mappings of --pages pages each (THP off), bound
 * to --node with mbind(MPOL_BIND) when given, touched once by a write,
 * then, for --secs seconds, rounds of: one byte written in every page of
 * the write cluster, one byte read from every page of the read cluster,
 * --pause-us microseconds of sleep (0: none).  The pages are written or
 * read in place, so after the first touch only a re-armed soft-dirty
 * write protection (or an unrelated reclaim) faults.
 *
 * --report FILE gets the ground truth: "PID N", "WRITE 0x..." and
 * "READ 0x..." for each page, "PAGE 0xVIRT 0xPHYS NODE" for each page of
 * both (the physical address from /proc/self/pagemap, 0 when not root;
 * the node from move_pages, -1 unknown), then for each --interval-ms interval
 * "INTERVAL I T0 T1 ROUNDS WRITTEN" (CLOCK_MONOTONIC seconds; WRITTEN =
 * pages written in it, always every write page: each round writes them
 * all) and "RATE ROUNDS_PER_S" over the whole run, which the benchmark
 * compares with and without --rearm.  Exits 0; 2 on bad usage; 1 when a
 * system call fails, with one line on stderr.
 */

#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define AC_PAGE 4096UL
#define AC_MAX_INTERVALS 100000

struct ac_opts {
	long pages, node, interval_ms, pause_us;
	double secs;
	const char *report;
};

static double
ac_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
ac_long(const char *name, const char *arg, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (arg[0] == '\0' || *end != '\0' || errno || v < lo || v > hi) {
		fprintf(stderr, "access-clusters: --%s '%s': want %ld..%ld\n",
			name, arg, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

static int
ac_parse(int argc, char **argv, struct ac_opts *o)
{
	static const struct option longs[] = {
		{ "pages", required_argument, NULL, 'p' },
		{ "node", required_argument, NULL, 'n' },
		{ "secs", required_argument, NULL, 's' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "pause-us", required_argument, NULL, 'u' },
		{ "report", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	long secs = 5;
	int c, rc = 0;

	*o = (struct ac_opts){ .pages = 16, .node = -1, .interval_ms = 500,
			       .pause_us = 100 };
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'p': rc = ac_long("pages", optarg, 1, 1L << 20, &o->pages); break;
		case 'n': rc = ac_long("node", optarg, 0, 63, &o->node); break;
		case 's': rc = ac_long("secs", optarg, 1, 3600, &secs); break;
		case 'i': rc = ac_long("interval-ms", optarg, 10, 60000, &o->interval_ms); break;
		case 'u': rc = ac_long("pause-us", optarg, 0, 1000000, &o->pause_us); break;
		case 'r': o->report = optarg; break;
		default: rc = -1; break;
		}
		if (rc)
			break;
	}
	o->secs = (double)secs;
	if (rc || optind != argc) {
		fputs("Usage: access-clusters [--pages N] [--node N] [--secs S] "
		      "[--interval-ms MS] [--pause-us US] [--report FILE]\n",
		      stderr);
		return -1;
	}
	return 0;
}

static volatile char *
ac_map(const struct ac_opts *o)
{
	size_t len = (size_t)o->pages * AC_PAGE;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);
	if (o->node >= 0) {
		unsigned long mask = 1UL << o->node;

		if (mbind(p, len, MPOL_BIND, &mask, 64, 0) != 0)
			return NULL;
	}
	for (size_t i = 0; i < len; i += AC_PAGE)
		p[i] = 1;
	return p;
}

/* "PAGE 0xVIRT 0xPHYS NODE" for the page at p. */
static void
ac_page(FILE *out, int pagemap, volatile char *p)
{
	uint64_t entry = 0, phys = 0;
	void *addr = (void *)p;
	int status = -1;

	if (pagemap >= 0 &&
	    pread(pagemap, &entry, sizeof(entry),
		  (off_t)((uintptr_t)p / AC_PAGE * sizeof(entry))) ==
	    sizeof(entry) && (entry >> 63 & 1))
		phys = (entry & ((UINT64_C(1) << 55) - 1)) * AC_PAGE;
	if (move_pages(0, 1, &addr, NULL, &status, 0) != 0)
		status = -1;
	fprintf(out, "PAGE %p 0x%llx %d\n", addr, (unsigned long long)phys,
		status < 0 ? -1 : status);
}

struct ac_interval {
	double t0, t1;
	uint64_t rounds;
};

int
main(int argc, char **argv)
{
	static struct ac_interval iv[AC_MAX_INTERVALS];
	struct ac_opts o;
	volatile char *w, *r;
	double start, end, now;
	uint64_t rounds = 0, sum = 0;
	size_t n = 0;
	int pagemap;
	FILE *out = NULL;

	if (ac_parse(argc, argv, &o) < 0)
		return 2;
	w = ac_map(&o);
	r = w ? ac_map(&o) : NULL;
	if (!r) {
		fprintf(stderr, "access-clusters: mmap/mbind: %s\n",
			strerror(errno));
		return 1;
	}
	start = now = ac_now();
	end = start + o.secs;
	iv[0].t0 = start;
	while (now < end) {
		for (long j = 0; j < o.pages; j++)
			w[(size_t)j * AC_PAGE + 64] = (char)rounds;
		for (long j = 0; j < o.pages; j++)
			sum += (unsigned char)r[(size_t)j * AC_PAGE + 64];
		rounds++;
		iv[n].rounds++;
		if (o.pause_us)
			usleep((useconds_t)o.pause_us);
		now = ac_now();
		if (now - iv[n].t0 >= (double)o.interval_ms / 1e3 &&
		    n + 1 < AC_MAX_INTERVALS) {
			iv[n].t1 = now;
			iv[++n].t0 = now;
		}
	}
	iv[n].t1 = now;
	if (o.report && !(out = fopen(o.report, "w"))) {
		fprintf(stderr, "access-clusters: %s: %s\n", o.report,
			strerror(errno));
		return 1;
	}
	if (!out)
		return sum == (uint64_t)-1;
	fprintf(out, "PID %d\n", (int)getpid());
	for (long j = 0; j < o.pages; j++)
		fprintf(out, "WRITE %p\n", (void *)(w + (size_t)j * AC_PAGE));
	for (long j = 0; j < o.pages; j++)
		fprintf(out, "READ %p\n", (void *)(r + (size_t)j * AC_PAGE));
	for (size_t i = 0; i <= n; i++)
		fprintf(out, "INTERVAL %zu %.6f %.6f %llu %ld\n", i, iv[i].t0,
			iv[i].t1, (unsigned long long)iv[i].rounds,
			iv[i].rounds ? o.pages : 0L);
	pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	for (long j = 0; j < o.pages; j++) {
		ac_page(out, pagemap, w + (size_t)j * AC_PAGE);
		ac_page(out, pagemap, r + (size_t)j * AC_PAGE);
	}
	fprintf(out, "RATE %.1f\n", (double)rounds / (now - start));
	return fclose(out) != 0;
}
