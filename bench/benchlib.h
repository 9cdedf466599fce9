/*
 * What memtop's ingest and frame benchmarks share: a seeded generator, a
 * Zipf sampler, wall-clock and thread CPU clocks, the machine line every
 * full run prints, and a fake perf ring that a benchmark fills with
 * kernel-format records and drains through collector/channels/ring.c.
 */
#ifndef MEMTOP_BENCHLIB_H
#define MEMTOP_BENCHLIB_H

#include <stddef.h>
#include <stdint.h>

#include "ring.h"

struct benchlib_rng {
	uint64_t state;
};

/* splitmix64: every seed gives a full-period stream. */
uint64_t benchlib_rand(struct benchlib_rng *r);
/* Uniform in (0, 1]. */
double benchlib_uniform(struct benchlib_rng *r);

/*
 * Zipf(s) over ranks 0 .. n-1 (0 the most frequent) by rejection-
 * inversion: O(1) a draw, no table over n, so 10 M ranks cost nothing
 * to set up.
 */
struct benchlib_zipf {
	double s;
	double n;
	double lo;	/* H(1.5) - 1 */
	double hi;	/* H(n + 0.5) */
	double sure;	/* a draw this close to its rank is always taken */
};

void benchlib_zipf_init(struct benchlib_zipf *z, double s, size_t n);
size_t benchlib_zipf_draw(const struct benchlib_zipf *z,
			  struct benchlib_rng *r);

/* A random permutation of 0 .. n-1 (which page each rank lands on);
 * NULL on ENOMEM. */
uint32_t *benchlib_permutation(size_t n, struct benchlib_rng *r);

double benchlib_now(void);		/* CLOCK_MONOTONIC, seconds */
uint64_t benchlib_thread_cpu_ns(void);	/* CLOCK_THREAD_CPUTIME_ID */
/* Resident set of this process, bytes (from /proc/self/statm). */
uint64_t benchlib_rss_bytes(void);

/* "machine: x86_64, <CPU model>, N CPUs online, kernel <release>" */
void benchlib_print_machine(void);

/*
 * The command line of a benchmark whose only option is --quick (what
 * `meson test --benchmark` runs): 100 with --quick, 1 without, 0 after a
 * usage line on stderr for anything else.
 */
size_t benchlib_quick_divisor(int argc, char **argv);

/*
 * A perf mmap ring in ordinary memory: a meta page and 2^k data pages,
 * set up so that ring_init() and ring_drain() treat it exactly like a
 * kernel ring.  The benchmark plays the kernel: it appends records at
 * data_head (wrapping at the end of the data area) and publishes head.
 */
struct benchlib_ring {
	struct ring ring;
	void *map;
	size_t map_len;
	uint64_t head;		/* written, not yet published */
};

/* data_pages: a power of two.  0 or -errno. */
int benchlib_ring_init(struct benchlib_ring *br, unsigned data_pages);
void benchlib_ring_fini(struct benchlib_ring *br);	/* idempotent */
/* Bytes the writer may append now. */
uint64_t benchlib_ring_room(const struct benchlib_ring *br);
/* Appends one record (size bytes, a multiple of 8, <= room) unpublished. */
void benchlib_ring_put(struct benchlib_ring *br, const void *rec,
		       size_t size);
/* Makes the records put so far visible to ring_drain(). */
void benchlib_ring_publish(struct benchlib_ring *br);

#endif
