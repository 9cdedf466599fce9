#include "config.h"

/*
 * perf.data reader.  See perfdata_read.h; layouts in perfdata_format.h.
 *
 * The input is one read-only image (the mmapped file, stdin read to its
 * end, or a caller's buffer).  Records are handed out in place when the
 * file is in host order and the record is 8-byte aligned; otherwise they
 * are copied into `scratch` and swapped there.
 *
 * Which event a record belongs to (kernel-abi.md section 9):
 *   one event                 always that one
 *   IDENTIFIER everywhere     first u64 of a SAMPLE body, last u64 of
 *                             other records (sample_id_all)
 *   equal sample_type + ID    ID at the position sample_type fixes
 *   equal sample_type         the first event (perf does the same)
 *   otherwise                 refused: records cannot be told apart
 */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata_format.h"
#include "perfdata_read.h"
#include "perfdata_swap.h"
#include "perfdata_zstd.h"

/* Above any real attr (136 today); the cap keeps a hostile attr_size
 * from making every entry of the attrs section a huge copy. */
#define PERFDATA_MAX_ATTR_SIZE	4096
#define PERFDATA_MAX_EVENTS	1024

enum perfdata_id_mode {
	PERFDATA_ID_SINGLE,	/* one event */
	PERFDATA_ID_IDENTIFIER,
	PERFDATA_ID_POS,	/* ID at id_pos_sample / id_pos_other */
	PERFDATA_ID_FIRST,	/* equal sample_type, no id: event 0 */
	PERFDATA_ID_AMBIGUOUS,
};

struct perfdata_reader {
	const unsigned char *img;
	size_t size;
	void *map;
	unsigned char *owned;
	bool swap;
	bool pipe;

	struct perfdata_event *events;
	size_t n_events;
	enum perfdata_id_mode id_mode;
	unsigned id_pos_sample;	/* u64 index into a SAMPLE body */
	unsigned id_pos_other;	/* u64 index from the end of others */
	/* id -> event index, open addressing, key 0 never stored (the
	 * kernel's ids start at 1), at most half full. */
	uint64_t *id_keys;
	uint32_t *id_vals;
	size_t id_cap;
	size_t id_used;

	uint64_t pos;		/* next record in the image */
	uint64_t end;		/* end of the data section */
	struct perfdata_zstd *zstd;
	uint64_t zstd_offset;	/* of the COMPRESSED record being read */
	bool done;
	int stop_ret;		/* what next() returns once done */

	struct perfdata_info info;
	struct perfdata_stats stats;
	/* One record, aligned: perf_event_header.size is a u16. */
	uint64_t scratch[(PERFDATA_MAX_RECORD + 8) / 8];
};

static int
perfdata_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
perfdata_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

/* [off, off + len) lies inside the image, without overflow. */
static bool
perfdata_in_image(const struct perfdata_reader *r, uint64_t off,
		  uint64_t len)
{
	return off <= r->size && len <= r->size - off;
}

static uint64_t
perfdata_u64_at(const struct perfdata_reader *r, uint64_t off)
{
	uint64_t v;

	memcpy(&v, r->img + off, sizeof(v));
	return perfdata_bswap64_if(v, r->swap);
}

static const char *const perfdata_sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches",
	"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
	"emulation-faults", "dummy", "bpf-output", "cgroup-switches",
};

static const char *const perfdata_hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses",
	"branches", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
	"stalled-cycles-backend", "ref-cycles",
};

void
perfdata_event_name(const struct perf_event_attr *attr,
		    const struct perfdata_info *info, char *buf, size_t len)
{
	const size_t n_sw = sizeof(perfdata_sw_names) / sizeof(char *);
	const size_t n_hw = sizeof(perfdata_hw_names) / sizeof(char *);
	unsigned long long config = attr->config;

	if (attr->type == PERF_TYPE_SOFTWARE && config < n_sw) {
		snprintf(buf, len, "%s", perfdata_sw_names[config]);
		return;
	}
	if (attr->type == PERF_TYPE_HARDWARE && config < n_hw) {
		snprintf(buf, len, "%s", perfdata_hw_names[config]);
		return;
	}
	if (attr->type == PERF_TYPE_TRACEPOINT) {
		snprintf(buf, len, "tracepoint:%llu", config);
		return;
	}
	if (attr->type == PERF_TYPE_RAW) {
		snprintf(buf, len, "r%llx", config);
		return;
	}
	for (size_t i = 0; info && i < info->n_pmus; i++) {
		if (info->pmus[i].type == attr->type) {
			snprintf(buf, len, "%s/config=0x%llx/",
				 info->pmus[i].name, config);
			return;
		}
	}
	snprintf(buf, len, "type %u/config=0x%llx/", attr->type, config);
}

