#include "config.h"

/*
 * perf.data reader: events.  Attrs as the file gives them, their ids, the
 * names (EVENT_DESC, EVENT_UPDATE, or derived), and which event a record
 * belongs to (docs/kernel.md, "perf.data"):
 *
 *   one event                 always that one
 *   IDENTIFIER everywhere     first u64 of a SAMPLE body, last u64 of
 *                             other records (sample_id_all)
 *   equal sample_type + ID    ID at the position sample_type fixes
 *   equal sample_type         the first event (perf does the same)
 *   otherwise                 refused: records cannot be told apart
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "perfdata_format.h"
#include "perfdata_reader_int.h"
#include "perfdata_swap.h"

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
	const size_t n_sw = ARRAY_SIZE(perfdata_sw_names);
	const size_t n_hw = ARRAY_SIZE(perfdata_hw_names);
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
int
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
	ev->layout.branch_sample_type = ev->attr.branch_sample_type;
	ev->layout.sample_regs_user = ev->attr.sample_regs_user;
	ev->layout.sample_regs_intr = ev->attr.sample_regs_intr;
	return 0;
}

int
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
int
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

/* Indexes the ids of events[first..n_events); the first event naming an
 * id keeps it. */
int
perfdata_id_index(struct perfdata_reader *r, size_t first)
{
	size_t want = 0;

	for (size_t i = first; i < r->n_events; i++)
		want += r->events[i].n_ids;
	if (u64idx_reserve(&r->ids, want) < 0)
		return -ENOMEM;
	for (size_t i = first; i < r->n_events; i++)
		for (size_t k = 0; k < r->events[i].n_ids; k++)
			if (r->events[i].ids[k] != 0 &&
			    u64idx_add(&r->ids, r->events[i].ids[k],
				       (uint32_t)i) < 0)
				return -ENOMEM;
	return 0;
}

/* Picks how records name their event; O(events), after every add. */
int
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

/* U64IDX_NONE is PERFDATA_NO_EVENT. */
static uint32_t
perfdata_id_lookup(const struct perfdata_reader *r, uint64_t id)
{
	return u64idx_get(&r->ids, id);
}

/* The event of a kernel record whose header is host order and whose body
 * is still in the file's order. */
uint32_t
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
int
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
void
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
void
perfdata_apply_names(struct perfdata_reader *r)
{
	const struct perfdata_info *info = &r->info;

	for (size_t i = 0; i < info->n_names; i++) {
		uint32_t idx = PERFDATA_NO_EVENT;

		if (info->names[i].has_id)
			idx = perfdata_id_lookup(r, info->names[i].first_id);
		if (idx == PERFDATA_NO_EVENT && info->n_names == r->n_events)
			idx = (uint32_t)i;
		if (idx == PERFDATA_NO_EVENT || !info->names[i].name[0])
			continue;
		snprintf(r->events[idx].name, sizeof(r->events[idx].name),
			 "%s", info->names[i].name);
	}
}
