#include "config.h"

/*
 * perf.data reader: the data section.  Records are handed out in place
 * when the file is in host order and the record is 8-byte aligned;
 * otherwise they are copied into the reader's scratch and swapped there.
 * perf's own records are applied here (HEADER_ATTR, HEADER_FEATURE,
 * EVENT_UPDATE), skipped with their payload (TRACING_DATA, AUXTRACE) or
 * unpacked (COMPRESSED, COMPRESSED2).
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "perfdata_format.h"
#include "perfdata_reader_int.h"
#include "perfdata_swap.h"

/*
 * The record at pos: header checked against the data section, copied to
 * scratch when it must be swapped or is misaligned.  Advances pos.
 */
static int
perfdata_take_record(struct perfdata_reader *r,
		     struct perf_event_header **out, char *err,
		     size_t errlen)
{
	struct perf_event_header h;
	const unsigned char *p = r->img + r->pos;

	if (r->end - r->pos < sizeof(h))
		return perfdata_fail(err, errlen, -EPROTO,
				     "offset %llu: %llu stray bytes at the "
				     "end of the data (truncated?)",
				     (unsigned long long)r->pos,
				     (unsigned long long)(r->end - r->pos));
	memcpy(&h, p, sizeof(h));
	if (r->swap)
		perfdata_swap_header(&h);
	if (h.size < sizeof(h) || h.size > r->end - r->pos)
		return perfdata_fail(err, errlen, -EPROTO,
				     "offset %llu: record type %u of size %u "
				     "%s", (unsigned long long)r->pos, h.type,
				     h.size, h.size < sizeof(h) ?
				     "is shorter than its header" :
				     "runs past the end of the data "
				     "(truncated?)");
	if (!r->swap && ((uintptr_t)p & 7) == 0) {
		*out = (struct perf_event_header *)(uintptr_t)p;
	} else {
		memcpy(r->scratch, p, h.size);
		*out = (struct perf_event_header *)r->scratch;
		**out = h;
	}
	r->pos += h.size;
	return 0;
}

/* Skips the payload that follows TRACING_DATA and AUXTRACE records. */
static int
perfdata_skip_payload(struct perfdata_reader *r, uint64_t len,
		      uint64_t offset, bool in_zstd, char *err, size_t errlen)
{
	len = (len + 7) & ~UINT64_C(7);
	if (in_zstd || len > r->end - r->pos)
		return perfdata_fail(err, errlen, -EPROTO,
				     "offset %llu: payload of %llu bytes %s",
				     (unsigned long long)offset,
				     (unsigned long long)len, in_zstd ?
				     "inside compressed data" :
				     "runs past the end of the data");
	r->pos += len;
	return 0;
}

static int
perfdata_compressed(struct perfdata_reader *r,
		    const struct perf_event_header *hdr, uint64_t offset,
		    bool in_zstd, char *err, size_t errlen)
{
	uint64_t skip = sizeof(*hdr), len = hdr->size - sizeof(*hdr);
	int ret;

	if (in_zstd)
		return perfdata_fail(err, errlen, -EPROTO,
				     "offset %llu: compressed record inside "
				     "compressed data",
				     (unsigned long long)offset);
	if (hdr->type == PERFDATA_REC_COMPRESSED2) {
		uint64_t data_size;

		if (len < 8)
			return perfdata_fail(err, errlen, -EPROTO,
					     "offset %llu: COMPRESSED2 record "
					     "too short",
					     (unsigned long long)offset);
		data_size = perfdata_u64_at(r, offset + 8);
		if (data_size > len - 8)
			return perfdata_fail(err, errlen, -EPROTO,
					     "offset %llu: COMPRESSED2 data "
					     "size %llu exceeds the record",
					     (unsigned long long)offset,
					     (unsigned long long)data_size);
		skip += 8;
		len = data_size;
	}
	if (!r->zstd) {
		ret = perfdata_zstd_new(&r->zstd, r->info.comp_mmap_len);
		if (ret < 0)
			return ret;
	}
	/* From the image, never from scratch: the output goes there. */
	perfdata_zstd_feed(r->zstd, r->img + offset + skip, (size_t)len);
	r->zstd_offset = offset;
	r->stats.compressed_records++;
	r->stats.compressed_bytes += len;
	return 0;
}