/*
 * Copies one attr of `avail` bytes from the file: swapped to host order,
 * cut to the struct memtop knows (a longer one from a newer perf keeps
 * its known fields).  -EPROTO when attr.size claims more than avail.
 */
static int
perfdata_take_attr(struct perfdata_reader *r, struct perfdata_event *ev,
		   const unsigned char *p, size_t avail, char *err,
		   size_t errlen)
{
	unsigned char buf[PERFDATA_MAX_ATTR_SIZE];
	uint32_t size;
	size_t keep;

	if (avail < PERFDATA_ATTR_SIZE_VER0)
		return perfdata_fail(err, errlen, -EPROTO,
				     "attr of %zu bytes (at least 64 needed)",
				     avail);
	memcpy(&size, p + 4, sizeof(size));
	size = perfdata_bswap32_if(size, r->swap);
	if (size == 0)
		size = PERFDATA_ATTR_SIZE_VER0;
	if (size < PERFDATA_ATTR_SIZE_VER0 || size > avail ||
	    size > PERFDATA_MAX_ATTR_SIZE)
		return perfdata_fail(err, errlen, -EPROTO,
				     "attr.size %u does not fit its %zu "
				     "bytes", size, avail);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, p, size);
	if (r->swap)
		perfdata_swap_attr(buf, size);
	keep = size < sizeof(ev->attr) ? size : sizeof(ev->attr);
	memset(&ev->attr, 0, sizeof(ev->attr));
	memcpy(&ev->attr, buf, keep);
	ev->attr.size = (uint32_t)keep;
	ev->file_attr_size = size;
	ev->layout.sample_type = ev->attr.sample_type;
	ev->layout.read_format = ev->attr.read_format;
	ev->layout.sample_id_all = ev->attr.sample_id_all;
	return 0;
}

