/*
 * Replay: objects named from a capture's allocation events (issue 18).
 * See replay_int.h.  Replay thread (replay_objects_on also on the main
 * thread, before it starts).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "frame.h"
#include "heapopt.h"
#include "replay_int.h"
#include "sides.h"

/*
 * The allocation event memtop --record writes beside the source
 * (collector/sources/source_alloc.c), or a perf record of it with
 * --call-graph dwarf: raw_syscalls:sys_exit by its name (a tracepoint's
 * id differs between machines) with the user registers and its payload.
 */
bool
replay_alloc_event(const struct perfdata_event *pe, struct replay_event *re)
{
	uint64_t need = PERF_SAMPLE_TID | PERF_SAMPLE_RAW |
			PERF_SAMPLE_REGS_USER;

	/* A heap probe as --record writes it (recorder.c): its records
	 * are what heapobjs_record reads, or they are counted bad. */
	if (heapobjs_event_parse(pe->name, &re->he)) {
		re->heap = true;
		re->he.sample_type = pe->attr.sample_type;
		re->he.regs_user = pe->attr.sample_regs_user;
		return true;
	}
	if (pe->attr.type != PERF_TYPE_TRACEPOINT ||
	    strcmp(pe->name, "raw_syscalls:sys_exit") != 0 ||
	    (pe->attr.sample_type & need) != need)
		return false;
	re->alloc = true;
	re->ae = (struct allocs_event){
		.sample_type = pe->attr.sample_type,
		.regs_user = pe->attr.sample_regs_user,
		.ret_off = ALLOCS_SYS_EXIT_RET_OFF,
		.id_off = ALLOCS_SYS_EXIT_ID_OFF,
	};
	return true;
}

uint64_t
replay_heap_floor(const char *cmdline)
{
	static const char opt[] = "heap-objects";
	const char *p = strchr(cmdline, ' ');	/* after argv[0] */
	uint64_t floor = 0;

	/* Every option up to "--", the last one winning, under any name
	 * getopt_long takes for it: "--hea" and longer prefixes ("--he" is
	 * also --help's). */
	while (p) {
		const char *tok = p + 1, *end = strchr(tok, ' ');
		size_t len = end ? (size_t)(end - tok) : strlen(tok);
		const char *eq = memchr(tok, '=', len);
		size_t name = eq ? (size_t)(eq - tok) : len;	/* "--" too */

		p = end;
		if (len == 2 && tok[0] == '-' && tok[1] == '-')
			break;
		if (len < 2 || tok[0] != '-' || tok[1] != '-' || name < 5 ||
		    name - 2 > strlen(opt) ||
		    strncmp(tok + 2, opt, name - 2) != 0)
			continue;
		/* The SIZE as the command line took it (a count or none: no
		 * floor). */
		if (!eq || heapopt_size(eq + 1, len - (size_t)(eq - tok) - 1,
					&floor) < 0)
			floor = 0;
	}
	return floor;
}

/* The object table, at the first allocation event: pages are named by
 * objects from then on.  0 or -ENOMEM. */
int
replay_objects_on(struct replay *r, const struct replay_event *re)
{
	int ret;

	if (!r->allocs.objs) {
		ret = allocs_init(&r->allocs, REPLAY_MAX_OBJECTS);
		if (ret < 0)
			return ret;
		allocs_use_names(&r->allocs,
				 sides_names(aggr_sides(&r->aggr)));
		r->aggr.objects = r->allocs.objs;
	}
	if (!re->heap || r->heap.objs)
		return 0;
	/* Live, allocations under --heap-objects=SIZE made no object. */
	ret = heapobjs_init(&r->heap, r->allocs.objs, r->allocs.unw,
			    REPLAY_MAX_OBJECTS, replay_heap_floor(
				    perfdata_reader_info(r->cfg.reader)->
				    cmdline));
	if (ret < 0)
		return ret;
	r->heap.no_peek = true;
	r->aggr.heap_objects = r->heap.objs;
	return 0;
}

void
replay_objects_exec(struct replay *r, int32_t pid, uint64_t time)
{
	if (r->allocs.objs)
		allocs_exec(&r->allocs, pid, time);
	if (r->heap.objs)
		heapobjs_exec(&r->heap, pid, time);
}

void
replay_objects_frame(struct replay *r, struct frame *f)
{
	if (r->allocs.objs) {
		allocs_frame(&r->allocs, f);
		f->objects_lost += r->heap.st.bad;
	}
}

/*
 * A sample of the allocation event into the object table, at its time.
 * Its stack copy and registers are in the recording machine's byte
 * order, which a swapped file's reader does not undo: counted bad.
 */
int
replay_alloc(struct replay *r, const struct replay_event *ev,
	     const struct perf_event_header *hdr)
{
	struct record_sample rs;
	int ret;

	if (record_parse_sample(&ev->layout, hdr, &rs) == 0 &&
	    (rs.present & PERF_SAMPLE_TIME)) {
		ret = replay_time(r, rs.time);
		if (ret < 0)
			return ret;
	}
	if (perfdata_reader_is_swapped(r->cfg.reader)) {
		r->allocs.st.events++;
		r->allocs.st.bad++;
		return 0;
	}
	if (ev->heap)
		heapobjs_record(&r->heap, &ev->he, hdr);
	else
		allocs_record(&r->allocs, &ev->ae, hdr);
	return 0;
}


bool
replay_alloc_lost(struct replay *r, const struct perfdata_record *rec)
{
	uint64_t n;

	if (rec->event_idx >= r->n_events ||
	    !(r->events[rec->event_idx].alloc ||
	      r->events[rec->event_idx].heap) ||
	    record_parse_lost(rec->hdr, &n) != 0)
		return false;
	r->allocs.st.lost += n;
	return true;
}
