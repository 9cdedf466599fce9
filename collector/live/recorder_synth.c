/*
 * --record: what existed before the attach, as perf synthesizes it
 * (perf's synthetic COMM and MMAP2 records), so that perf report and
 * perf script on memtop's file name what memtop names: a COMM per
 * thread and an MMAP2 per region of /proc/PID/maps, each with the
 * file's build id where it has one (PERF_RECORD_MISC_MMAP_BUILD_ID), which
 * the writer also lists in BUILD_ID.  Main thread, at attach (before the
 * collector starts).  See recorder.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "channel.h"
#include "maps.h"
#include "procfs.h"
#include "record_mmap.h"
#include "recorder.h"
#include "source.h"
#include "symbols.h"

struct recorder_synth {
	struct perfdata_writer *w;
	const struct source *src;
	const struct channel *ch;
	pid_t pid;
	/* The last file's build id: a file's mappings come in a row. */
	char *last_path;
	uint8_t last_id[SYMBOLS_BUILD_ID_MAX];
	int last_len;
};

/* The sample_id trailer of event 0's layout: pid, tid, the event's id,
 * time and CPU 0 (perf's synthesized records have no time either). */
static size_t
recorder_trailer(const struct recorder_synth *s, pid_t tid,
		 unsigned char *out)
{
	uint64_t st = s->src->events[0].attr.sample_type;
	uint64_t id = channel_events(s->ch)->ids[0];
	/* In the order the kernel writes them; {pid, tid} as one u64. */
	const struct { uint64_t bit, v; } f[] = {
		{ PERF_SAMPLE_TID, (uint64_t)(uint32_t)tid << 32 |
				   (uint32_t)s->pid },
		{ PERF_SAMPLE_TIME, 0 }, { PERF_SAMPLE_ID, id },
		{ PERF_SAMPLE_STREAM_ID, id }, { PERF_SAMPLE_CPU, 0 },
		{ PERF_SAMPLE_IDENTIFIER, id },
	};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (st & f[i].bit) {
			memcpy(out + n, &f[i].v, 8);
			n += 8;
		}
	return n;
}

static void
recorder_comm(pid_t tid, void *ctx)
{
	struct recorder_synth *s = ctx;
	uint64_t buf[16];
	unsigned char *b = (unsigned char *)buf;
	struct perf_event_header *hdr = (void *)buf;
	uint32_t pt[2] = { (uint32_t)s->pid, (uint32_t)tid };
	char comm[16] = { 0 };
	size_t at;

	if (procfs_comm(tid, comm, sizeof(comm)) < 0)
		return;
	memset(buf, 0, sizeof(buf));
	memcpy(b + sizeof(*hdr), pt, 8);
	memcpy(b + sizeof(*hdr) + 8, comm, 16);	/* NUL-padded to 16 */
	at = sizeof(*hdr) + 24;
	at += recorder_trailer(s, tid, b + at);
	hdr->type = PERF_RECORD_COMM;
	hdr->size = (uint16_t)at;
	recorder_record(s->w, s->src, s->ch, hdr);
}

/* The record's name of region r, as the kernel writes it. */
static const char *
recorder_map_name(const struct maps_region *r, char *buf, size_t len)
{
	switch (r->kind) {
	case MAPS_FILE:
		snprintf(buf, len, "%s%s", r->path, r->deleted ?
			 " (deleted)" : "");
		return buf;
	case MAPS_HEAP:
		return "[heap]";
	case MAPS_STACK:
		return "[stack]";
	case MAPS_NAMED:
		return r->path;
	case MAPS_SHARED_ANON:
		return "/dev/zero (deleted)";
	case MAPS_HUGETLB:
		return "/anon_hugepage (deleted)";
	default:
		return "//anon";
	}
}

static void
recorder_mmap(struct recorder_synth *s, const struct maps_region *r)
{
	static uint64_t buf[(UINT16_MAX + 1) / 8];
	unsigned char trailer[64];
	struct record_mmap m = { 0 };
	char name[4200];
	const char *nm = recorder_map_name(r, name, sizeof(name));

	m.pid = m.tid = (uint32_t)s->pid;
	m.addr = r->start;
	m.len = r->end - r->start;
	m.pgoff = r->kind == MAPS_FILE ? r->pgoff : r->start;
	m.maj = r->dev_major;
	m.min = r->dev_minor;
	m.ino = r->inode;
	m.prot = ((r->prot & MAPS_PROT_READ) ? PROT_READ : 0) |
		 ((r->prot & MAPS_PROT_WRITE) ? PROT_WRITE : 0) |
		 ((r->prot & MAPS_PROT_EXEC) ? PROT_EXEC : 0);
	m.flags = r->shared ? MAP_SHARED : MAP_PRIVATE;
	m.exec = (r->prot & MAPS_PROT_EXEC) != 0;
	if (r->kind == MAPS_FILE && !r->deleted) {
		if (!s->last_path || strcmp(s->last_path, r->path) != 0) {
			free(s->last_path);
			s->last_path = strdup(r->path);
			s->last_len = symbols_path_build_id(s->pid, r->path,
							    r->inode,
							    s->last_id);
		}
		if (s->last_len > 0) {
			m.has_build_id = true;
			m.build_id_size = (uint8_t)s->last_len;
			memcpy(m.build_id, s->last_id, (size_t)s->last_len);
		}
	}
	if (record_build_mmap2(buf, &m, nm, trailer,
			       recorder_trailer(s, s->pid, trailer)) > 0)
		recorder_record(s->w, s->src, s->ch, (void *)buf);
}

void
recorder_synthesize(struct perfdata_writer *w, const struct source *src,
		    const struct channel *ch, pid_t pid)
{
	struct recorder_synth s = { .w = w, .src = src, .ch = ch,
				    .pid = pid };
	struct maps *m;

	if (!w || !ch)
		return;
	procfs_tasks(pid, recorder_comm, &s);
	m = maps_new(pid);
	if (m && maps_refresh(m) >= 0)
		for (size_t i = 0; i < maps_count(m); i++)
			recorder_mmap(&s, maps_at(m, i));
	maps_free(m);
	free(s.last_path);
}

struct recorder_all {
	struct perfdata_writer *w;
	const struct source *src;
	const struct channel *ch;
};

static void
recorder_one(pid_t pid, void *ctx)
{
	struct recorder_all *a = ctx;

	recorder_synthesize(a->w, a->src, a->ch, pid);
}

int
recorder_synthesize_all(struct perfdata_writer *w, const struct source *src,
			const struct channel *ch)
{
	struct recorder_all a = { .w = w, .src = src, .ch = ch };

	if (!w || !ch)
		return 0;
	return procfs_pids(recorder_one, &a);
}