static int
perfdata_add_event(struct perfdata_reader *r, struct perfdata_event **out,
		   char *err, size_t errlen)
{
	struct perfdata_event *n;

	if (r->n_events >= PERFDATA_MAX_EVENTS)
		return perfdata_fail(err, errlen, -EPROTO,
				     "more than %d events", PERFDATA_MAX_EVENTS);
	n = realloc(r->events, (r->n_events + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	r->events = n;
	*out = &n[r->n_events];
	memset(*out, 0, sizeof(**out));
	return 0;
}

/* Reads n ids of the file's order at p into ev (n bounded by caller). */
static int
perfdata_set_ids(struct perfdata_reader *r, struct perfdata_event *ev,
		 const unsigned char *p, size_t n)
{
	ev->ids = calloc(n ? n : 1, sizeof(uint64_t));
	if (!ev->ids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		memcpy(&ev->ids[i], p + 8 * i, 8);
		ev->ids[i] = perfdata_bswap64_if(ev->ids[i], r->swap);
	}
	ev->n_ids = n;
	return 0;
}

static size_t
perfdata_id_slot(uint64_t id, size_t cap)
{
	uint64_t h = id * UINT64_C(0x9e3779b97f4a7c15);

	return (size_t)(h >> 17) & (cap - 1);
}

/* Inserts id -> idx (the first event naming an id keeps it). */
static void
perfdata_id_put(uint64_t *keys, uint32_t *vals, size_t cap, uint64_t id,
		uint32_t idx)
{
	size_t s = perfdata_id_slot(id, cap);

	while (keys[s] && keys[s] != id)
		s = (s + 1) & (cap - 1);
	if (!keys[s]) {
		keys[s] = id;
		vals[s] = idx;
	}
}

/* Indexes the ids of events[first..n_events), doubling the table to
 * keep it at most half full. */
static int
perfdata_id_index(struct perfdata_reader *r, size_t first)
{
	size_t want = r->id_used, cap = r->id_cap ? r->id_cap : 16;

	for (size_t i = first; i < r->n_events; i++)
		want += r->events[i].n_ids;
	while (cap < 2 * want)
		cap *= 2;
	if (cap != r->id_cap) {
		uint64_t *keys = calloc(cap, sizeof(*keys));
		uint32_t *vals = calloc(cap, sizeof(*vals));

		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -ENOMEM;
		}
		for (size_t s = 0; s < r->id_cap; s++)
			if (r->id_keys[s])
				perfdata_id_put(keys, vals, cap, r->id_keys[s],
						r->id_vals[s]);
		free(r->id_keys);
		free(r->id_vals);
		r->id_keys = keys;
		r->id_vals = vals;
		r->id_cap = cap;
	}
	for (size_t i = first; i < r->n_events; i++) {
		for (size_t k = 0; k < r->events[i].n_ids; k++) {
			if (r->events[i].ids[k] == 0)
				continue;
			perfdata_id_put(r->id_keys, r->id_vals, r->id_cap,
					r->events[i].ids[k], (uint32_t)i);
		}
	}
	r->id_used = want;
	return 0;
}

/* Picks how records name their event; O(events), after every add. */
static int
perfdata_id_mode(struct perfdata_reader *r, char *err, size_t errlen)
{
	bool all_identifier = true, all_equal = true;
	const struct perf_event_attr *a0 = &r->events[0].attr;

	for (size_t i = 0; i < r->n_events; i++) {
		const struct perf_event_attr *a = &r->events[i].attr;
		bool same_id_all = a->sample_id_all == a0->sample_id_all;

		all_identifier &= (a->sample_type & PERF_SAMPLE_IDENTIFIER) &&
				  same_id_all;
		all_equal &= a->sample_type == a0->sample_type && same_id_all;
	}
	if (r->n_events == 1)
		r->id_mode = PERFDATA_ID_SINGLE;
	else if (all_identifier)
		r->id_mode = PERFDATA_ID_IDENTIFIER;
	else if (all_equal && (a0->sample_type & PERF_SAMPLE_ID))
		r->id_mode = PERFDATA_ID_POS;
	else if (all_equal)
		r->id_mode = PERFDATA_ID_FIRST;
	else
		return perfdata_fail(err, errlen, -EPROTO,
				     "%zu events with different sample_type "
				     "and no IDENTIFIER: records cannot be "
				     "told apart", r->n_events);
	if (r->id_mode == PERFDATA_ID_POS) {
		const uint64_t before = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;
		const uint64_t after = PERF_SAMPLE_STREAM_ID |
			PERF_SAMPLE_CPU;

		r->id_pos_sample = (unsigned)__builtin_popcountll(
			a0->sample_type & before);
		r->id_pos_other = 1 + (unsigned)__builtin_popcountll(
			a0->sample_type & after);
	}
	return 0;
}

static uint32_t
perfdata_id_lookup(const struct perfdata_reader *r, uint64_t id)
{
	size_t s;

	if (id == 0 || r->id_cap == 0)
		return PERFDATA_NO_EVENT;
	for (s = perfdata_id_slot(id, r->id_cap); r->id_keys[s];
	     s = (s + 1) & (r->id_cap - 1))
		if (r->id_keys[s] == id)
			return r->id_vals[s];
	return PERFDATA_NO_EVENT;
}

/* The event of a kernel record whose header is host order and whose body
 * is still in the file's order. */
static uint32_t
perfdata_event_of(const struct perfdata_reader *r,
		  const struct perf_event_header *hdr)
{
	const unsigned char *body = (const unsigned char *)(hdr + 1);
	size_t words = (hdr->size - sizeof(*hdr)) / 8;
	unsigned idx;
	uint64_t id;

	switch (r->id_mode) {
	case PERFDATA_ID_SINGLE:
	case PERFDATA_ID_FIRST:
		return r->n_events ? 0 : PERFDATA_NO_EVENT;
	case PERFDATA_ID_IDENTIFIER:
		if (words == 0)
			return PERFDATA_NO_EVENT;
		if (hdr->type != PERF_RECORD_SAMPLE &&
		    !r->events[0].attr.sample_id_all)
			return PERFDATA_NO_EVENT;
		idx = hdr->type == PERF_RECORD_SAMPLE ? 0 :
			(unsigned)(hdr->size - sizeof(*hdr)) / 8 - 1;
		break;
	case PERFDATA_ID_POS:
		if (hdr->type == PERF_RECORD_SAMPLE) {
			idx = r->id_pos_sample;
		} else {
			if (!r->events[0].attr.sample_id_all ||
			    words < r->id_pos_other)
				return PERFDATA_NO_EVENT;
			idx = (unsigned)(words - r->id_pos_other);
		}
		if (idx >= words)
			return PERFDATA_NO_EVENT;
		break;
	default:
		return PERFDATA_NO_EVENT;
	}
	if ((size_t)idx * 8 + 8 > hdr->size - sizeof(*hdr))
		return PERFDATA_NO_EVENT;
	memcpy(&id, body + 8 * (size_t)idx, sizeof(id));
	return perfdata_id_lookup(r, perfdata_bswap64_if(id, r->swap));
}

/* HEADER_ATTR (pipe mode): { attr[attr.size]; u64 ids[] }. */
static int
perfdata_header_attr(struct perfdata_reader *r,
		     const struct perf_event_header *hdr, char *err,
		     size_t errlen)
{
	const unsigned char *body = (const unsigned char *)(hdr + 1);
	size_t len = hdr->size - sizeof(*hdr);
	struct perfdata_event *ev;
	int ret;

	ret = perfdata_add_event(r, &ev, err, errlen);
	if (ret < 0)
		return ret;
	ret = perfdata_take_attr(r, ev, body, len, err, errlen);
	if (ret < 0)
		return ret;
	ret = perfdata_set_ids(r, ev, body + ev->file_attr_size,
			       (len - ev->file_attr_size) / 8);
	if (ret < 0)
		return ret;
	r->n_events++;
	perfdata_event_name(&ev->attr, &r->info, ev->name, sizeof(ev->name));
	ret = perfdata_id_index(r, r->n_events - 1);
	if (ret < 0)
		return ret;
	return perfdata_id_mode(r, err, errlen);
}

/* EVENT_UPDATE of type NAME: { u64 type; u64 id; char name[] }. */
static void
perfdata_event_update(struct perfdata_reader *r,
		      const struct perf_event_header *hdr)
{
	struct perfdata_cursor c;
	uint64_t type, id;
	uint32_t idx;
	size_t n;
	const char *name;

	perfdata_cursor_init(&c, hdr + 1, hdr->size - sizeof(*hdr), r->swap);
	type = perfdata_get_u64(&c);
	id = perfdata_get_u64(&c);
	if (c.bad || type != PERFDATA_EVENT_UPDATE_NAME)
		return;
	idx = perfdata_id_lookup(r, id);
	if (idx == PERFDATA_NO_EVENT && r->n_events == 1)
		idx = 0;
	if (idx == PERFDATA_NO_EVENT)
		return;
	name = (const char *)c.p;
	n = perfdata_cursor_left(&c);
	n = strnlen(name, n);
	if (n >= sizeof(r->events[idx].name))
		n = sizeof(r->events[idx].name) - 1;
	memcpy(r->events[idx].name, name, n);
	r->events[idx].name[n] = '\0';
}

/* EVENT_DESC names, matched to events by their first id, else by order
 * when the counts agree. */
static void
perfdata_apply_names(struct perfdata_reader *r)
{
	const struct perfdata_info *info = &r->info;

	for (size_t i = 0; i < info->n_names; i++) {
		uint32_t idx = PERFDATA_NO_EVENT;

		if (info->names[i].has_id && r->id_cap)
			idx = perfdata_id_lookup(r, info->names[i].first_id);
		if (idx == PERFDATA_NO_EVENT && info->n_names == r->n_events)
			idx = (uint32_t)i;
		if (idx == PERFDATA_NO_EVENT || !info->names[i].name[0])
			continue;
		snprintf(r->events[idx].name, sizeof(r->events[idx].name),
			 "%s", info->names[i].name);
	}
}

static int
perfdata_read_attrs(struct perfdata_reader *r,
		    const struct perfdata_file_header *h, char *err,
		    size_t errlen)
{
	uint64_t n;
	int ret;

	if (h->attr_size < PERFDATA_ATTR_SIZE_VER0 + 16 ||
	    h->attr_size > PERFDATA_MAX_ATTR_SIZE + 16)
		return perfdata_fail(err, errlen, -EPROTO,
				     "attr_size %llu out of range",
				     (unsigned long long)h->attr_size);
	if (!perfdata_in_image(r, h->attrs.offset, h->attrs.size) ||
	    h->attrs.size % h->attr_size != 0)
		return perfdata_fail(err, errlen, -EPROTO,
				     "attrs section (offset %llu, %llu "
				     "bytes) outside the file or not a "
				     "multiple of %llu (truncated?)",
				     (unsigned long long)h->attrs.offset,
				     (unsigned long long)h->attrs.size,
				     (unsigned long long)h->attr_size);
	n = h->attrs.size / h->attr_size;
	if (n == 0)
		return perfdata_fail(err, errlen, -EPROTO,
				     "no events (empty attrs section)");
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = h->attrs.offset + i * h->attr_size;
		size_t attr_bytes = (size_t)h->attr_size - 16;
		uint64_t ids_off = perfdata_u64_at(r, off + attr_bytes);
		uint64_t ids_size = perfdata_u64_at(r, off + attr_bytes + 8);
		struct perfdata_event *ev;

		ret = perfdata_add_event(r, &ev, err, errlen);
		if (ret < 0)
			return ret;
		ret = perfdata_take_attr(r, ev, r->img + off, attr_bytes, err,
					 errlen);
		if (ret < 0)
			return ret;
		if (!perfdata_in_image(r, ids_off, ids_size) || ids_size % 8)
			return perfdata_fail(err, errlen, -EPROTO,
					     "ids of event %llu outside the "
					     "file (truncated?)",
					     (unsigned long long)i);
		ret = perfdata_set_ids(r, ev, r->img + ids_off,
				       (size_t)ids_size / 8);
		if (ret < 0)
			return ret;
		r->n_events++;
	}
	return 0;
}

