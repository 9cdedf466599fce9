#include "config.h"

/*
 * perf.data writer.  See perfdata_write.h.
 *
 * Layout written (perfdata_format.h):
 *
 *   0                      header (rewritten at close)
 *   104                    data: records, appended through `buf`
 *   104 + data.size        feature index, then the feature bodies
 *   ...                    attrs entries { attr[128]; ids section }
 *   ...                    the ids arrays
 *
 * perf finds the feature index at data.offset + data.size and everything
 * else through offsets, so attrs and ids, which grow while recording
 * (every new thread's channel brings ids), can follow the features.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base.h"
#include "perfdata_featw.h"
#include "perfdata_format.h"
#include "perfdata_swap.h"
#include "perfdata_write.h"
#include "record.h"

#define PERFDATA_WBUF		(1u << 20)
#define PERFDATA_MAX_WEVENTS	64

struct perfdata_wevent {
	unsigned char attr[PERFDATA_ATTR_SIZE_MAX_WRITE];	/* host order */
	struct record_layout layout;
	char name[128];
	uint64_t *ids;
	size_t n_ids;
	size_t cap_ids;
};

struct perfdata_writer {
	int fd;
	char *path;
	struct perfdata_writer_opts opts;
	unsigned char *buf;
	size_t buf_len;
	int error;		/* first write error, sticky */

	struct perfdata_wevent events[PERFDATA_MAX_WEVENTS];
	size_t n_events;
	/* Every listed id, for repeats and for the swap's layout lookup:
	 * open addressing, key 0 = empty, value = event index. */
	uint64_t *id_keys;
	uint8_t *id_vals;
	size_t id_cap;
	size_t id_used;

	uint64_t block_size;
	int16_t *block_node;
	size_t n_blocks;
	struct perfdata_pmu_map *pmus;
	size_t n_pmus;

	struct perfdata_writer_stats stats;
	uint64_t scratch[(65536 + 8) / 8];
};

static int
perfdata_w_fail(char *err, size_t errlen, int ret, const char *what)
{
	snprintf(err, errlen, "%s: %s", what, strerror(-ret));
	return ret;
}

int
perfdata_writer_open(struct perfdata_writer **out, const char *path,
		     const struct perfdata_writer_opts *o, char *err,
		     size_t errlen)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC |
		    (o->force ? O_TRUNC : O_EXCL);
	struct perfdata_writer *w = calloc(1, sizeof(*w));
	int ret;

	if (!w)
		return perfdata_w_fail(err, errlen, -ENOMEM, "writer");
	w->fd = -1;
	w->opts = *o;
	w->path = strdup(path);
	w->buf = malloc(PERFDATA_WBUF);
	if (!w->path || !w->buf) {
		ret = perfdata_w_fail(err, errlen, -ENOMEM, "writer");
		goto out_free;
	}
	w->fd = open(path, flags, 0600);
	if (w->fd < 0) {
		ret = -errno;
		if (ret == -EEXIST)
			snprintf(err, errlen, "file exists (use --force to "
				 "overwrite it)");
		else
			snprintf(err, errlen, "%s", strerror(-ret));
		goto out_free;
	}
	/* Room for the header; the real one is written at close. */
	memset(w->buf, 0, PERFDATA_HEADER_SIZE);
	w->buf_len = PERFDATA_HEADER_SIZE;
	*out = w;
	return 0;

out_free:
	perfdata_writer_free(w);
	return ret;
}

int
perfdata_writer_add_event(struct perfdata_writer *w,
			  const struct perf_event_attr *attr,
			  const char *name)
{
	struct perfdata_wevent *ev;
	struct perf_event_attr *a;
	size_t n = sizeof(*attr) < sizeof(ev->attr) ? sizeof(*attr) :
		   sizeof(ev->attr);

	if (w->n_events == PERFDATA_MAX_WEVENTS)
		return -ENOSPC;
	ev = &w->events[w->n_events];
	memset(ev, 0, sizeof(*ev));
	memcpy(ev->attr, attr, n);
	a = (struct perf_event_attr *)(void *)ev->attr;
	a->size = PERFDATA_ATTR_SIZE_MAX_WRITE;
	ev->layout.sample_type = attr->sample_type;
	ev->layout.read_format = attr->read_format;
	ev->layout.sample_id_all = attr->sample_id_all;
	snprintf(ev->name, sizeof(ev->name), "%s", name ? name : "");
	return (int)w->n_events++;
}

