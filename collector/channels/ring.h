/*
 * Reader side of one perf mmap ring (perf_event_mmap_page + data area).
 * Collector thread only.
 *
 * Protocol: load data_head with acquire, read [data_tail, data_head),
 * store data_tail with release.  Positions are free-running u64; offset =
 * pos & (data_size - 1).  A record that straddles the end of the data area
 * is copied whole into a scratch buffer before it is handed out.  A
 * header.size that is not a multiple of 8, smaller than the header, larger
 * than data_size or running past head is counted in bad_size and the rest
 * of the ring up to head is skipped (tail = head): it cannot be resynced.
 */
#ifndef MEMTOP_RING_H
#define MEMTOP_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct ring {
	void *base;			/* mmap base (the meta page) */
	size_t mmap_len;		/* (1 + 2^n) pages */
	struct perf_event_mmap_page *meta;
	unsigned char *data;		/* data area */
	uint64_t data_size;		/* power of two */
	unsigned char *scratch;		/* data_size bytes, for wrapped records */
};

struct ring_stats {
	uint64_t records;		/* records handed to the callback */
	uint64_t bytes;			/* bytes consumed */
	uint64_t bad_size;		/* times a bad header.size forced a skip */
	uint64_t skipped_bytes;		/* bytes thrown away by those skips */
};

/*
 * Called once per record; hdr points at a contiguous copy of the whole
 * record (hdr->size bytes), valid only during the call.  Return 0 to go on,
 * non-zero to stop draining after this record (tail still advances past it).
 */
typedef int (*ring_record_fn)(const struct perf_event_header *hdr, void *ctx);

/*
 * Sets r up over an existing mapping of mmap_len bytes at base, reading
 * data_offset/data_size from the meta page (falling back to one page in and
 * mmap_len - page_size when data_size is 0, as before Linux 4.1).
 * 0 or -EINVAL (size not 1 + 2^n pages) / -ENOMEM.
 */
int ring_init(struct ring *r, void *base, size_t mmap_len, size_t page_size);
/* Frees the scratch buffer; does not unmap.  NULL-safe, idempotent. */
void ring_fini(struct ring *r);

/* Bytes available to read now. */
uint64_t ring_pending(const struct ring *r);

/*
 * Hands every complete record in [tail, head) to fn, then publishes the new
 * tail.  Returns the number of records handed out.
 */
size_t ring_drain(struct ring *r, ring_record_fn fn, void *ctx,
		  struct ring_stats *stats);

/*
 * The same walk for a caller that loops itself (the ingest's drain, which
 * serves most records inline instead of through a callback per record):
 *
 *	ring_begin(r, &pos);
 *	while ((hdr = ring_next(r, &pos)) != NULL)
 *		...;
 *	ring_end(r, &pos, stats);
 *
 * ring_next's record is valid until the next ring_next or ring_end;
 * stopping early is fine (tail has advanced past the records handed out).
 * Nothing is published to the kernel before ring_end.
 */
struct ring_pos {
	uint64_t head, tail;
	uint64_t bad_size, skipped;
	size_t n;			/* records handed out */
	uint64_t start;			/* tail at ring_begin */
};

void ring_begin(struct ring *r, struct ring_pos *pos);
void ring_end(struct ring *r, struct ring_pos *pos, struct ring_stats *stats);
/* A wrapped, misaligned or malformed record: ring_next's rare cases. */
const struct perf_event_header *ring_next_slow(struct ring *r,
					       struct ring_pos *pos);

/*
 * Next complete record, or NULL at head.  Inline for the common record:
 * 8-aligned, whole before the end of the data area, with a sane size.
 */
static inline const struct perf_event_header *
ring_next(struct ring *r, struct ring_pos *pos)
{
	uint64_t off = pos->tail & (r->data_size - 1);
	uint64_t avail = pos->head - pos->tail;
	const struct perf_event_header *rec;
	uint64_t size;

	if (avail == 0)
		return NULL;
	rec = (const void *)(r->data + off);
	/* data_size is a multiple of 8, so an 8-aligned header lies whole
	 * in the data area (if avail < 8, its size fails size <= avail). */
	if (__builtin_expect(off % 8 == 0, 1)) {
		size = rec->size;
		if (__builtin_expect(size >= sizeof(*rec) && size % 8 == 0 &&
				     size <= avail &&
				     off + size <= r->data_size, 1)) {
			pos->tail += size;
			pos->n++;
			return rec;
		}
	}
	return ring_next_slow(r, pos);
}

#endif
