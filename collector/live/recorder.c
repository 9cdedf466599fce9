/* Collector thread (setup: main thread).  See recorder.h. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "channel.h"
#include "heapobjs.h"
#include "perfdata_write.h"
#include "record.h"
#include "record_mmap.h"
#include "recorder.h"
#include "source.h"
#include "symbols.h"

/* The SAMPLE fields perf_output_sample() writes before ADDR. */
#define RECORDER_BEFORE_ADDR (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | \
			      PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

/* The fixed-size SAMPLE fields perf_output_sample() writes after
 * DATA_SRC. */
#define RECORDER_AFTER_DSRC (PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_PHYS_ADDR | \
			     PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE | \
			     PERF_SAMPLE_CODE_PAGE_SIZE)

/* "Not available" in every part of a data source: what a fault says. */
#define RECORDER_DSRC_NA (PERF_MEM_S(OP, NA) | PERF_MEM_S(LVL, NA) | \
			  PERF_MEM_S(SNOOP, NA) | PERF_MEM_S(LOCK, NA) | \
			  PERF_MEM_S(TLB, NA) | PERF_MEM_S(LVLNUM, NA))

/* An event whose samples are written with an ADDR field the kernel did
 * not give them: the faults tracepoint, whose address is in its RAW
 * payload. */
static bool
recorder_adds_addr(const struct event_spec *ev)
{
	return ev->role == ROLE_FAULT_TP && ev->tp_addr_off >= 0 &&
	       !(ev->attr.sample_type & PERF_SAMPLE_ADDR);
}

/* An event whose samples are written with a DATA_SRC field ("not
 * available"), which perf report --mem-mode requires of a file: one with
 * a data address and none of the variable fields that follow DATA_SRC. */
static bool
recorder_adds_dsrc(const struct event_spec *ev)
{
	uint64_t st = ev->attr.sample_type;

	return !(st & PERF_SAMPLE_DATA_SRC) &&
	       ((st & PERF_SAMPLE_ADDR) || recorder_adds_addr(ev)) &&
	       !(st & (PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_AUX));
}

