#include "config.h"

/*
 * perf.data reader: the file.  See perfdata_read.h; layouts in
 * perfdata_format.h; events in perfdata_events.c, records in
 * perfdata_records.c.
 *
 * The input is one read-only image (the mmapped file, stdin read to its
 * end, or a caller's buffer).  Every section's offset and size is checked
 * against it before anything in the section is read.
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
#include "perfdata_reader_int.h"
#include "perfdata_swap.h"

int
perfdata_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

/* [off, off + len) lies inside the image, without overflow. */
bool
perfdata_in_image(const struct perfdata_reader *r, uint64_t off,
		  uint64_t len)
{
	return off <= r->size && len <= r->size - off;
}

uint64_t
perfdata_u64_at(const struct perfdata_reader *r, uint64_t off)
{
	uint64_t v;

	memcpy(&v, r->img + off, sizeof(v));
	return perfdata_bswap64_if(v, r->swap);
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
	u64idx_fini(&r->ids);
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
