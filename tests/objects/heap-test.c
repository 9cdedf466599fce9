/*
 * The heap objects test program (e2e-heap-objects.sh, issue 18): small
 * malloc'd objects with known sites.  node_a() and node_b() malloc
 * --nodes 64-byte nodes between them, interleaved in runs of --run
 * (a run of node_a's, then one of node_b's); after --phase-ms every 4th
 * of node_a's nodes is freed, node_c() mallocs 250 fewer again, which
 * glibc's bins hand back at the freed addresses, and node_d() reallocs
 * every 10th of node_b's nodes to 256 bytes (moving them).  Until
 * --run-ms every node is written over and over, each round with a
 * forked child sharing the pages, so each page's first write is a
 * copy-on-write fault (a sample of memtop's faults source).  Prints the
 * oracle: each node as "node FUNCTION 0xADDR SIZE", each free (and
 * realloc's old block) as "free 0xADDR", and "reused N of M" (how many
 * of node_c's addresses were node_a's).
 *
 * --bench N: N malloc(64) + free pairs in a loop, timed; prints
 * "bench PAIRS NS_PER_PAIR" (bench/bench-heap.py).
 *
 * -O2 without frame pointers, like the programs memtop watches.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NODE 64
#define HEAP_SPARE 250	/* freed nodes of node_a not allocated again */

/* Global, so their symbols are in .symtab under these names. */
void *node_a(void);
void *node_b(void);
void *node_c(void);
void *node_d(void *old);

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void *
node_a(void)
{
	void *p = malloc(NODE);

	__asm__ volatile("" : : "r"(p) : "memory");	/* no tail call */
	return p;
}

__attribute__((noinline)) void *
node_b(void)
{
	void *p = malloc(NODE);

	__asm__ volatile("" : : "r"(p) : "memory");	/* no tail call */
	return p;
}

__attribute__((noinline)) void *
node_c(void)
{
	void *p = malloc(NODE);

	__asm__ volatile("" : : "r"(p) : "memory");	/* no tail call */
	return p;
}

/* Moves a node to a block of 256 bytes: a new object of this site. */
__attribute__((noinline)) void *
node_d(void *old)
{
	void *p = realloc(old, 4 * NODE);

	__asm__ volatile("" : : "r"(p) : "memory");	/* no tail call */
	return p;
}

static void *(*volatile bench_malloc)(size_t) = malloc;
static void (*volatile bench_free)(void *) = free;

static int
bench(long n)
{
	double t0 = now_ms(), t;

	for (long i = 0; i < n; i++)
		bench_free(bench_malloc(NODE));
	t = now_ms() - t0;
	printf("bench %ld %.1f\n", n, t * 1e6 / (double)n);
	return 0;
}

/*
 * Writes every node with a child alive that shares the pages: each page's
 * first write is a copy-on-write fault in this process, a sample of
 * memtop's faults source taken after the nodes exist.
 */
static void
touch(char **nodes, long n, int round)
{
	pid_t child = fork();

	if (child == 0) {
		pause();
		_exit(0);
	}
	for (long i = 0; i < n; i++)
		if (nodes[i])
			memset(nodes[i], round, NODE);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
}

static int
cmp_ptr(const void *x, const void *y)
{
	uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Every 4th of node_a's nodes freed; node_c mallocs all but HEAP_SPARE
 * as many again; node_d reallocs every 10th of node_b's nodes to 256
 * bytes (they move).  0, or -1 when an allocation failed.
 */
static int
rework(char **nodes, long n, long runlen)
{
	char **freed = calloc((size_t)n, sizeof(*freed));
	long n_a = 0, n_re, reused = 0;

	if (!freed)
		return -1;
	for (long i = 0; i < n; i++)
		if ((i / runlen) % 2 == 0 && n_a++ % 4 == 0) {
			freed[reused++] = nodes[i];
			printf("free %p\n", (void *)nodes[i]);
			free(nodes[i]);
			nodes[i] = NULL;
		}
	n_re = reused;
	qsort(freed, (size_t)n_re, sizeof(*freed), cmp_ptr);
	reused = 0;
	for (long i = 0, k = 0; i < n && k < n_re - HEAP_SPARE; i++) {
		if (nodes[i])
			continue;
		nodes[i] = node_c();
		if (!nodes[i])
			return -1;
		if (++k % 50 == 0)
			usleep(2000);	/* as in main */
		reused += bsearch(&nodes[i], freed, (size_t)n_re,
				  sizeof(*freed), cmp_ptr) != NULL;
		printf("node node_c %p %d\n", (void *)nodes[i], NODE);
	}
	for (long i = 0, n_b = 0; i < n; i++)
		if ((i / runlen) % 2 == 1 && nodes[i] && n_b++ % 10 == 0) {
			printf("free %p\n", (void *)nodes[i]);
			if (n_b % 50 == 0)
				usleep(2000);
			nodes[i] = node_d(nodes[i]);
			if (!nodes[i])
				return -1;
			printf("node node_d %p %d\n", (void *)nodes[i],
			       4 * NODE);
		}
	printf("reused %ld of %ld\n", reused, n_re - HEAP_SPARE);
	free(freed);
	return 0;
}

int
main(int argc, char **argv)
{
	double run_ms = 2000, phase = 1000, t0;
	long n = 10000, runlen = 50;
	char **nodes;
	int round = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--run-ms") == 0)
			run_ms = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--phase-ms") == 0)
			phase = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--nodes") == 0)
			n = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--run") == 0)
			runlen = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--bench") == 0)
			return bench(atol(argv[i + 1]));
	}
	if (n < 2 || runlen < 1)
		return 2;
	nodes = calloc((size_t)n, sizeof(*nodes));
	if (!nodes)
		return 1;
	for (long i = 0; i < n; i++) {
		bool a = (i / runlen) % 2 == 0;

		nodes[i] = a ? node_a() : node_b();
		if (!nodes[i])
			return 1;
		/* A pause per run: memtop's collector drains its ring even
		 * on a busy machine. */
		if (i % runlen == runlen - 1)
			usleep(2000);
	}
	for (long i = 0; i < n; i++)
		printf("node %s %p %d\n", (i / runlen) % 2 == 0 ? "node_a" :
		       "node_b", (void *)nodes[i], NODE);
	fflush(stdout);
	t0 = now_ms();
	while (now_ms() - t0 < phase)
		touch(nodes, n, ++round);
	if (rework(nodes, n, runlen) < 0)
		return 1;
	fflush(stdout);
	while (now_ms() - t0 < run_ms)
		touch(nodes, n, ++round);
	for (long i = 0; i < n; i++)	/* nodes[] holds NULLs too */
		if (nodes[i] && ((char *)nodes[i])[0] != (char)round)
			return 1;
	return 0;
}
