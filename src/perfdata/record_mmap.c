/*
 * Any thread.  See record_mmap.h.  The layouts are those of struct
 * perf_event_mmap_event in the kernel's perf_event_mmap_output() (kept
 * apart from record.c, which decodes samples).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "record_mmap.h"

int
record_parse_mmap(const struct perf_event_header *hdr,
		  struct record_mmap *out)
{
	const unsigned char *rec = (const unsigned char *)hdr;
	const unsigned char *body = rec + sizeof(*hdr);
	size_t fixed, room, len;

	memset(out, 0, sizeof(*out));
	if (hdr->type == PERF_RECORD_MMAP)
		fixed = RECORD_MMAP_BODY;
	else if (hdr->type == PERF_RECORD_MMAP2)
		fixed = RECORD_MMAP2_BODY;
	else
		return -EINVAL;
	if (hdr->size < sizeof(*hdr) + fixed + 8)
		return -EINVAL;
	memcpy(&out->pid, body, 4);
	memcpy(&out->tid, body + 4, 4);
	memcpy(&out->addr, body + 8, 8);
	memcpy(&out->len, body + 16, 8);
	memcpy(&out->pgoff, body + 24, 8);
	if (hdr->type == PERF_RECORD_MMAP2) {
		out->mmap2 = true;
		if (hdr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			out->has_build_id = true;
			out->build_id_size = body[32];
			if (out->build_id_size > RECORD_BUILD_ID_MAX)
				return -EINVAL;
			memcpy(out->build_id, body + 36, out->build_id_size);
		} else {
			memcpy(&out->maj, body + 32, 4);
			memcpy(&out->min, body + 36, 4);
			memcpy(&out->ino, body + 40, 8);
			memcpy(&out->ino_generation, body + 48, 8);
		}
		memcpy(&out->prot, body + 56, 4);
		memcpy(&out->flags, body + 60, 4);
	} else {
		/* MMAP says only whether the mapping executes. */
		out->prot = PROT_READ;
		if (!(hdr->misc & PERF_RECORD_MISC_MMAP_DATA))
			out->prot |= PROT_EXEC;
		out->flags = MAP_PRIVATE;
	}
	out->exec = (out->prot & PROT_EXEC) != 0;
	room = hdr->size - sizeof(*hdr) - fixed;
	out->filename = (const char *)body + fixed;
	for (len = 0; len < room && out->filename[len] != '\0'; len++)
		;
	if (len == room)
		return -EINVAL;
	out->filename_len = len;
	/* The name is padded to 8 bytes, its NUL included. */
	out->body_end = sizeof(*hdr) + fixed + ((len + 1 + 7) & ~(size_t)7);
	if (out->body_end > hdr->size)
		return -EINVAL;
	return 0;
}

size_t
record_mmap2_size(const char *name, size_t tlen)
{
	return sizeof(struct perf_event_header) + RECORD_MMAP2_BODY +
	       ((strlen(name) + 1 + 7) & ~(size_t)7) + tlen;
}

size_t
record_build_mmap2(void *buf, const struct record_mmap *m, const char *name,
		   const void *trailer, size_t tlen)
{
	size_t size = record_mmap2_size(name, tlen), nl = strlen(name);
	struct perf_event_header *hdr = buf;
	unsigned char *body = (unsigned char *)buf + sizeof(*hdr);
	size_t pad = (nl + 1 + 7) & ~(size_t)7;

	if (size > UINT16_MAX)
		return 0;
	memset(buf, 0, size);
	hdr->type = PERF_RECORD_MMAP2;
	hdr->misc = PERF_RECORD_MISC_USER;
	if (!m->exec)
		hdr->misc |= PERF_RECORD_MISC_MMAP_DATA;
	hdr->size = (uint16_t)size;
	memcpy(body, &m->pid, 4);
	memcpy(body + 4, &m->tid, 4);
	memcpy(body + 8, &m->addr, 8);
	memcpy(body + 16, &m->len, 8);
	memcpy(body + 24, &m->pgoff, 8);
	if (m->has_build_id) {
		hdr->misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		body[32] = m->build_id_size;
		memcpy(body + 36, m->build_id, m->build_id_size);
	} else {
		memcpy(body + 32, &m->maj, 4);
		memcpy(body + 36, &m->min, 4);
		memcpy(body + 40, &m->ino, 8);
		memcpy(body + 48, &m->ino_generation, 8);
	}
	memcpy(body + 56, &m->prot, 4);
	memcpy(body + 60, &m->flags, 4);
	memcpy(body + RECORD_MMAP2_BODY, name, nl);
	if (tlen)
		memcpy(body + RECORD_MMAP2_BODY + pad, trailer, tlen);
	return size;
}
