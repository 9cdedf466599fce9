#include "config.h"

/*
 * zstd decoding of perf.data compressed records.  See perfdata_zstd.h.
 *
 * buf[head, tail) holds decompressed bytes not yet handed out; it is
 * compacted before each decompression step, and it is larger than any
 * record, so a record always fits once enough output exists.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "perfdata_zstd.h"

#define PERFDATA_ZSTD_BUF	(256u * 1024)
/* Per compressed record when the file gives no mmap_len, and the cap. */
#define PERFDATA_ZSTD_REC_MIN	(1u << 20)
#define PERFDATA_ZSTD_REC_MAX	(64u << 20)
/* Whole file: this much plus RATIO times the compressed input. */
#define PERFDATA_ZSTD_BASE	(16u << 20)
#define PERFDATA_ZSTD_RATIO	256u

struct perfdata_zstd {
	ZSTD_DCtx *dctx;
	unsigned char *buf;
	size_t head;
	size_t tail;
	const unsigned char *in;
	size_t in_len;
	size_t in_pos;
	uint64_t rec_cap;	/* output allowed per compressed record */
	uint64_t rec_out;	/* output of the current one */
	uint64_t total_in;
	uint64_t total_out;
	/* The last step filled its output: zstd may hold more for the same
	 * input, so the payload is not used up yet. */
	bool more;
};

int
perfdata_zstd_new(struct perfdata_zstd **out, uint64_t mmap_len)
{
	struct perfdata_zstd *z = calloc(1, sizeof(*z));

	if (!z)
		return -ENOMEM;
	z->dctx = ZSTD_createDCtx();
	z->buf = malloc(PERFDATA_ZSTD_BUF);
	if (!z->dctx || !z->buf) {
		perfdata_zstd_free(z);
		return -ENOMEM;
	}
	z->rec_cap = mmap_len < PERFDATA_ZSTD_REC_MIN ? PERFDATA_ZSTD_REC_MIN :
		     mmap_len > PERFDATA_ZSTD_REC_MAX ? PERFDATA_ZSTD_REC_MAX :
		     mmap_len;
	*out = z;
	return 0;
}

void
perfdata_zstd_free(struct perfdata_zstd *z)
{
	if (!z)
		return;
	ZSTD_freeDCtx(z->dctx);
	free(z->buf);
	free(z);
}

void
perfdata_zstd_feed(struct perfdata_zstd *z, const void *in, size_t len)
{
	z->in = in;
	z->in_len = len;
	z->in_pos = 0;
	z->rec_out = 0;
	z->more = false;
	z->total_in += len;
}

/* Size of the record starting at buf[head], or 0 when under 8 bytes. */
static size_t
perfdata_zstd_rec_size(const struct perfdata_zstd *z, bool swap)
{
	uint16_t size;

	if (z->tail - z->head < 8)
		return 0;
	memcpy(&size, z->buf + z->head + 6, sizeof(size));
	return swap ? __builtin_bswap16(size) : size;
}

static int
perfdata_zstd_step(struct perfdata_zstd *z, char *err, size_t errlen)
{
	uint64_t allowed = PERFDATA_ZSTD_BASE +
			   PERFDATA_ZSTD_RATIO * z->total_in;
	ZSTD_outBuffer o;
	ZSTD_inBuffer i = { z->in, z->in_len, z->in_pos };
	size_t room, ret;

	if (z->head > 0) {
		memmove(z->buf, z->buf + z->head, z->tail - z->head);
		z->tail -= z->head;
		z->head = 0;
	}
	room = PERFDATA_ZSTD_BUF - z->tail;
	if (room > z->rec_cap - z->rec_out)
		room = (size_t)(z->rec_cap - z->rec_out);
	if (room > allowed - z->total_out)
		room = (size_t)(allowed - z->total_out);
	if (room == 0) {
		snprintf(err, errlen, "compressed data expands beyond %llu "
			 "bytes (corrupt or hostile)",
			 (unsigned long long)(z->rec_out < z->rec_cap ?
					      allowed : z->rec_cap));
		return -EPROTO;
	}
	o.dst = z->buf + z->tail;
	o.size = room;
	o.pos = 0;
	ret = ZSTD_decompressStream(z->dctx, &o, &i);
	if (ZSTD_isError(ret)) {
		snprintf(err, errlen, "zstd: %s", ZSTD_getErrorName(ret));
		return -EPROTO;
	}
	if (o.pos == 0 && i.pos == z->in_pos && z->in_pos < z->in_len) {
		snprintf(err, errlen, "zstd: no progress on compressed data");
		return -EPROTO;
	}
	z->tail += o.pos;
	z->rec_out += o.pos;
	z->total_out += o.pos;
	z->in_pos = i.pos;
	z->more = o.pos == o.size;
	return 0;
}

int
perfdata_zstd_next(struct perfdata_zstd *z, void *out, bool swap, char *err,
		   size_t errlen)
{
	for (;;) {
		size_t size = perfdata_zstd_rec_size(z, swap);
		int ret;

		if (size != 0 && size < 8) {
			snprintf(err, errlen, "decompressed record of size "
				 "%zu", size);
			return -EPROTO;
		}
		if (size != 0 && size <= z->tail - z->head) {
			memcpy(out, z->buf + z->head, size);
			z->head += size;
			return 1;
		}
		if (z->in_pos >= z->in_len && !z->more)
			return 0;
		ret = perfdata_zstd_step(z, err, errlen);
		if (ret < 0)
			return ret;
	}
}

size_t
perfdata_zstd_pending(const struct perfdata_zstd *z)
{
	return z ? z->tail - z->head : 0;
}

uint64_t
perfdata_zstd_out_bytes(const struct perfdata_zstd *z)
{
	return z ? z->total_out : 0;
}