/* 1 = hand the record out, 0 = consumed here, < 0 = error. */
static int
perfdata_handle(struct perfdata_reader *r, struct perf_event_header *hdr,
		uint64_t offset, bool in_zstd, char *err, size_t errlen)
{
	struct perfdata_cursor c;
	uint64_t v;
	int ret;

	/* Kernel records, nearly all of a file, before perf's own. */
	if (hdr->type < PERFDATA_REC_HEADER_ATTR) {
		if (r->n_events == 0)
			return perfdata_fail(err, errlen, -EPROTO,
					     "offset %llu: a record before "
					     "any event was described",
					     (unsigned long long)offset);
		return 1;
	}
	perfdata_cursor_init(&c, hdr + 1, hdr->size - sizeof(*hdr), r->swap);
	switch (hdr->type) {
	case PERFDATA_REC_FINISHED_ROUND:
		return 1;
	case PERFDATA_REC_HEADER_ATTR:
		return perfdata_header_attr(r, hdr, err, errlen);
	case PERFDATA_REC_HEADER_FEATURE:
		v = perfdata_get_u64(&c);
		if (c.bad || v >= PERFDATA_FEAT_BITS)
			return perfdata_fail(err, errlen, -EPROTO,
					     "offset %llu: bad HEADER_FEATURE "
					     "record", (unsigned long long)offset);
		ret = perfdata_feat_parse(&r->info, (unsigned)v, c.p,
					  perfdata_cursor_left(&c), r->swap,
					  err, errlen);
		if (ret == 0 && v == PERFDATA_FEAT_PMU_MAPPINGS)
			for (size_t i = 0; i < r->n_events; i++)
				perfdata_event_name(&r->events[i].attr,
						    &r->info,
						    r->events[i].name,
						    sizeof(r->events[i].name));
		return ret;
	case PERFDATA_REC_EVENT_UPDATE:
		perfdata_event_update(r, hdr);
		return 0;
	case PERFDATA_REC_HEADER_TRACING_DATA:
		v = perfdata_get_u32(&c);
		r->stats.skipped_records++;
		return c.bad ? perfdata_fail(err, errlen, -EPROTO,
					     "offset %llu: short TRACING_DATA",
					     (unsigned long long)offset) :
			perfdata_skip_payload(r, v, offset, in_zstd, err,
					      errlen);
	case PERFDATA_REC_AUXTRACE:
		v = perfdata_get_u64(&c);
		r->stats.skipped_records++;
		return c.bad ? perfdata_fail(err, errlen, -EPROTO,
					     "offset %llu: short AUXTRACE",
					     (unsigned long long)offset) :
			perfdata_skip_payload(r, v, offset, in_zstd, err,
					      errlen);
	case PERFDATA_REC_COMPRESSED:
	case PERFDATA_REC_COMPRESSED2:
		return perfdata_compressed(r, hdr, offset, in_zstd, err,
					   errlen);
	default:
		break;
	}
	if (hdr->type >= PERFDATA_REC_USER_END) {
		r->stats.unknown_records++;
		return 0;
	}
	r->stats.skipped_records++;
	return 0;
}

/* A kernel record's event (its header in host order), a sample of none
 * counted unmatched. */
static inline uint32_t
perfdata_record_event(struct perfdata_reader *r,
		      const struct perf_event_header *hdr)
{
	/* One event: as perfdata_event_of answers, without the call. */
	uint32_t idx = r->id_mode == PERFDATA_ID_SINGLE && r->n_events ? 0 :
		       perfdata_event_of(r, hdr);

	if (idx == PERFDATA_NO_EVENT && hdr->type == PERF_RECORD_SAMPLE)
		r->stats.unmatched++;
	return idx;
}

/* Kernel record: its event, then its body in host order. */
static bool
perfdata_finish_kernel(struct perfdata_reader *r,
		       struct perf_event_header *hdr, uint32_t *idx)
{
	const struct record_layout *l = NULL;

	*idx = perfdata_record_event(r, hdr);
	if (*idx != PERFDATA_NO_EVENT)
		l = &r->events[*idx].layout;
	else if (r->id_mode != PERFDATA_ID_IDENTIFIER &&
		 r->id_mode != PERFDATA_ID_POS)
		l = &r->events[0].layout;
	if (r->swap && perfdata_swap_body(hdr, l, true) < 0) {
		r->stats.bad_records++;
		return false;
	}
	return true;
}

/* The next record from the zstd stream or the image, or NULL at the end
 * of the data.  0 or -EPROTO. */
static int
perfdata_fetch(struct perfdata_reader *r, struct perf_event_header **hdr,
	       uint64_t *offset, bool *in_zstd, char *err, size_t errlen)
{
	int ret;

	*hdr = NULL;
	*in_zstd = false;
	*offset = r->pos;
	if (r->zstd) {
		ret = perfdata_zstd_next(r->zstd, r->scratch, r->swap, err,
					 errlen);
		r->stats.decompressed_bytes = perfdata_zstd_out_bytes(r->zstd);
		if (ret < 0)
			return ret;
		if (ret == 1) {
			*hdr = (struct perf_event_header *)r->scratch;
			if (r->swap)
				perfdata_swap_header(*hdr);
			*offset = r->zstd_offset;
			*in_zstd = true;
			return 0;
		}
	}
	if (r->pos < r->end)
		return perfdata_take_record(r, hdr, err, errlen);
	if (perfdata_zstd_pending(r->zstd) != 0)
		return perfdata_fail(err, errlen, -EPROTO,
				     "compressed data ends inside a record");
	return 0;
}

