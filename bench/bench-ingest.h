/*
 * Shared by the two halves of the ingest benchmark: bench-ingest.c
 * (decode + aggregate, the command line) and bench-ingest-pages.c (the
 * pages: their keys, the Zipf stream over them, and inserting each once
 * for memory per page and growth stalls).  See bench-ingest.c's top
 * comment for what is measured.
 */
#ifndef MEMTOP_BENCH_INGEST_H
#define MEMTOP_BENCH_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "benchlib.h"
#include "channel.h"
#include "source.h"
#include "topo.h"

#define BENCH_PIDS		4
#define BENCH_CPUS		8
/* Above any pid_max (at most 2^22): no process has them, so the naming
 * side table gives up on them at once instead of reading /proc. */
#define BENCH_PID0		4000000
#define BENCH_PAGE0		0x7f0000000ull
#define BENCH_SEED		0x6d656d746f70ull


#define BENCH_RING_PAGES	64	/* main.c's default ring */
#define BENCH_THREADS		4	/* per pid */
#define BENCH_IPS		512	/* code pool per process */
#define BENCH_PAGE_SITES	6	/* most code sites of one page */
#define BENCH_TIME0		1000000000000ull

enum bench_layout {
	BENCH_FAULTS_TP,
	BENCH_FAULTS_SW,
	BENCH_PEBS,
	BENCH_N_LAYOUTS,
};

/* Record sizes: header + body, as the kernel writes them. */
#define BENCH_TP_SIZE	88	/* id ip pid/tid time cpu/res raw(4+36) */
#define BENCH_SW_SIZE	56	/* id ip pid/tid time addr cpu/res */
#define BENCH_PEBS_SIZE	72	/* id ip pid/tid addr cpu/res period
				 * weight data_src */
#define BENCH_ID_LOADS	101
#define BENCH_ID_STORES	102
/* exceptions:page_fault_user RAW: common header (8), address, ip,
 * error_code, as in its tracefs format file. */
#define BENCH_TP_ADDR	8
#define BENCH_TP_IP	16
#define BENCH_TP_ERROR	24

enum bench_ips {
	BENCH_IPS_SITES,		/* a few per page (default) */
	BENCH_IPS_UNIFORM,		/* any of the pool, any page */
	BENCH_N_IPS,
};

struct bench_stream {
	uint32_t *page;			/* page index per sample */
	size_t len;
	uint32_t *perm;			/* rank -> page index */
	size_t pages;
};

extern const char *const bench_layout_names[BENCH_N_LAYOUTS];
extern const char *const bench_ips_names[BENCH_N_IPS];

/* One layout's records and the ring they go through (bench-ingest.c;
 * bench-drain.c has one a CPU). */
struct bench_case {
	enum bench_layout layout;
	enum bench_ips ips;		/* --ips */
	bool no_sides;			/* --no-sides */
	struct source src;
	struct channel_events ch;	/* the events the records name */
	struct benchlib_ring br;
	const struct topo *topo;
	uint64_t ring_bytes;		/* records written, all passes */
	int fixed_cpu;			/* >= 0: every record's CPU (bench-drain) */
};

/* Once, before bench_record: the sites' weights. */
void bench_sites_init(void);
/* The source and channel events of bc's layout. */
void bench_source(struct bench_case *bc);
/* Record i of the stream into rec (256 bytes); returns its size. */
size_t bench_record(const struct bench_case *bc,
		    const struct bench_stream *st, size_t i,
		    unsigned char *rec);

/* The pid and page number of page index p. */
void bench_page_key(size_t p, int32_t *pid, uint64_t *page);
/* len samples, Zipf(0.99) over pages pages in a random order; uniform:
 * every page once a round, the rounds in one random order (a refault). */
int bench_stream_make(struct bench_stream *st, size_t pages, size_t len,
		      bool uniform);
void bench_stream_free(struct bench_stream *st);
/* Inserts every page of st once, twice over; prints the page table's
 * bytes per page and the slowest batch.  label names the topology;
 * levels: each sample carries a PEBS data_src (the level table too). */
int bench_memory(const struct topo *topo, const struct bench_stream *st,
		 const char *label, bool levels);

#endif