static size_t
perfdata_w_slot(uint64_t id, size_t cap)
{
	return (size_t)((id * UINT64_C(0x9e3779b97f4a7c15)) >> 17) &
	       (cap - 1);
}

static int
perfdata_w_grow_ids(struct perfdata_writer *w)
{
	size_t cap = w->id_cap ? 2 * w->id_cap : 64;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint8_t *vals = calloc(cap, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < w->id_cap; i++) {
		size_t s;

		if (!w->id_keys[i])
			continue;
		s = perfdata_w_slot(w->id_keys[i], cap);
		while (keys[s])
			s = (s + 1) & (cap - 1);
		keys[s] = w->id_keys[i];
		vals[s] = w->id_vals[i];
	}
	free(w->id_keys);
	free(w->id_vals);
	w->id_keys = keys;
	w->id_vals = vals;
	w->id_cap = cap;
	return 0;
}

/* Event index of id, or -1. */
static int
perfdata_w_find_id(const struct perfdata_writer *w, uint64_t id)
{
	if (!w->id_cap || !id)
		return -1;
	for (size_t s = perfdata_w_slot(id, w->id_cap); w->id_keys[s];
	     s = (s + 1) & (w->id_cap - 1))
		if (w->id_keys[s] == id)
			return w->id_vals[s];
	return -1;
}

int
perfdata_writer_add_id(struct perfdata_writer *w, size_t idx, uint64_t id)
{
	struct perfdata_wevent *ev;
	size_t s;

	if (idx >= w->n_events || id == 0)
		return -EINVAL;
	if (perfdata_w_find_id(w, id) >= 0)
		return 0;
	if (2 * (w->id_used + 1) > w->id_cap && perfdata_w_grow_ids(w) < 0)
		return -ENOMEM;
	ev = &w->events[idx];
	if (ev->n_ids == ev->cap_ids) {
		size_t cap = ev->cap_ids ? 2 * ev->cap_ids : 8;
		uint64_t *ids = realloc(ev->ids, cap * sizeof(*ids));

		if (!ids)
			return -ENOMEM;
		ev->ids = ids;
		ev->cap_ids = cap;
	}
	ev->ids[ev->n_ids++] = id;
	s = perfdata_w_slot(id, w->id_cap);
	while (w->id_keys[s])
		s = (s + 1) & (w->id_cap - 1);
	w->id_keys[s] = id;
	w->id_vals[s] = (uint8_t)idx;
	w->id_used++;
	return 0;
}

int
perfdata_writer_set_mem_topology(struct perfdata_writer *w,
				 uint64_t block_size,
				 const int16_t *block_node, size_t n_blocks)
{
	int16_t *copy = malloc((n_blocks ? n_blocks : 1) * sizeof(*copy));

	if (!copy)
		return -ENOMEM;
	memcpy(copy, block_node, n_blocks * sizeof(*copy));
	free(w->block_node);
	w->block_node = copy;
	w->n_blocks = n_blocks;
	w->block_size = block_size;
	return 0;
}