/* perfdata_reader_next past its in-place case: apart, so that the common
 * case saves no registers for it. */
static __attribute__((noinline)) int
perfdata_reader_walk(struct perfdata_reader *r, struct perfdata_record *rec,
		     char *err, size_t errlen)
{
	struct perf_event_header *hdr;
	uint64_t offset;
	bool in_zstd;
	int ret;

	while (!r->done) {
		ret = perfdata_fetch(r, &hdr, &offset, &in_zstd, err, errlen);
		if (ret == 0 && !hdr) {
			r->done = true;
			break;
		}
		/* A kernel record once events are known: handed out as is
		 * (perfdata_handle would say so after a call). */
		if (ret == 0 && (hdr->type >= PERFDATA_REC_HEADER_ATTR ||
				 r->n_events == 0))
			ret = perfdata_handle(r, hdr, offset, in_zstd, err,
					      errlen);
		else if (ret == 0)
			ret = 1;
		if (ret < 0) {
			r->done = true;
			r->stop_ret = ret;
			return ret;
		}
		if (ret == 0)
			continue;
		rec->event_idx = PERFDATA_NO_EVENT;
		if (hdr->type < PERFDATA_REC_HEADER_ATTR &&
		    !perfdata_finish_kernel(r, hdr, &rec->event_idx))
			continue;
		rec->hdr = hdr;
		rec->offset = offset;
		rec->stable = (const unsigned char *)hdr >= r->img &&
			      (const unsigned char *)hdr < r->img + r->size;
		r->stats.records++;
		return 1;
	}
	if (r->stop_ret < 0)
		snprintf(err, errlen, "the reader stopped at an error");
	return r->stop_ret;
}

int
perfdata_reader_next(struct perfdata_reader *r, struct perfdata_record *rec,
		     char *err, size_t errlen)
{
	const struct perf_event_header *hdr;

	/* The common case without the calls of the walk: a kernel record
	 * in place (aligned) in an uncompressed image of host order, once
	 * the events are known; the same checks and counts as the walk. */
	if (!r->done && !r->zstd && !r->swap && r->n_events &&
	    r->end - r->pos >= sizeof(*hdr) &&
	    ((uintptr_t)(r->img + r->pos) & 7) == 0) {
		hdr = (const struct perf_event_header *)(r->img + r->pos);
		if (hdr->type < PERFDATA_REC_HEADER_ATTR &&
		    hdr->size >= sizeof(*hdr) && hdr->size <= r->end - r->pos) {
			rec->offset = r->pos;
			r->pos += hdr->size;
			/* Host order: only its event, as the walk. */
			rec->event_idx = perfdata_record_event(r, hdr);
			rec->hdr = hdr;
			rec->stable = true;	/* in r->img */
			r->stats.records++;
			return 1;
		}
	}
	return perfdata_reader_walk(r, rec, err, errlen);
}

/*
 * Pipe mode: applies the leading header records (attrs, features) so the
 * caller knows the events and the topology before the first sample.
 */
int
perfdata_prime_pipe(struct perfdata_reader *r, char *err, size_t errlen)
{
	while (r->end - r->pos >= sizeof(struct perf_event_header)) {
		struct perf_event_header h, *hdr = NULL;
		int ret;

		memcpy(&h, r->img + r->pos, sizeof(h));
		if (r->swap)
			perfdata_swap_header(&h);
		if (h.type < PERFDATA_REC_HEADER_ATTR ||
		    h.type == PERFDATA_REC_FINISHED_ROUND ||
		    h.type == PERFDATA_REC_COMPRESSED ||
		    h.type == PERFDATA_REC_COMPRESSED2 ||
		    h.type == PERFDATA_REC_FINISHED_INIT)
			break;
		ret = perfdata_take_record(r, &hdr, err, errlen);
		if (ret == 0)
			ret = perfdata_handle(r, hdr, r->pos - h.size, false,
					      err, errlen);
		if (ret < 0)
			return ret;
	}
	if (r->n_events == 0)
		return perfdata_fail(err, errlen, -EPROTO,
				     "pipe-mode data without events (no "
				     "HEADER_ATTR record before the data)");
	return 0;
}
