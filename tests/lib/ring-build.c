#include "config.h"

/* Synthetic perf rings for the ring_drain() tests: see ring-build.h. */

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring-build.h"

uint8_t
tring_pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 131u + i * 7u + 1u);
}

int
tring_new(struct tring *t, size_t data_pages, bool kernel_41)
{
	memset(t, 0, sizeof(*t));
	t->page = (size_t)sysconf(_SC_PAGESIZE);
	t->mmap_len = (1 + data_pages) * t->page;
	t->base = mmap(NULL, t->mmap_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->base == MAP_FAILED)
		return -errno;
	t->meta = t->base;
	t->data = (unsigned char *)t->base + t->page;
	t->data_size = data_pages * t->page;
	if (kernel_41) {
		t->meta->data_offset = t->page;
		t->meta->data_size = t->data_size;
	}
	return 0;
}

void
tring_free(struct tring *t)
{
	if (t->base != NULL && t->base != MAP_FAILED)
		munmap(t->base, t->mmap_len);
	t->base = NULL;
}

void
tring_start(struct tring *t, uint64_t pos)
{
	t->head = pos;
	t->meta->data_head = pos;
	t->meta->data_tail = pos;
}

static void
tring_put(struct tring *t, uint64_t pos, const void *src, size_t len)
{
	const unsigned char *s = src;
	size_t i;

	for (i = 0; i < len; i++)
		t->data[(pos + i) & (t->data_size - 1)] = s[i];
}

uint64_t
tring_write(struct tring *t, uint32_t type, uint16_t size, uint32_t seq)
{
	struct perf_event_header hdr = { .type = type, .misc = 0,
					 .size = size };
	uint64_t pos = t->head;
	uint8_t b;
	size_t i;

	tring_put(t, pos, &hdr, sizeof(hdr));
	if (size >= 12)
		tring_put(t, pos + 8, &seq, sizeof(seq));
	for (i = 12; i < size; i++) {
		b = tring_pattern(seq, i);
		tring_put(t, pos + i, &b, 1);
	}
	t->head += size;
	return pos;
}

uint64_t
tring_write_header(struct tring *t, uint32_t type, uint16_t size,
		   uint64_t advance)
{
	struct perf_event_header hdr = { .type = type, .size = size };
	uint64_t pos = t->head;

	tring_put(t, pos, &hdr, sizeof(hdr));
	t->head += advance;
	return pos;
}

void
tring_publish(struct tring *t)
{
	__atomic_store_n(&t->meta->data_head, t->head, __ATOMIC_RELEASE);
}

bool
tring_room(const struct tring *t, size_t n)
{
	return t->head - t->meta->data_tail + n <= t->data_size;
}

void
tring_append(struct tring *t, const void *rec, size_t n)
{
	tring_put(t, t->head, rec, n);
	t->head += n;
	tring_publish(t);
}

int
seen_record(const struct perf_event_header *hdr, void *ctx)
{
	struct seen *s = ctx;
	const unsigned char *p = (const void *)hdr;
	uint32_t seq = UINT32_MAX;
	size_t i;

	if (hdr->size >= 12)
		memcpy(&seq, p + 8, sizeof(seq));
	for (i = 12; i < hdr->size; i++)
		if (p[i] != tring_pattern(seq, i)) {
			s->torn++;
			break;
		}
	if (s->r != NULL && p == s->r->scratch)
		s->copied++;
	if (s->n < SEEN_MAX) {
		s->seq[s->n] = seq;
		s->type[s->n] = (uint16_t)hdr->type;
		s->size[s->n] = hdr->size;
		s->ptr[s->n] = hdr;
	}
	s->n++;
	return s->stop_at != 0 && s->n == s->stop_at;
}

bool
in_ring(const struct ring *r, const void *p)
{
	const unsigned char *c = p;

	return c >= r->data && c < r->data + r->data_size;
}
