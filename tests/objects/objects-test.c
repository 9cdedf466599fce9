/*
 * The objects test program (e2e-objects.sh): memory with known allocation
 * sites.  make_table() mallocs a 4 MiB table (glibc serves it with mmap),
 * make_grid() mmaps a 2 MiB grid, make_array() callocs a 256 KiB array;
 * after --phase-ms the table is freed and remake_table() mallocs one of
 * the same size, which mmap usually puts at the same address.  Every page
 * is refaulted (MADV_DONTNEED, then a write) until --run-ms.  Prints each
 * object as "object FUNCTION 0xBASE SIZE" (the oracle), flushed at once.
 * With --touch-thread 1 a second thread writes every page of the grid
 * first, prints "toucher TID" and ends; the main thread waits 400 ms (a
 * frame of e2e-objects-replay.sh drains the toucher's samples) before
 * its refaults: the grid's first toucher is that thread, the others'
 * the main thread.
 * Built without sanitizers and with -O2, without frame pointers, like
 * most programs memtop watches.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define TABLE (4u << 20)
#define GRID (2u << 20)
#define ARRAY (256u << 10)

/* Global, so their symbols are in .symtab under these names. */
char *make_table(void);
char *make_grid(void);
char *make_array(void);
char *remake_table(void);

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
report(const char *fn, void *p, size_t size)
{
	printf("object %s %p %zu\n", fn, p, size);
	fflush(stdout);
}

__attribute__((noinline)) char *
make_table(void)
{
	char *p = malloc(TABLE);

	report("make_table", p, TABLE);
	return p;
}

__attribute__((noinline)) char *
make_grid(void)
{
	char *p = mmap(NULL, GRID, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	report("make_grid", p, GRID);
	return p;
}

__attribute__((noinline)) char *
make_array(void)
{
	char *p = calloc(ARRAY, 1);

	report("make_array", p, ARRAY);
	return p;
}

__attribute__((noinline)) char *
remake_table(void)
{
	char *p = malloc(TABLE);

	report("remake_table", p, TABLE);
	return p;
}

/* Drops the pages of [p, p + n) that lie whole inside it, then writes
 * one byte per page: a fault each. */
static void
refault(char *p, size_t n)
{
	unsigned long a = ((unsigned long)p + 4095) & ~4095ul;
	unsigned long e = ((unsigned long)p + n) & ~4095ul;

	if (e > a)
		madvise((void *)a, e - a, MADV_DONTNEED);
	for (size_t i = 0; i < n; i += 4096)
		((volatile char *)p)[i] = (char)i;
}

/* The grid's first toucher: a write per page. */
static void *
toucher(void *arg)
{
	char *grid = arg;

	printf("toucher %d\n", (int)gettid());
	fflush(stdout);
	for (size_t i = 0; i < GRID; i += 4096)
		((volatile char *)grid)[i] = 1;
	return NULL;
}

int
main(int argc, char **argv)
{
	double run = 2000, phase = 1000, t0;
	char *table, *grid, *array;
	int touch = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--run-ms") == 0)
			run = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--phase-ms") == 0)
			phase = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--touch-thread") == 0)
			touch = atoi(argv[i + 1]);
	}
	/* A fixed threshold: glibc would otherwise raise it to the size of
	 * the first mmapped chunk freed, and serve remake_table from the
	 * heap. */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
	table = make_table();
	grid = make_grid();
	array = make_array();
	if (!table || !grid || !array)
		return 1;
	if (touch) {
		pthread_t th;
		struct timespec wait = { 0, 400 * 1000 * 1000 };

		if (pthread_create(&th, NULL, toucher, grid) != 0 ||
		    pthread_join(th, NULL) != 0)
			return 1;
		nanosleep(&wait, NULL);
	}
	t0 = now_ms();
	while (now_ms() - t0 < phase) {
		refault(table, TABLE);
		refault(grid, GRID);
		refault(array, ARRAY);
	}
	free(table);
	table = remake_table();
	if (!table)
		return 1;
	while (now_ms() - t0 < run) {
		refault(table, TABLE);
		refault(grid, GRID);
		refault(array, ARRAY);
	}
	return 0;
}
