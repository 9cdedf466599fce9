#include "config.h"

/* See record-build.h. */

#include <errno.h>
#include <string.h>

#include "record-build.h"
#include "testlib.h"

struct perf_event_header *
rb_hdr(struct rb *b)
{
	return (struct perf_event_header *)b->buf;
}

void
rb_begin(struct rb *b, uint32_t type)
{
	memset(b, 0, sizeof(*b));
	rb_hdr(b)->type = type;
	b->len = sizeof(struct perf_event_header);
}

void
rb_bytes(struct rb *b, const void *p, size_t len)
{
	memcpy((unsigned char *)b->buf + b->len, p, len);
	b->len += len;
}

void
rb_u64(struct rb *b, uint64_t v)
{
	rb_bytes(b, &v, sizeof(v));
}

void
rb_u32(struct rb *b, uint32_t v)
{
	rb_bytes(b, &v, sizeof(v));
}

const struct perf_event_header *
rb_end(struct rb *b)
{
	rb_hdr(b)->size = (uint16_t)b->len;
	return rb_hdr(b);
}

void
check_size_exact(const struct record_layout *l, struct rb *b)
{
	struct perf_event_header *hdr = rb_hdr(b);
	struct record_sample s;
	uint16_t full = hdr->size, sz;
	size_t bad = 0;

	for (sz = 0; sz < full; sz += 4) {
		hdr->size = sz;
		memset(&s, 0xa5, sizeof(s));
		if (record_parse_sample(l, hdr, &s) != -EINVAL || s.present)
			bad++;
	}
	memset((unsigned char *)b->buf + full, 0, 8);
	hdr->size = (uint16_t)(full + 8);
	if (record_parse_sample(l, hdr, &s) != -EINVAL)
		bad++;
	hdr->size = full;
	check_eq_u64(bad, 0);
	check_eq_i64(record_parse_sample(l, hdr, &s), 0);
}