/* The feature index sits right after the data section. */
static int
perfdata_read_features(struct perfdata_reader *r,
		       const struct perfdata_file_header *h, char *err,
		       size_t errlen)
{
	uint64_t idx = h->data.offset + h->data.size;
	unsigned n = 0;
	int ret;

	for (unsigned bit = 0; bit < PERFDATA_FEAT_BITS; bit++)
		n += (unsigned)(h->features[bit / 64] >> (bit % 64) & 1);
	if (!perfdata_in_image(r, idx, 16 * (uint64_t)n))
		return perfdata_fail(err, errlen, -EPROTO,
				     "feature index (%u entries at offset "
				     "%llu) outside the file (truncated?)", n,
				     (unsigned long long)idx);
	for (unsigned bit = 0; bit < PERFDATA_FEAT_BITS; bit++) {
		uint64_t off, size;

		if (!(h->features[bit / 64] >> (bit % 64) & 1))
			continue;
		off = perfdata_u64_at(r, idx);
		size = perfdata_u64_at(r, idx + 8);
		idx += 16;
		if (!perfdata_in_image(r, off, size)) {
			char name[16];

			return perfdata_fail(err, errlen, -EPROTO,
					     "feature %s outside the file "
					     "(truncated?)",
					     perfdata_feat_name(bit, name,
								sizeof(name)));
		}
		ret = perfdata_feat_parse(&r->info, bit, r->img + off,
					  (size_t)size, r->swap, err, errlen);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * The feature bitmap is declared as unsigned long in perf, so a foreign
 * file may hold it as u32 words; perf decides by HOSTNAME, which every
 * perf since 2012 sets, and so does this.
 */
static void
perfdata_read_feature_bits(const struct perfdata_reader *r, uint64_t off,
			   uint64_t bits[4])
{
	const uint64_t hostname = UINT64_C(1) << PERFDATA_FEAT_HOSTNAME;

	for (int i = 0; i < 4; i++)
		bits[i] = perfdata_u64_at(r, off + 8 * (uint64_t)i);
	if (!r->swap || (bits[0] & hostname))
		return;
	for (int i = 0; i < 4; i++) {
		uint32_t w[2];

		memcpy(w, r->img + off + 8 * (uint64_t)i, 8);
		w[0] = __builtin_bswap32(w[0]);
		w[1] = __builtin_bswap32(w[1]);
		bits[i] = (uint64_t)w[1] << 32 | w[0];
	}
}

static int
perfdata_read_file_header(struct perfdata_reader *r, char *err,
			  size_t errlen)
{
	struct perfdata_file_header h;
	int ret;

	if (r->size < PERFDATA_HEADER_SIZE)
		return perfdata_fail(err, errlen, -EPROTO,
				     "header truncated (%zu of 104 bytes)",
				     r->size);
	h.attr_size = perfdata_u64_at(r, 16);
	h.attrs.offset = perfdata_u64_at(r, 24);
	h.attrs.size = perfdata_u64_at(r, 32);
	h.data.offset = perfdata_u64_at(r, 40);
	h.data.size = perfdata_u64_at(r, 48);
	perfdata_read_feature_bits(r, 72, h.features);

	if (!perfdata_in_image(r, h.data.offset, h.data.size))
		return perfdata_fail(err, errlen, -EPROTO,
				     "data section (offset %llu, %llu bytes) "
				     "runs past the end of the file (%zu "
				     "bytes): truncated?",
				     (unsigned long long)h.data.offset,
				     (unsigned long long)h.data.size, r->size);
	if (h.data.size == 0)
		return perfdata_fail(err, errlen, -EPROTO,
				     "the data section is empty (was the "
				     "recording properly ended?)");
	ret = perfdata_read_attrs(r, &h, err, errlen);
	if (ret < 0)
		return ret;
	ret = perfdata_read_features(r, &h, err, errlen);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < r->n_events; i++)
		perfdata_event_name(&r->events[i].attr, &r->info,
				    r->events[i].name,
				    sizeof(r->events[i].name));
	ret = perfdata_id_index(r, 0);
	if (ret < 0)
		return ret;
	ret = perfdata_id_mode(r, err, errlen);
	if (ret < 0)
		return ret;
	perfdata_apply_names(r);
	r->pos = h.data.offset;
	r->end = h.data.offset + h.data.size;
	return 0;
}

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
	if (hdr->type >= PERFDATA_REC_HEADER_ATTR) {
		r->stats.skipped_records++;
		return 0;
	}
	if (r->n_events == 0)
		return perfdata_fail(err, errlen, -EPROTO,
				     "offset %llu: a record before any event "
				     "was described", (unsigned long long)offset);
	return 1;
}

