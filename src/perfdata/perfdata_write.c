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
#include "perfdata_feat.h"
#include "perfdata_format.h"
#include "perfdata_swap.h"
#include "perfdata_write.h"
#include "record.h"

#include "perfdata_write_int.h"

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
	ev->layout.branch_sample_type = attr->branch_sample_type;
	ev->layout.sample_regs_user = attr->sample_regs_user;
	ev->layout.sample_regs_intr = attr->sample_regs_intr;
	snprintf(ev->name, sizeof(ev->name), "%s", name ? name : "");
	return (int)w->n_events++;
}

int
perfdata_writer_add_id(struct perfdata_writer *w, size_t idx, uint64_t id)
{
	struct perfdata_wevent *ev;

	if (idx >= w->n_events || id == 0)
		return -EINVAL;
	if (u64idx_get(&w->ids, id) != U64IDX_NONE)
		return 0;
	ev = &w->events[idx];
	if (ev->n_ids == ev->cap_ids) {
		size_t cap = ev->cap_ids ? 2 * ev->cap_ids : 8;
		uint64_t *ids = realloc(ev->ids, cap * sizeof(*ids));

		if (!ids)
			return -ENOMEM;
		ev->ids = ids;
		ev->cap_ids = cap;
	}
	if (u64idx_add(&w->ids, id, (uint32_t)idx) < 0)
		return -ENOMEM;
	ev->ids[ev->n_ids++] = id;
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
	uint32_t idx;

	if (w->n_events == 1)
		return &w->events[0].layout;
	if (record_identifier(hdr, &id) < 0)
		return NULL;
	idx = u64idx_get(&w->ids, id);
	return idx == U64IDX_NONE ? NULL : &w->events[idx].layout;
}

/* Appends size bytes of one record, already in the file's byte order,
 * to the data and counts it.  0 or the write error. */
static int
perfdata_w_append(struct perfdata_writer *w, const void *rec, uint16_t size)
{
	if (w->buf_len + size > PERFDATA_WBUF && perfdata_w_flush(w) < 0)
		return w->error;
	memcpy(w->buf + w->buf_len, rec, size);
	w->buf_len += size;
	w->stats.records++;
	w->stats.bytes += size;
	return 0;
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
	if (hdr->type == PERF_RECORD_MMAP2)
		perfdata_w_note_build_id(w, hdr);
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
	if (perfdata_w_append(w, rec, hdr->size) < 0)
		return w->error;
	w->stats.samples += hdr->type == PERF_RECORD_SAMPLE;
	return 0;
}

int
perfdata_writer_round(struct perfdata_writer *w)
{
	struct perf_event_header h = {
		.type = PERFDATA_REC_FINISHED_ROUND, .size = sizeof(h)
	};

	if (w->error || w->stats.records == w->round_at)
		return w->error;
	if (w->opts.swap)
		perfdata_swap_header(&h);
	if (perfdata_w_append(w, &h, sizeof(h)) < 0)
		return w->error;
	w->round_at = w->stats.records;
	return 0;
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
	u64idx_fini(&w->ids);
	free(w->block_node);
	free(w->pmus);
	for (size_t i = 0; i < w->n_build_ids; i++)
		free(w->build_ids[i].path);
	free(w->build_ids);
	free(w->buf);
	free(w->path);
	free(w);
}

const struct perfdata_writer_stats *
perfdata_writer_stats(const struct perfdata_writer *w)
{
	return &w->stats;
}