int
perfdata_writer_add_pmu(struct perfdata_writer *w, uint32_t type,
			const char *name)
{
	struct perfdata_pmu_map *p = realloc(w->pmus,
					     (w->n_pmus + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	w->pmus = p;
	p[w->n_pmus].type = type;
	snprintf(p[w->n_pmus].name, sizeof(p[w->n_pmus].name), "%s", name);
	w->n_pmus++;
	return 0;
}

/* Writes all of [p, p + n) at the current file position.  0 or -errno. */
static int
perfdata_w_all(int fd, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n > 0) {
		ssize_t got = write(fd, c, n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		c += got;
		n -= (size_t)got;
	}
	return 0;
}

static int
perfdata_w_flush(struct perfdata_writer *w)
{
	int ret;

	if (w->error)
		return w->error;
	ret = perfdata_w_all(w->fd, w->buf, w->buf_len);
	w->buf_len = 0;
	if (ret < 0)
		w->error = ret;
	return ret;
}

static bool
perfdata_w_wanted(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return true;
	default:
		return false;
	}
}

/* The layout of a host-order record's event, for the swap; NULL when its
 * id is not listed. */
static const struct record_layout *
perfdata_w_layout(const struct perfdata_writer *w,
		  const struct perf_event_header *hdr)
{
	uint64_t id;
	int idx;

	if (w->n_events == 1)
		return &w->events[0].layout;
	if (record_identifier(hdr, &id) < 0)
		return NULL;
	idx = perfdata_w_find_id(w, id);
	return idx < 0 ? NULL : &w->events[idx].layout;
}

int
perfdata_writer_write(struct perfdata_writer *w,
		      const struct perf_event_header *hdr)
{
	const void *rec = hdr;

	if (w->error)
		return w->error;
	if (!perfdata_w_wanted(hdr->type) || hdr->size < sizeof(*hdr)) {
		w->stats.skipped++;
		return 0;
	}
	if (w->opts.swap) {
		struct perf_event_header *copy = (void *)w->scratch;

		memcpy(copy, hdr, hdr->size);
		if (perfdata_swap_body(copy, perfdata_w_layout(w, hdr),
				       false) < 0) {
			w->stats.skipped++;
			return 0;
		}
		perfdata_swap_header(copy);
		rec = copy;
	}
	if (w->buf_len + hdr->size > PERFDATA_WBUF && perfdata_w_flush(w) < 0)
		return w->error;
	memcpy(w->buf + w->buf_len, rec, hdr->size);
	w->buf_len += hdr->size;
	w->stats.records++;
	w->stats.samples += hdr->type == PERF_RECORD_SAMPLE;
	w->stats.bytes += hdr->size;
	return 0;
}

/* EVENT_DESC: u32 nr; u32 attr_size; { attr; u32 nr_ids; name; ids }. */
static void
perfdata_w_event_desc(struct perfdata_writer *w, struct perfdata_bytes *b)
{
	perfdata_put_u32(b, (uint32_t)w->n_events);
	perfdata_put_u32(b, PERFDATA_ATTR_SIZE_MAX_WRITE);
	for (size_t i = 0; i < w->n_events; i++) {
		const struct perfdata_wevent *ev = &w->events[i];
		unsigned char attr[PERFDATA_ATTR_SIZE_MAX_WRITE];

		memcpy(attr, ev->attr, sizeof(attr));
		if (b->swap)
			perfdata_swap_attr(attr, sizeof(attr));
		perfdata_put_bytes(b, attr, sizeof(attr));
		perfdata_put_u32(b, (uint32_t)ev->n_ids);
		perfdata_put_string(b, ev->name);
		for (size_t k = 0; k < ev->n_ids; k++)
			perfdata_put_u64(b, ev->ids[k]);
	}
}

static bool
perfdata_w_dynamic_types(const struct perfdata_writer *w)
{
	for (size_t i = 0; i < w->n_events; i++) {
		const struct perf_event_attr *a = (const void *)w->events[i].attr;

		if (a->type >= PERF_TYPE_MAX)
			return true;
	}
	return false;
}

/* TRACING_DATA when an event is a tracepoint: perf cannot read its
 * samples without the format.  Left out when tracefs is not readable. */
static bool
perfdata_w_tracing(struct perfdata_writer *w, struct perfdata_bytes *body)
{
	const char *names[PERFDATA_MAX_WEVENTS];
	size_t n = 0;

	for (size_t i = 0; i < w->n_events; i++) {
		const struct perf_event_attr *a = (const void *)w->events[i].attr;

		if (a->type == PERF_TYPE_TRACEPOINT)
			names[n++] = w->events[i].name;
	}
	return n && perfdata_featw_tracing(body, names, n) == 0;
}

/*
 * One feature body into `body` (file order); false when the feature has
 * nothing to say and is left out.
 */
static bool
perfdata_w_feature(struct perfdata_writer *w, unsigned bit,
		   struct perfdata_bytes *body)
{
	struct perfdata_pmu_map *pmus = NULL;
	struct utsname un;
	char version[64];
	int n;

	switch (bit) {
	case PERFDATA_FEAT_TRACING_DATA:
		return perfdata_w_tracing(w, body);
	case PERFDATA_FEAT_HOSTNAME:
	case PERFDATA_FEAT_OSRELEASE:
	case PERFDATA_FEAT_ARCH:
		if (uname(&un) < 0)
			memset(&un, 0, sizeof(un));
		perfdata_put_string(body, bit == PERFDATA_FEAT_HOSTNAME ?
				    un.nodename : bit == PERFDATA_FEAT_ARCH ?
				    un.machine : un.release);
		return true;
	case PERFDATA_FEAT_VERSION:
		snprintf(version, sizeof(version), "memtop %s",
			 MEMTOP_VERSION);
		perfdata_put_string(body, version);
		return true;
	case PERFDATA_FEAT_NRCPUS:
		if (!w->opts.topo)
			return false;
		perfdata_featw_nrcpus(body, w->opts.topo);
		return true;
	case PERFDATA_FEAT_EVENT_DESC:
		perfdata_w_event_desc(w, body);
		return true;
	case PERFDATA_FEAT_NUMA_TOPOLOGY:
		if (!w->opts.topo)
			return false;
		perfdata_featw_numa(body, w->opts.topo);
		return true;
	case PERFDATA_FEAT_PMU_MAPPINGS:
		if (w->n_pmus) {
			perfdata_featw_pmus(body, w->pmus, w->n_pmus);
			return true;
		}
		if (!w->opts.sysfs_features || !perfdata_w_dynamic_types(w))
			return false;
		n = perfdata_featw_pmus_sysfs(&pmus);
		if (n > 0)
			perfdata_featw_pmus(body, pmus, (size_t)n);
		free(pmus);
		return n > 0;
	case PERFDATA_FEAT_MEM_TOPOLOGY:
		if (!w->n_blocks && w->opts.sysfs_features)
			perfdata_featw_mem_sysfs(&w->block_size,
						 &w->block_node, &w->n_blocks);
		return perfdata_featw_mem(body, w->block_size, w->block_node,
					  w->n_blocks);
	default:
		return false;
	}
}

static const unsigned perfdata_w_features[] = {
	PERFDATA_FEAT_TRACING_DATA, PERFDATA_FEAT_HOSTNAME, PERFDATA_FEAT_OSRELEASE,
	PERFDATA_FEAT_VERSION, PERFDATA_FEAT_ARCH, PERFDATA_FEAT_NRCPUS,
	PERFDATA_FEAT_EVENT_DESC, PERFDATA_FEAT_NUMA_TOPOLOGY,
	PERFDATA_FEAT_PMU_MAPPINGS, PERFDATA_FEAT_MEM_TOPOLOGY,
};

#define PERFDATA_W_N_FEATURES \
	ARRAY_SIZE(perfdata_w_features)

/*
 * Everything after the data section, as one buffer: feature index and
 * bodies, attrs, ids.  Fills the header's sections and feature bits.
 */
static int
perfdata_w_trailer(struct perfdata_writer *w, struct perfdata_bytes *out,
		   struct perfdata_file_header *h)
{
	struct perfdata_bytes bodies[PERFDATA_W_N_FEATURES];
	bool have[PERFDATA_W_N_FEATURES];
	uint64_t base = h->data.offset + h->data.size, off;
	size_t n_feat = 0;
	int ret = 0;

	memset(bodies, 0, sizeof(bodies));
	for (size_t i = 0; i < PERFDATA_W_N_FEATURES; i++) {
		bodies[i].swap = w->opts.swap;
		have[i] = perfdata_w_feature(w, perfdata_w_features[i],
					     &bodies[i]);
		n_feat += have[i];
		if (have[i])
			h->features[perfdata_w_features[i] / 64] |=
				UINT64_C(1) << (perfdata_w_features[i] % 64);
	}
	/* Index (ascending bits: the table is in bit order), bodies. */
	off = base + 16 * n_feat;
	for (size_t i = 0; i < PERFDATA_W_N_FEATURES; i++) {
		if (!have[i])
			continue;
		perfdata_put_u64(out, off);
		perfdata_put_u64(out, bodies[i].len);
		off += bodies[i].len;
	}
	for (size_t i = 0; i < PERFDATA_W_N_FEATURES; i++) {
		if (have[i])
			perfdata_put_bytes(out, bodies[i].p, bodies[i].len);
		ret |= bodies[i].oom;
		perfdata_bytes_fini(&bodies[i]);
	}

	/* attrs, then each event's ids after all of them. */
	h->attr_size = PERFDATA_ATTR_SIZE_MAX_WRITE + 16;
	h->attrs.offset = base + out->len;
	h->attrs.size = h->attr_size * w->n_events;
	off = h->attrs.offset + h->attrs.size;
	for (size_t i = 0; i < w->n_events; i++) {
		unsigned char attr[PERFDATA_ATTR_SIZE_MAX_WRITE];

		memcpy(attr, w->events[i].attr, sizeof(attr));
		if (w->opts.swap)
			perfdata_swap_attr(attr, sizeof(attr));
		perfdata_put_bytes(out, attr, sizeof(attr));
		perfdata_put_u64(out, off);
		perfdata_put_u64(out, 8 * (uint64_t)w->events[i].n_ids);
		off += 8 * (uint64_t)w->events[i].n_ids;
	}
	for (size_t i = 0; i < w->n_events; i++)
		for (size_t k = 0; k < w->events[i].n_ids; k++)
			perfdata_put_u64(out, w->events[i].ids[k]);
	return ret || out->oom ? -ENOMEM : 0;
}

static void
perfdata_w_header_bytes(const struct perfdata_file_header *h, bool swap,
			unsigned char out[PERFDATA_HEADER_SIZE])
{
	struct perfdata_bytes b = { .swap = swap };

	perfdata_put_bytes(&b, "PERFILE2", 8);
	perfdata_put_u64(&b, PERFDATA_HEADER_SIZE);
	perfdata_put_u64(&b, h->attr_size);
	perfdata_put_u64(&b, h->attrs.offset);
	perfdata_put_u64(&b, h->attrs.size);
	perfdata_put_u64(&b, h->data.offset);
	perfdata_put_u64(&b, h->data.size);
	perfdata_put_u64(&b, 0);
	perfdata_put_u64(&b, 0);
	for (int i = 0; i < 4; i++)
		perfdata_put_u64(&b, h->features[i]);
	if (b.oom || b.len != PERFDATA_HEADER_SIZE) {
		memset(out, 0, PERFDATA_HEADER_SIZE);
	} else {
		memcpy(out, b.p, PERFDATA_HEADER_SIZE);
		/* The magic is bytes, and its swapped form is the signal. */
		if (swap)
			for (int i = 0; i < 8; i++)
				out[i] = (unsigned char)"2ELIFREP"[i];
	}
	perfdata_bytes_fini(&b);
}

int
perfdata_writer_close(struct perfdata_writer *w, char *err, size_t errlen)
{
	struct perfdata_bytes trailer = { .swap = w->opts.swap };
	struct perfdata_file_header h;
	unsigned char hbytes[PERFDATA_HEADER_SIZE];
	int ret;

	if (w->fd < 0)
		return perfdata_w_fail(err, errlen, -EBADF, "close");
	ret = perfdata_w_flush(w);
	if (ret < 0) {
		perfdata_w_fail(err, errlen, ret, "write");
		goto out_close;
	}
	memset(&h, 0, sizeof(h));
	h.data.offset = PERFDATA_HEADER_SIZE;
	h.data.size = w->stats.bytes;
	ret = perfdata_w_trailer(w, &trailer, &h);
	if (ret == 0)
		ret = perfdata_w_all(w->fd, trailer.p, trailer.len);
	if (ret == 0) {
		perfdata_w_header_bytes(&h, w->opts.swap, hbytes);
		if (pwrite(w->fd, hbytes, sizeof(hbytes), 0) !=
		    (ssize_t)sizeof(hbytes))
			ret = errno ? -errno : -EIO;
	}
	if (ret < 0)
		perfdata_w_fail(err, errlen, ret, "write");
out_close:
	perfdata_bytes_fini(&trailer);
	if (close(w->fd) < 0 && ret == 0)
		ret = perfdata_w_fail(err, errlen, -errno, "close");
	w->fd = -1;
	return ret;
}

void
perfdata_writer_free(struct perfdata_writer *w)
{
	if (!w)
		return;
	/* Never closed: the header was never written, so no reader would
	 * take the file; do not leave it behind. */
	if (w->fd >= 0) {
		close(w->fd);
		unlink(w->path);
	}
	for (size_t i = 0; i < w->n_events; i++)
		free(w->events[i].ids);
	free(w->id_keys);
	free(w->id_vals);
	free(w->block_node);
	free(w->pmus);
	free(w->buf);
	free(w->path);
	free(w);
}

const struct perfdata_writer_stats *
perfdata_writer_stats(const struct perfdata_writer *w)
{
	return &w->stats;
}
