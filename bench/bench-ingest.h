/*
 * Shared by the two halves of the ingest benchmark: bench-ingest.c
 * (decode + aggregate, the command line) and bench-ingest-pages.c (the
 * pages: their keys, the Zipf stream over them, and inserting each once
 * for memory per page and growth stalls).  See bench-ingest.c's top
 * comment for what is measured.
 */
#ifndef MEMTOP_BENCH_INGEST_H
#define MEMTOP_BENCH_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "topo.h"

#define BENCH_PIDS		4
#define BENCH_CPUS		8
/* Above any pid_max (at most 2^22): no process has them, so the naming
 * side table gives up on them at once instead of reading /proc. */
#define BENCH_PID0		4000000
#define BENCH_PAGE0		0x7f0000000ull
#define BENCH_SEED		0x6d656d746f70ull

struct bench_stream {
	uint32_t *page;			/* page index per sample */
	size_t len;
	uint32_t *perm;			/* rank -> page index */
	size_t pages;
};

/* The pid and page number of page index p. */
void bench_page_key(size_t p, int32_t *pid, uint64_t *page);
/* len samples, Zipf(0.99) over pages pages in a random order. */
int bench_stream_make(struct bench_stream *st, size_t pages, size_t len);
void bench_stream_free(struct bench_stream *st);
/* Inserts every page of st once, twice over; prints the page table's
 * bytes per page and the slowest batch.  label names the topology. */
int bench_memory(const struct topo *topo, const struct bench_stream *st,
		 const char *label);

#endif