/* Kernel record: its event, then its body in host order. */
static bool
perfdata_finish_kernel(struct perfdata_reader *r,
		       struct perf_event_header *hdr, uint32_t *idx)
{
	const struct record_layout *l = NULL;

	*idx = perfdata_event_of(r, hdr);
	if (*idx != PERFDATA_NO_EVENT)
		l = &r->events[*idx].layout;
	else if (r->id_mode != PERFDATA_ID_IDENTIFIER &&
		 r->id_mode != PERFDATA_ID_POS)
		l = &r->events[0].layout;
	if (*idx == PERFDATA_NO_EVENT && hdr->type == PERF_RECORD_SAMPLE)
		r->stats.unmatched++;
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

int
perfdata_reader_next(struct perfdata_reader *r, struct perfdata_record *rec,
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
		if (ret == 0)
			ret = perfdata_handle(r, hdr, offset, in_zstd, err,
					      errlen);
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
		r->stats.records++;
		return 1;
	}
	if (r->stop_ret < 0)
		snprintf(err, errlen, "the reader stopped at an error");
	return r->stop_ret;
}

/*
 * Pipe mode: applies the leading header records (attrs, features) so the
 * caller knows the events and the topology before the first sample.
 */
static int
perfdata_prime_pipe(struct perfdata_reader *r, char *err, size_t errlen)
{
	while (r->end - r->pos >= sizeof(struct perf_event_header)) {
		struct perf_event_header h, *hdr;
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

static int
perfdata_start(struct perfdata_reader *r, char *err, size_t errlen)
{
	uint64_t magic, hsize;

	if (r->size < 16)
		return perfdata_fail(err, errlen, -EINVAL,
				     "not a perf.data file (%zu bytes)",
				     r->size);
	memcpy(&magic, r->img, sizeof(magic));
	if (magic == PERFDATA_MAGIC_SWAPPED)
		r->swap = true;
	else if (memcmp(r->img, "PERFFILE", 8) == 0)
		return perfdata_fail(err, errlen, -EINVAL,
				     "perf.data version 1 is not supported "
				     "(re-record with a perf from 2012 or "
				     "later)");
	else if (magic != PERFDATA_MAGIC)
		return perfdata_fail(err, errlen, -EINVAL,
				     "not a perf.data file (no PERFILE2 "
				     "magic)");
	hsize = perfdata_u64_at(r, 8);
	if (hsize == PERFDATA_PIPE_HEADER_SIZE) {
		r->pipe = true;
		r->pos = PERFDATA_PIPE_HEADER_SIZE;
		r->end = r->size;
		return perfdata_prime_pipe(r, err, errlen);
	}
	if (hsize != PERFDATA_HEADER_SIZE)
		return perfdata_fail(err, errlen, -EPROTO,
				     "header size %llu (104 for a file, 16 "
				     "for pipe mode)", (unsigned long long)hsize);
	return perfdata_read_file_header(r, err, errlen);
}

int
perfdata_reader_open_mem(struct perfdata_reader **out, const void *data,
			 size_t size, char *err, size_t errlen)
{
	struct perfdata_reader *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return perfdata_fail(err, errlen, -ENOMEM, "out of memory");
	r->img = data;
	r->size = size;
	ret = perfdata_start(r, err, errlen);
	if (ret < 0) {
		if (ret == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		perfdata_reader_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

/* A pipe or terminal: read to the end (the size justifies the memory). */
static int
perfdata_slurp(int fd, unsigned char **out, size_t *size)
{
	size_t cap = 1 << 16, len = 0;
	unsigned char *buf = malloc(cap), *n;
	ssize_t got;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			n = realloc(buf, cap * 2);
			if (!n) {
				free(buf);
				return -ENOMEM;
			}
			buf = n;
			cap *= 2;
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = -errno;

			free(buf);
			return e;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	*out = buf;
	*size = len;
	return 0;
}

int
perfdata_reader_open(struct perfdata_reader **out, const char *path,
		     char *err, size_t errlen)
{
	bool is_stdin = strcmp(path, "-") == 0;
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	unsigned char *owned = NULL;
	void *map = NULL;
	struct stat st;
	size_t size = 0;
	int ret;

	if (fd < 0)
		return perfdata_fail(err, errlen, -errno, "%s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		ret = perfdata_fail(err, errlen, -errno, "%s", strerror(errno));
		goto out_close;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = perfdata_fail(err, errlen, -EISDIR, "is a directory");
		goto out_close;
	}
	if (S_ISREG(st.st_mode)) {
		size = (size_t)st.st_size;
		if (size == 0) {
			ret = perfdata_fail(err, errlen, -EINVAL,
					    "empty file, not perf.data");
			goto out_close;
		}
		map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			ret = perfdata_fail(err, errlen, -errno, "mmap: %s",
					    strerror(errno));
			goto out_close;
		}
	} else {
		ret = perfdata_slurp(fd, &owned, &size);
		if (ret < 0) {
			perfdata_fail(err, errlen, ret, "read: %s",
				      strerror(-ret));
			goto out_close;
		}
	}
	ret = perfdata_reader_open_mem(out, map ? map : owned, size, err,
				       errlen);
	if (ret < 0) {
		if (map)
			munmap(map, size);
		free(owned);
		goto out_close;
	}
	(*out)->map = map;
	(*out)->owned = owned;
out_close:
	if (!is_stdin)
		close(fd);
	return ret;
}

void
perfdata_reader_free(struct perfdata_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_events; i++)
		free(r->events[i].ids);
	free(r->events);
	free(r->id_keys);
	free(r->id_vals);
	perfdata_zstd_free(r->zstd);
	perfdata_info_fini(&r->info);
	if (r->map)
		munmap(r->map, r->size);
	free(r->owned);
	free(r);
}

size_t
perfdata_reader_n_events(const struct perfdata_reader *r)
{
	return r->n_events;
}

const struct perfdata_event *
perfdata_reader_event(const struct perfdata_reader *r, size_t idx)
{
	return idx < r->n_events ? &r->events[idx] : NULL;
}

const struct perfdata_info *
perfdata_reader_info(const struct perfdata_reader *r)
{
	return &r->info;
}

const struct perfdata_stats *
perfdata_reader_stats(const struct perfdata_reader *r)
{
	return &r->stats;
}

bool
perfdata_reader_is_pipe(const struct perfdata_reader *r)
{
	return r->pipe;
}

bool
perfdata_reader_is_swapped(const struct perfdata_reader *r)
{
	return r->swap;
}

uint64_t
perfdata_reader_size(const struct perfdata_reader *r)
{
	return r->size;
}
