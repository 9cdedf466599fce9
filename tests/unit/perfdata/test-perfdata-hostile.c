#include "config.h"

/*
 * perf.data reader against hostile inputs: every prefix of the reference
 * file, bad counts and offsets in its header, flipped bytes, ambiguous
 * events.  Each must give an error (or a harmless read), never a crash or
 * an allocation the input does not justify.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base.h"
#include "perfdata-build.h"
#include "perfdata_read.h"
#include "testlib.h"

/* Reads all of an image; returns the first error or 0. */
static int
read_all(const void *p, size_t len)
{
	struct perfdata_reader *r;
	struct perfdata_record rec;
	char err[256];
	int ret;

	ret = perfdata_reader_open_mem(&r, p, len, err, sizeof(err));
	if (ret < 0) {
		check(err[0] != '\0' && strchr(err, '\n') == NULL);
		return ret;
	}
	while ((ret = perfdata_reader_next(r, &rec, err, sizeof(err))) == 1)
		;
	if (ret < 0)
		check(err[0] != '\0' && strchr(err, '\n') == NULL);
	perfdata_reader_free(r);
	return ret;
}

static unsigned char *
load(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *p;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st) < 0) {
		if (f)
			fclose(f);
		return NULL;
	}
	p = malloc((size_t)st.st_size + 1);
	*len = fread(p, 1, (size_t)st.st_size, f);
	fclose(f);
	return p;
}

static void
poke_u64(unsigned char *img, size_t off, uint64_t v)
{
	memcpy(img + off, &v, 8);
}

static void
test_hostile(void)
{
	unsigned char *img, *copy;
	char path[256];
	size_t len, prefix_ok = 0;

	path_in_tmp(path, sizeof(path), "native.data");
	write_file(path, false);
	img = load(path, &len);
	check(img != NULL);
	if (!img)
		return;
	check_eq_i64(read_all(img, len), 0);
	/* Every strict prefix fails cleanly (attrs and features are at the
	 * end, the data section's bounds are in the header). */
	for (size_t n = 0; n < len; n++)
		prefix_ok += read_all(img, n) == 0;
	check_eq_u64(prefix_ok, 0);

	copy = malloc(len);
	/* Header fields. */
	static const struct {
		size_t off;
		uint64_t v;
	} pokes[] = {
		{ 8, 105 },			/* header size */
		{ 16, 0 },			/* attr_size */
		{ 16, UINT64_MAX },
		{ 24, UINT64_MAX - 8 },		/* attrs offset overflow */
		{ 32, 7 },			/* attrs size not a multiple */
		{ 32, 0 },			/* no attrs */
		{ 40, UINT64_MAX - 4 },		/* data offset */
		{ 48, 0 },			/* data size 0 */
		{ 48, UINT64_MAX },
		{ 72, UINT64_MAX },		/* every feature bit */
	};
	for (size_t i = 0; i < ARRAY_SIZE(pokes); i++) {
		memcpy(copy, img, len);
		poke_u64(copy, pokes[i].off, pokes[i].v);
		check(read_all(copy, len) < 0);
	}
	/* First record's size: 0, and past the data. */
	memcpy(copy, img, len);
	copy[104 + 6] = 0;
	copy[104 + 7] = 0;
	check_eq_i64(read_all(copy, len), -EPROTO);
	memcpy(copy, img, len);
	copy[104 + 6] = 0xf8;
	copy[104 + 7] = 0xff;
	check_eq_i64(read_all(copy, len), -EPROTO);
	/* Version 1 and garbage magic. */
	memcpy(copy, img, len);
	memcpy(copy, "PERFFILE", 8);
	check_eq_i64(read_all(copy, len), -EINVAL);
	memcpy(copy, "GARBAGE!", 8);
	check_eq_i64(read_all(copy, len), -EINVAL);
	/* Flipping every byte of the feature and attr area, one at a time,
	 * never crashes (results vary: most flips are harmless). */
	for (size_t off = 104; off < len; off++) {
		memcpy(copy, img, len);
		copy[off] ^= 0xff;
		read_all(copy, len);
	}
	free(copy);
	free(img);
}

/* Two events with different sample_type and no IDENTIFIER are refused. */
static void
test_ambiguous(void)
{
	struct perf_event_attr a = mk_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID,
					   1);
	struct perf_event_attr b = mk_attr(PERF_SAMPLE_IP | PERF_SAMPLE_ADDR,
					   2);
	struct buf *buf = calloc(1, sizeof(*buf));
	struct perfdata_reader *r;
	char err[256];

	buf_put(buf, "PERFILE2", 8);
	buf_u64(buf, 16);
	buf_hdr(buf, PERFDATA_REC_HEADER_ATTR, 8 + sizeof(a));
	buf_put(buf, &a, sizeof(a));
	buf_hdr(buf, PERFDATA_REC_HEADER_ATTR, 8 + sizeof(b));
	buf_put(buf, &b, sizeof(b));
	check_eq_i64(perfdata_reader_open_mem(&r, buf->p, buf->len, err,
					      sizeof(err)), -EPROTO);
	check(strstr(err, "IDENTIFIER") != NULL);
	free(buf);
}

int
main(void)
{
	tmpdir_make();
	test_hostile();
	test_ambiguous();
	tmpdir_remove();
	return test_result();
}
