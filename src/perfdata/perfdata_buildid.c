/*
 * HEADER_BUILD_ID, the feature that lists the build id of each file a
 * capture's samples touched: read (perfdata_feat.c hands it here) and
 * written (perfdata_featw.c).  Owned by whoever owns the reader or the
 * writer.
 *
 * Each entry is { struct perf_event_header; s32 pid; u8 build_id[20];
 * u8 size; u8 pad[3]; char filename[] } with header.size its length;
 * size is valid when header.misc has PERF_RECORD_MISC_BUILD_ID_SIZE,
 * else the id is 20 bytes (perf's struct perf_record_header_build_id).
 */
#include "config.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata_feat.h"
#include "perfdata_featw.h"
#include "perfdata_swap.h"
#include "perfdata_write_int.h"
#include "record_mmap.h"

#define BUILDID_MISC_SIZE	(1u << 15)	/* PERF_RECORD_MISC_BUILD_ID_SIZE */
#define BUILDID_FIXED		(8 + 4 + 24)	/* header, pid, id */
#define BUILDID_NAME_ALIGN	64		/* perf's NAME_ALIGN */

void
perfdata_free_build_ids(struct perfdata_info *info)
{
	for (size_t i = 0; i < info->n_build_ids; i++)
		free(info->build_ids[i].path);
	free(info->build_ids);
	info->build_ids = NULL;
	info->n_build_ids = 0;
}

/* header.misc and header.size of an entry: two u16s after the u32
 * type, in the file's byte order. */
static void
perfdata_build_id_head(struct perfdata_cursor *c, uint16_t *misc,
		       uint32_t *size)
{
	const unsigned char *h = perfdata_get_bytes(c, 8);

	*misc = 0;
	*size = 0;
	if (!h)
		return;
	if (c->swap) {
		*misc = (uint16_t)(h[4] << 8 | h[5]);
		*size = (uint32_t)(h[6] << 8 | h[7]);
	} else {
		*misc = (uint16_t)(h[5] << 8 | h[4]);
		*size = (uint32_t)(h[7] << 8 | h[6]);
	}
}

/* One entry at c; 0 or -errno (-EINVAL: malformed). */
static int
perfdata_parse_build_id(struct perfdata_info *info, struct perfdata_cursor *c)
{
	struct perfdata_build_id *b, *nb;
	const unsigned char *id, *name;
	size_t name_len, room;
	uint32_t size;
	uint16_t misc;
	int32_t pid;

	perfdata_build_id_head(c, &misc, &size);
	if (size < BUILDID_FIXED || size - 8 > perfdata_cursor_left(c))
		return -EINVAL;
	pid = (int32_t)perfdata_get_u32(c);
	id = perfdata_get_bytes(c, 24);
	room = size - BUILDID_FIXED;
	name = perfdata_get_bytes(c, room);
	if (!id || (room && !name))
		return -EINVAL;
	for (name_len = 0; name_len < room && name[name_len]; name_len++)
		;
	if (name_len == 0 || name_len == room)
		return 0;		/* no name, or not terminated */
	nb = realloc(info->build_ids, (info->n_build_ids + 1) * sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	info->build_ids = nb;
	b = &nb[info->n_build_ids];
	memset(b, 0, sizeof(*b));
	b->pid = pid;
	b->size = (misc & BUILDID_MISC_SIZE) ? id[20] : 20;
	if (b->size == 0 || b->size > 20)
		return 0;
	memcpy(b->id, id, b->size);
	b->path = strndup((const char *)name, name_len);
	if (!b->path)
		return -ENOMEM;
	info->n_build_ids++;
	return 0;
}

int
perfdata_parse_build_ids(struct perfdata_info *info,
			 struct perfdata_cursor *c)
{
	perfdata_free_build_ids(info);
	while (perfdata_cursor_left(c) >= BUILDID_FIXED) {
		int ret = perfdata_parse_build_id(info, c);

		if (ret < 0)
			return ret;
	}
	return 0;
}

void
perfdata_featw_build_ids(struct perfdata_bytes *b,
			 const struct perfdata_build_id *ids, size_t n)
{
	static const unsigned char zero[BUILDID_NAME_ALIGN];

	for (size_t i = 0; i < n; i++) {
		size_t nl = strlen(ids[i].path) + 1;
		size_t padded = (nl + BUILDID_NAME_ALIGN - 1) &
				~(size_t)(BUILDID_NAME_ALIGN - 1);
		unsigned char id[24] = { 0 };
		uint16_t misc = PERF_RECORD_MISC_USER | BUILDID_MISC_SIZE;

		/* size 0: a file known to have none (not written). */
		if (BUILDID_FIXED + padded > UINT16_MAX || ids[i].size > 20 ||
		    ids[i].size == 0)
			continue;
		memcpy(id, ids[i].id, ids[i].size);
		id[20] = ids[i].size;
		perfdata_put_u32(b, 0);		/* type: unused */
		/* misc, size: u16s; as one u32 so the swap swaps each. */
		perfdata_put_u32(b, b->swap ?
			(uint32_t)misc << 16 | (uint32_t)(BUILDID_FIXED + padded) :
			(uint32_t)(BUILDID_FIXED + padded) << 16 | misc);
		perfdata_put_u32(b, (uint32_t)ids[i].pid);
		perfdata_put_bytes(b, id, sizeof(id));
		perfdata_put_bytes(b, ids[i].path, nl);
		perfdata_put_bytes(b, zero, padded - nl);
	}
}

/* Files listed at most; past this the feature is what it holds. */
#define BUILDID_MAX_FILES 4096

bool
perfdata_writer_has_build_id(const struct perfdata_writer *w,
			     const char *path)
{
	for (size_t i = 0; i < w->n_build_ids; i++)
		if (strcmp(w->build_ids[i].path, path) == 0)
			return true;
	return false;
}

void
perfdata_writer_add_build_id(struct perfdata_writer *w, int32_t pid,
			     const char *path, const uint8_t *id, size_t size)
{
	struct perfdata_build_id *nb, *b;

	if (size > sizeof(b->id) || path[0] != '/' ||
	    w->n_build_ids == BUILDID_MAX_FILES ||
	    perfdata_writer_has_build_id(w, path))
		return;
	nb = realloc(w->build_ids, (w->n_build_ids + 1) * sizeof(*nb));
	if (!nb)
		return;		/* the feature lists fewer files */
	w->build_ids = nb;
	b = &nb[w->n_build_ids];
	memset(b, 0, sizeof(*b));
	b->pid = pid;
	b->size = (uint8_t)size;
	memcpy(b->id, id, size);
	b->path = strdup(path);
	if (b->path)
		w->n_build_ids++;
}

void
perfdata_w_note_build_id(struct perfdata_writer *w,
			 const struct perf_event_header *hdr)
{
	struct record_mmap m;
	char path[4096];

	if (!(hdr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ||
	    record_parse_mmap(hdr, &m) != 0 || !m.build_id_size ||
	    m.filename_len >= sizeof(path))
		return;
	memcpy(path, m.filename, m.filename_len + 1);
	perfdata_writer_add_build_id(w, (int32_t)m.pid, path, m.build_id,
				     m.build_id_size);
}
