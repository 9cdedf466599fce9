/*
 * Synthetic perf rings for the ring_drain() tests (test-ring,
 * test-ring-wrap) and ingest_drain()'s (test-ingest-drain), laid out byte
 * for byte as the kernel writes them: a perf_event_mmap_page, then 2^n
 * data pages holding records at free-running u64 positions, published
 * through data_head.
 *
 * Every record tring_write() writes carries its sequence number in the
 * first four body bytes and a pattern derived from it in the rest, so the
 * callback can tell a record delivered whole and in order from a torn or
 * stale one.
 */
#ifndef MEMTOP_RING_BUILD_H
#define MEMTOP_RING_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ring.h"

#define SEEN_MAX	64

struct tring {
	void *base;
	size_t mmap_len;
	size_t page;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t data_size;
	uint64_t head;		/* producer position, not yet published */
};

/* Body byte i of the record with sequence number seq. */
uint8_t tring_pattern(uint32_t seq, size_t i);
/*
 * Maps 1 + data_pages pages.  With kernel_41, the meta page announces the
 * data area as Linux >= 4.1 does; otherwise both fields stay 0.
 */
int tring_new(struct tring *t, size_t data_pages, bool kernel_41);
void tring_free(struct tring *t);
/* Both positions at pos: an empty ring whose reader has reached pos. */
void tring_start(struct tring *t, uint64_t pos);
/* Writes one record at the producer position; returns its position. */
uint64_t tring_write(struct tring *t, uint32_t type, uint16_t size,
		     uint32_t seq);
/* A raw header with any size, for the corruption cases. */
uint64_t tring_write_header(struct tring *t, uint32_t type, uint16_t size,
			    uint64_t advance);
void tring_publish(struct tring *t);
/* Whether n more bytes fit beside what the reader has not consumed. */
bool tring_room(const struct tring *t, size_t n);
/* Copies the n bytes of rec to the producer position and publishes. */
void tring_append(struct tring *t, const void *rec, size_t n);

/* What a ring_drain() callback saw: seen_record() fills it. */
struct seen {
	size_t n;
	uint32_t seq[SEEN_MAX];
	uint16_t type[SEEN_MAX];
	uint16_t size[SEEN_MAX];
	const void *ptr[SEEN_MAX];
	size_t torn;		/* records whose bytes did not match */
	size_t stop_at;		/* stop on this call, 1-based; 0 never */
	const struct ring *r;
	size_t copied;		/* records handed out from scratch */
};

int seen_record(const struct perf_event_header *hdr, void *ctx);
/* Whether p points into r's data area (not its scratch copy). */
bool in_ring(const struct ring *r, const void *p);

#endif