int
recorder_add_source(struct perfdata_writer *w, const struct source *src,
		    uint64_t period)
{
	for (size_t i = 0; i < src->n_events; i++) {
		struct perf_event_attr attr = src->events[i].attr;
		int ret;

		/* As source_open_event() opens it; perf reads sample_id_all
		 * to find the trailer of every non-sample record. */
		attr.size = sizeof(attr);
		attr.sample_period = period;
		attr.freq = 0;
		attr.sample_id_all = 1;
		attr.task = i == 0;
		attr.comm = i == 0;
		/* As the channels ask (source_open_event): MMAP2 of every
		 * mapping; a record's build id is marked in its misc. */
		attr.mmap = i == 0;
		attr.mmap2 = i == 0;
		attr.mmap_data = i == 0;
		attr.comm_exec = i == 0;
		attr.use_clockid = 1;
		attr.clockid = CLOCK_MONOTONIC;
		/* The data address belongs in every sample's ADDR, whatever
		 * the source (perf script -F addr, perf report --mem-mode):
		 * recorder_record() puts it there. */
		if (recorder_adds_dsrc(&src->events[i]))
			attr.sample_type |= PERF_SAMPLE_DATA_SRC;
		if (recorder_adds_addr(&src->events[i]))
			attr.sample_type |= PERF_SAMPLE_ADDR;
		ret = perfdata_writer_add_event(w, &attr,
						src->events[i].name);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0; i < src->n_alloc; i++) {
		/* As channel_open_alloc() opens them: every syscall exit of
		 * the filter sampled, no task records. */
		const struct event_spec *ev = &src->alloc[i];
		struct perf_event_attr attr = ev->attr;
		char name[64];
		int ret;

		attr.size = sizeof(attr);
		attr.sample_period = 1;
		attr.freq = 0;
		attr.sample_id_all = 1;
		attr.use_clockid = 1;
		attr.clockid = CLOCK_MONOTONIC;
		snprintf(name, sizeof(name), "%s", ev->name);
		/* A heap probe (--heap-objects) by the name replay knows it
		 * by; its entries sampled every Nth at first; config1 points
		 * into memtop (the probed file's path): nothing to keep. */
		if (ev->heap_fn != HEAP_NONE) {
			heapobjs_event_name(ev->heap_fn, ev->heap_ret, name,
					    sizeof(name));
			attr.sample_period = ev->attr.sample_period;
			attr.config1 = 0;
		}
		ret = perfdata_writer_add_event(w, &attr, name);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Inserts the u64 v at byte at of the record in buf (room for it). */
static void
recorder_insert(uint64_t *buf, size_t at, uint64_t v)
{
	unsigned char *out = (unsigned char *)buf;
	struct perf_event_header *nh = (struct perf_event_header *)buf;

	memmove(out + at + 8, out + at, nh->size - at);
	memcpy(out + at, &v, 8);
	nh->size = (uint16_t)(nh->size + 8);
}

/*
 * A faults tracepoint sample as memtop reads it: the faulting user ip
 * (from the RAW payload) in IP, in place of the kernel's, and the user
 * cpumode, so that perf resolves its data address in the process's maps
 * (perf report --mem-mode looks a data address up in the sample's
 * cpumode) and its code site as memtop does.
 */
static void
recorder_user_ip(const struct event_spec *ev, const struct record_sample *rs,
		 uint64_t *buf)
{
	struct perf_event_header *nh = (struct perf_event_header *)buf;
	uint64_t st = ev->attr.sample_type, ip = 0;

	if (!(st & PERF_SAMPLE_IP) || ev->tp_ip_off < 0 || !rs->raw ||
	    (size_t)ev->tp_ip_off + 8 > rs->raw_size)
		return;
	memcpy(&ip, (const unsigned char *)rs->raw + ev->tp_ip_off, 8);
	memcpy((unsigned char *)buf + sizeof(*nh) +
	       ((st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0), &ip, 8);
	nh->misc = (uint16_t)((nh->misc & ~PERF_RECORD_MISC_CPUMODE_MASK) |
			      PERF_RECORD_MISC_USER);
}

/*
 * A sample rewritten as the attr written by recorder_add_source() says:
 * with ADDR (a tracepoint's, from its RAW payload) in its place after
 * TIME, and DATA_SRC in its place before the fixed fields that follow
 * it.  NULL when hdr needs neither.  Collector thread only.
 */
static const struct perf_event_header *
recorder_rewrite(const struct source *src, const struct channel *ch,
		 const struct perf_event_header *hdr)
{
	static uint64_t buf[(UINT16_MAX + 1 + 16) / 8];
	struct perf_event_header *nh = (struct perf_event_header *)buf;
	const struct channel_events *evs = channel_events(ch);

	if (hdr->type != PERF_RECORD_SAMPLE)
		return NULL;
	for (size_t i = 0; i < evs->n && i < src->n_events; i++) {
		const struct event_spec *ev = &src->events[i];
		bool add_addr = recorder_adds_addr(ev);
		struct record_layout l;
		struct record_sample rs;
		uint64_t addr = 0;

		if ((!add_addr && !recorder_adds_dsrc(ev)))
			continue;
		source_layout(ev, &l);
		if (record_parse_sample(&l, hdr, &rs) < 0 ||
		    rs.identifier != evs->ids[i] ||
		    (size_t)hdr->size + 16 > UINT16_MAX)
			continue;
		memcpy(buf, hdr, hdr->size);
		if (ev->role == ROLE_FAULT_TP)
			recorder_user_ip(ev, &rs, buf);
		if (add_addr) {
			if (rs.raw && (size_t)ev->tp_addr_off + 8 <=
			    rs.raw_size)
				memcpy(&addr, (const unsigned char *)rs.raw +
				       ev->tp_addr_off, 8);
			recorder_insert(buf, sizeof(*hdr) + 8 *
				(size_t)__builtin_popcountll(l.sample_type &
					RECORDER_BEFORE_ADDR), addr);
		}
		if (recorder_adds_dsrc(ev))
			recorder_insert(buf, nh->size - 8 *
				(size_t)__builtin_popcountll(l.sample_type &
					RECORDER_AFTER_DSRC),
				RECORDER_DSRC_NA);
		return nh;
	}
	return NULL;
}

void
recorder_record_alloc(struct perfdata_writer *w, const struct source *src,
		      const struct channel *ch,
		      const struct perf_event_header *hdr)
{
	const struct event_spec *ev;
	uint64_t id;

	/* IDENTIFIER: a sample's first u64, the last of any other record's
	 * sample_id trailer. */
	if (hdr->size < sizeof(*hdr) + sizeof(id))
		return;
	memcpy(&id, hdr->type == PERF_RECORD_SAMPLE ?
		    (const unsigned char *)(hdr + 1) :
		    (const unsigned char *)hdr + hdr->size - sizeof(id),
	       sizeof(id));
	ev = channel_alloc_event(ch, id);
	if (!ev)
		return;
	perfdata_writer_add_id(w, src->n_events + (size_t)(ev - src->alloc),
			       id);
	perfdata_writer_write(w, hdr);
}

/* The build id of the file an MMAP2 names, for BUILD_ID (once per
 * file), read now: perf would read it at the end, when the file may have
 * been rebuilt. */
static void
recorder_build_id(struct perfdata_writer *w,
		  const struct perf_event_header *hdr)
{
	uint8_t id[SYMBOLS_BUILD_ID_MAX];
	struct record_mmap m;
	char path[4096];
	int len;

	if (record_parse_mmap(hdr, &m) != 0 || m.has_build_id ||
	    m.filename[0] != '/' || m.filename_len >= sizeof(path))
		return;
	memcpy(path, m.filename, m.filename_len + 1);
	if (perfdata_writer_has_build_id(w, path))
		return;
	len = symbols_path_build_id((int32_t)m.pid, path, m.ino, id);
	perfdata_writer_add_build_id(w, (int32_t)m.pid, path, id,
				     len > 0 ? (size_t)len : 0);
}

void
recorder_record(struct perfdata_writer *w, const struct source *src,
		const struct channel *ch, const struct perf_event_header *hdr)
{
	const struct channel_events *ev = channel_events(ch);
	const struct perf_event_header *with_addr;
	uint64_t task_id;

	for (size_t i = 0; i < ev->n; i++)
		if (ev->ids[i])		/* 0: not opened on this CPU */
			perfdata_writer_add_id(w, i, ev->ids[i]);
	/* The task ring's dummy event shares the first event's sample_type,
	 * so its records read as that event's. */
	if (channel_task_id(ch, &task_id))
		perfdata_writer_add_id(w, 0, task_id);
	with_addr = src ? recorder_rewrite(src, ch, hdr) : NULL;
	if (hdr->type == PERF_RECORD_MMAP2)
		recorder_build_id(w, hdr);
	perfdata_writer_write(w, with_addr ? with_addr : hdr);
}

void
recorder_round(struct perfdata_writer *w)
{
	perfdata_writer_round(w);	/* an error comes back at close */
}
