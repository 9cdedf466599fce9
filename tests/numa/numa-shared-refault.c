#include "config.h"

/*
 * numa-shared-refault: refaults shared memory, for the migration test of
 * the two-node guest (tests/numa/scenarios.sh).
 *
 * The hot pages are MAP_SHARED | MAP_ANONYMOUS (shmem), bound to --node
 * with mbind(MPOL_BIND) before their first touch, and touched from the
 * one CPU --cpu.  Each round drops every hot page's mapping with
 * MADV_DONTNEED and writes it again: one page fault a page a round, as
 * memtop-workload's refault mode.  Unlike private memory, a shared page
 * outlives MADV_DONTNEED in the page cache, so the refault maps the same
 * page again: once memtop has moved it to another node, the later faults
 * land there.  (memtop-workload's private pages are freed by the drop and
 * reallocated on the bound node at every round.)
 *
 * Exits 0 after --rounds rounds; 2 on bad usage; 1 when a system call
 * fails, with one line on stderr.
 */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <numaif.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct shared_refault_opts {
	long node;
	long cpu;
	long hot;
	long rounds;
	long interval_ms;
	const char *print_hot;	/* file for the page addresses, or NULL */
};

static int
shared_refault_usage(FILE *out, int status)
{
	fputs("Usage: numa-shared-refault --node N --cpu C [--hot PAGES] "
	      "[--rounds R] [--interval-ms MS] [--print-hot FILE]\n"
	      "Refaults PAGES shared pages bound to node N from CPU C, R "
	      "rounds (defaults 32, 40, 20);\n"
	      "--print-hot writes their addresses (0x%lx, one a line) to "
	      "FILE first.\n", out);
	return status;
}

static int
shared_refault_long(const char *name, const char *arg, long lo, long hi,
		    long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (arg[0] == '\0' || *end != '\0' || errno || v < lo || v > hi) {
		fprintf(stderr, "numa-shared-refault: --%s '%s': want %ld..%ld\n",
			name, arg, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

static int
shared_refault_parse(int argc, char **argv, struct shared_refault_opts *o)
{
	static const struct option longs[] = {
		{ "node", required_argument, NULL, 'n' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "hot", required_argument, NULL, 'H' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "print-hot", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	*o = (struct shared_refault_opts){ .node = -1, .cpu = -1, .hot = 32,
					   .rounds = 40, .interval_ms = 20 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'n':
			ret = shared_refault_long("node", optarg, 0, 1023,
						  &o->node);
			break;
		case 'c':
			ret = shared_refault_long("cpu", optarg, 0, CPU_SETSIZE - 1,
						  &o->cpu);
			break;
		case 'H':
			ret = shared_refault_long("hot", optarg, 1, 65536,
						  &o->hot);
			break;
		case 'r':
			ret = shared_refault_long("rounds", optarg, 1, 1000000,
						  &o->rounds);
			break;
		case 'i':
			ret = shared_refault_long("interval-ms", optarg, 0,
						  60000, &o->interval_ms);
			break;
		case 'p':
			o->print_hot = optarg;
			break;
		case 'h':
			exit(shared_refault_usage(stdout, 0));
		default:
			fprintf(stderr, "numa-shared-refault: bad option '%s'\n",
				argv[optind - 1]);
			return -1;
		}
		if (ret < 0)
			return -1;
	}
	if (optind < argc || o->node < 0 || o->cpu < 0) {
		fputs("numa-shared-refault: --node and --cpu are required\n",
		      stderr);
		return -1;
	}
	return 0;
}

static int
shared_refault_fail(const char *what)
{
	fprintf(stderr, "numa-shared-refault: %s: %s\n", what, strerror(errno));
	return 1;
}

int
main(int argc, char **argv)
{
	struct shared_refault_opts o;
	unsigned long mask[1024 / (8 * sizeof(long))] = { 0 };
	long page_size = sysconf(_SC_PAGESIZE);
	struct timespec pause;
	cpu_set_t cpus;
	size_t len;
	char *region;

	if (shared_refault_parse(argc, argv, &o) < 0)
		return shared_refault_usage(stderr, 2);
	len = (size_t)o.hot * (size_t)page_size;
	CPU_ZERO(&cpus);
	CPU_SET((int)o.cpu, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus) < 0)
		return shared_refault_fail("sched_setaffinity");
	region = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		return shared_refault_fail("mmap");
	mask[o.node / (8 * (long)sizeof(long))] |=
		1ul << (o.node % (8 * (long)sizeof(long)));
	if (mbind(region, len, MPOL_BIND, mask, 1024, 0) < 0)
		return shared_refault_fail("mbind");
	if (o.print_hot) {
		FILE *f = fopen(o.print_hot, "w");

		if (!f)
			return shared_refault_fail(o.print_hot);
		for (long p = 0; p < o.hot; p++)
			fprintf(f, "%p\n", (void *)(region + p * page_size));
		if (fclose(f) != 0)
			return shared_refault_fail(o.print_hot);
	}
	pause.tv_sec = o.interval_ms / 1000;
	pause.tv_nsec = (o.interval_ms % 1000) * 1000000L;
	for (long r = 0; r < o.rounds; r++) {
		for (long p = 0; p < o.hot; p++) {
			char *page = region + p * page_size;

			if (madvise(page, (size_t)page_size, MADV_DONTNEED) < 0)
				return shared_refault_fail("madvise");
			*(volatile char *)page = (char)r;
		}
		if (o.interval_ms)
			nanosleep(&pause, NULL);
	}
	munmap(region, len);
	return 0;
}
