#include "config.h"

/*
 * Reader side of one perf mmap ring.  Collector thread only.
 *
 * Layout of a mapping of (1 + 2^n) pages:
 *
 *   base                  base + data_offset        + data_size
 *   | perf_event_mmap_page | data area, 2^n pages ... |
 *
 * The kernel writes records at free-running u64 positions and publishes
 * data_head after them; this side reads [data_tail, data_head) and hands
 * the area back by storing data_tail.  Offsets into the data area are
 * pos & (data_size - 1), so a record may start near the end and continue
 * at offset 0; such a record is reassembled in scratch.  Every other
 * record is handed out as a pointer into the ring, with no copy.
 *
 * Nothing in the ring is trusted: a header.size that cannot belong to a
 * kernel record makes the rest of the batch unparseable (there is no sync
 * marker to find the next record), so it is counted and skipped whole.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

/*
 * header.size is a u16, so no record exceeds this; scratch never needs to
 * be larger even when the data area is megabytes.
 */
#define RING_RECORD_MAX	65536u

static bool
ring_is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

int
ring_init(struct ring *r, void *base, size_t mmap_len, size_t page_size)
{
	struct perf_event_mmap_page *meta = base;
	uint64_t data_offset, data_size, scratch_len;
	int err;

	memset(r, 0, sizeof(*r));
	if (base == NULL || !ring_is_pow2(page_size) ||
	    page_size < sizeof(*meta) || mmap_len % page_size != 0 ||
	    mmap_len < 2 * page_size ||
	    !ring_is_pow2(mmap_len / page_size - 1)) {
		err = -EINVAL;
		goto out_err;
	}

	/*
	 * data_offset/data_size appeared in Linux 4.1; before that the meta
	 * page is exactly one page and the data area is everything after it.
	 */
	data_offset = meta->data_offset;
	data_size = meta->data_size;
	if (data_size == 0) {
		data_offset = page_size;
		data_size = mmap_len - page_size;
	}
	if (!ring_is_pow2(data_size) || data_offset < sizeof(*meta) ||
	    data_offset > mmap_len || data_size > mmap_len - data_offset) {
		err = -EINVAL;
		goto out_err;
	}

	scratch_len = data_size < RING_RECORD_MAX ? data_size : RING_RECORD_MAX;
	r->scratch = malloc(scratch_len);
	if (r->scratch == NULL) {
		err = -ENOMEM;
		goto out_err;
	}
	r->base = base;
	r->mmap_len = mmap_len;
	r->meta = meta;
	r->data = (unsigned char *)base + data_offset;
	r->data_size = data_size;
	return 0;

out_err:
	memset(r, 0, sizeof(*r));
	return err;
}

void
ring_fini(struct ring *r)
{
	if (r == NULL)
		return;
	free(r->scratch);
	r->scratch = NULL;
	r->meta = NULL;
	r->data = NULL;
	r->data_size = 0;
}

uint64_t
ring_pending(const struct ring *r)
{
	uint64_t head, tail;

	if (r == NULL || r->meta == NULL)
		return 0;
	head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	/* Only this reader stores data_tail. */
	tail = __atomic_load_n(&r->meta->data_tail, __ATOMIC_RELAXED);
	return head - tail;
}

/*
 * Copies len bytes starting at ring offset off, continuing at offset 0
 * past the end.  len <= data_size.
 */
static void
ring_copy_out(const struct ring *r, uint64_t off, void *dst, size_t len)
{
	uint64_t first = r->data_size - off;

	if (first >= len) {
		memcpy(dst, r->data + off, len);
		return;
	}
	memcpy(dst, r->data + off, first);
	memcpy((unsigned char *)dst + first, r->data, len - first);
}

void
ring_begin(struct ring *r, struct ring_pos *pos)
{
	memset(pos, 0, sizeof(*pos));
	if (r == NULL || r->meta == NULL)
		return;
	pos->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	/* Only this reader stores data_tail. */
	pos->tail = __atomic_load_n(&r->meta->data_tail, __ATOMIC_RELAXED);
	pos->start = pos->tail;
}

/*
 * ring_next when the record at tail is not the plain case: it wraps
 * past the end of the data area or sits misaligned (served from scratch),
 * or its header.size cannot be a kernel record's (counted, and the rest
 * up to head skipped: there is no sync marker to find the next record).
 * Unsigned differences keep this right across 2^32 and even across 2^64:
 * only head - tail matters, never the absolute positions.
 */
const struct perf_event_header *
ring_next_slow(struct ring *r, struct ring_pos *pos)
{
	struct perf_event_header hdr;
	uint64_t avail = pos->head - pos->tail;
	uint64_t off = pos->tail & (r->data_size - 1);

	if (avail == 0)
		return NULL;
	if (avail < sizeof(hdr)) {
		hdr.size = 0;
	} else if (off + sizeof(hdr) <= r->data_size) {
		memcpy(&hdr, r->data + off, sizeof(hdr));
	} else {
		/* Only possible with a misaligned tail. */
		ring_copy_out(r, off, &hdr, sizeof(hdr));
	}

	if (hdr.size < sizeof(hdr) || hdr.size % 8 != 0 ||
	    hdr.size > r->data_size || hdr.size > avail) {
		pos->bad_size++;
		pos->skipped += avail;
		pos->tail = pos->head;
		return NULL;
	}
	pos->tail += hdr.size;
	pos->n++;
	/*
	 * Kernel positions are 8-aligned; a tail that is not (only a
	 * corrupt head can cause one) is served from scratch so the caller
	 * never sees a misaligned header.
	 */
	if (off % 8 == 0 && off + hdr.size <= r->data_size)
		return (const void *)(r->data + off);
	ring_copy_out(r, off, r->scratch, hdr.size);
	return (const void *)r->scratch;
}

void
ring_end(struct ring *r, struct ring_pos *pos, struct ring_stats *stats)
{
	if (r == NULL || r->meta == NULL)
		return;
	/*
	 * Release orders every read of the records above before the kernel
	 * may see the space as free and overwrite it.
	 */
	__atomic_store_n(&r->meta->data_tail, pos->tail, __ATOMIC_RELEASE);

	/* bytes + skipped is exactly how far tail moved. */
	if (stats != NULL) {
		stats->records += pos->n;
		stats->bytes += pos->tail - pos->start - pos->skipped;
		stats->bad_size += pos->bad_size;
		stats->skipped_bytes += pos->skipped;
	}
}

size_t
ring_drain(struct ring *r, ring_record_fn fn, void *ctx,
	   struct ring_stats *stats)
{
	const struct perf_event_header *rec;
	struct ring_pos pos;

	if (r == NULL || r->meta == NULL)
		return 0;
	ring_begin(r, &pos);
	while ((rec = ring_next(r, &pos)) != NULL)
		if (fn != NULL && fn(rec, ctx) != 0)
			break;
	ring_end(r, &pos, stats);
	return pos.n;
}
