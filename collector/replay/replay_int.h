/*
 * The replay module's insides, shared by replay.c (the thread: recorded
 * time, pacing, commands, frames) and replay_feed.c (records into the
 * aggregation: events, processes, samples).  Not for other modules: see
 * replay.h.  Replay thread only.
 */
#ifndef MEMTOP_REPLAY_INT_H
#define MEMTOP_REPLAY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "allocs.h"
#include "base.h"
#include "heapobjs.h"
#include "perfdata_order.h"
#include "perfdata_read.h"
#include "physnode.h"
#include "producer.h"
#include "record.h"
#include "replay.h"
#include "replay_pipe.h"
#include "u64idx.h"
#include "source.h"

#define REPLAY_MAX_EMPTY	100
#define REPLAY_MAX_TARGETS	64
#define REPLAY_MAX_OBJECTS	(1u << 20)	/* objects kept (allocs.h) */
/* Records between looks at the command queue when not waiting. */
#define REPLAY_CMD_EVERY	4096
#define REPLAY_WAIT_MS		100
#define REPLAY_SPEED_MAX	1024.0
#define REPLAY_SPEED_MIN	(1.0 / 64)
/* PERF_RECORD_AUX_OUTPUT_HW_ID: the last kernel type perf 6.1 knows. */
#define REPLAY_LAST_KERNEL_TYPE	21
/* Bytes of a tracepoint payload copied to swap the fields read. */
#define REPLAY_RAW_COPY		64

/*
 * Where an event's SAMPLE fields sit when its sample_type has no field of
 * variable size but RAW (what perf mem, perf record -d and memtop
 * --record write; record_fixed_layout): worked out once per event, so
 * that a record is read field by field instead of walked.  A field past
 * RAW moves by RAW's size.  Each field read is one 8-byte copy from the
 * record straight into its place in the event's own record_sample, whose
 * other fields stay 0 from the start: nothing is cleared a sample, and
 * no value passes through a second array.
 */
/* At most this many copies from a fixed layout (replay_read,
 * replay_feed.c, and ID a second time as the identifier). */
#define REPLAY_FIXED_MAX	13

struct replay_fixed {
	uint32_t size;		/* record bytes without RAW's data; 0 = the
				 * event has no fixed layout */
	int32_t raw;		/* offset of RAW's u32 size; -1 = no RAW */
	/* The copies, n of them, the first n_before of fields before RAW
	 * (all of them without RAW):
	 * from off (the record's start; past RAW, plus RAW's size) to dst
	 * (the byte offset in rs). */
	uint32_t n, n_before;
	uint16_t off[REPLAY_FIXED_MAX];
	uint16_t dst[REPLAY_FIXED_MAX];
	bool weight_struct;	/* WEIGHT_STRUCT: weight split after */
	/* The last sample decoded: present, caller (0: a fixed layout has
	 * no call chain) and the fields the event lacks stay as built. */
	struct record_sample rs;
};

/* How one event of the file turns into samples. */
struct replay_event {
	struct event_spec spec;
	struct record_layout layout;
	struct replay_fixed fixed;
	uint64_t period;	/* when a sample has no PERIOD */
	/* raw_syscalls:sys_exit with user registers and stack (what
	 * --record writes beside the source, issue 18): its samples go to
	 * the object table, not the aggregation. */
	bool alloc;
	struct allocs_event ae;
	/* A heap probe (--heap-objects, heapobjs_event_name): its samples
	 * go to the small objects' table. */
	bool heap;
	struct heap_event he;
};

/* Direct-mapped (tid, pid) pairs already noted in the task tables. */
#define REPLAY_SEEN		64

/* A process (pid) or thread (tid) seen in the file. */
struct replay_task {
	int32_t id;
	int32_t pid;		/* threads: their process */
	char comm[16];
	bool sampled;
	bool exited;
	uint32_t threads;	/* processes: distinct sampled tids */
};

/* int32 -> task index, open addressing, id -1 never stored. */
struct replay_tasks {
	struct replay_task *v;
	size_t n;
	size_t cap;
	struct u64idx index;	/* id -> index into v */
};

struct replay {
	struct replay_config cfg;
	struct aggr aggr;
	/* The aggregation's own thread (replay_pipe.h): samples reach the
	 * aggregation through it, and whatever else touches aggr syncs
	 * first. */
	struct replay_pipe pipe;
	struct source src;	/* only period_in_sample is read */
	struct producer prod;	/* thread, queues, sort, top, seq, quit */

	struct replay_event *events;
	size_t n_events;
	const char **event_names;	/* of the events that are not alloc */
	size_t n_names;
	/* Objects named from the capture's allocation events; objs NULL
	 * when it has none. */
	struct allocs allocs;
	/* The small heap objects (their sites are allocs'); objs NULL when
	 * the capture has no heap probe. */
	struct heapobjs heap;
	bool has_kinds;
	bool all_faults;

	struct replay_tasks procs;
	struct replay_tasks threads;
	struct {
		int32_t tid;	/* -1 = empty (source_decode drops tid -1) */
		int32_t pid;
	} seen[REPLAY_SEEN];

	/* The file's MEM_TOPOLOGY for the aggregation (aggr_set_physnode);
	 * NULL when it has none or none that fits: then phys_slow asks
	 * perfdata_info_phys_node per sample. */
	struct physnode *phys;
	bool phys_slow;

	bool have_t0;
	uint64_t t0;
	uint64_t rec_now;	/* latest sample time */
	uint64_t frame_start;	/* recorded ns the current frame began */
	uint64_t frame_end;
	uint64_t interval_ns;

	double speed;
	bool paused;
	bool to_end;
	double play_wall;
	uint64_t play_rec;

	uint64_t unknown_records;
	uint64_t bad_samples;
	uint64_t reader_bad_seen;
	uint64_t since_cmds;
	/* Callers walked from user stacks (replay_callers.c); NULL when
	 * no event has them. */
	struct unwinder *unw_callers;
	uint64_t callers_walked, callers_found, callers_no_room;
	/* The reader's records in time order (perfdata_order.h). */
	struct perfdata_order *order;
	char note[512];
	char error[320];
};

/* A zeroed struct replay, aligned as its type asks (the pipe's groups of
 * cache lines: calloc's 16 bytes do not do); free() frees it.  NULL on
 * ENOMEM. */
static inline struct replay *
replay_alloc_zeroed(void)
{
	size_t align = _Alignof(struct replay);
	struct replay *r = aligned_alloc(align, (sizeof(*r) + align - 1) &
					 ~(align - 1));

	if (r)
		memset(r, 0, sizeof(*r));
	return r;
}

static inline struct replay *
replay_of(struct producer *p)
{
	return (struct replay *)((char *)p - offsetof(struct replay, prod));
}

extern const struct producer_ops replay_ops;

/* Emits every frame that ends at or before recorded time t.  0/-errno. */
int replay_advance(struct replay *r, uint64_t t);

/* replay_callers.c */
/* The unwinder when an event has user registers and stacks (before the
 * thread starts: it forks the helper).  0/-ENOMEM. */
int replay_callers_setup(struct replay *r);
/* The caller of smp's code site from rs's user stack, the site's first
 * time (see replay_callers.c). */
void replay_callers_walk(struct replay *r, const struct replay_event *ev,
			 const struct record_sample *rs,
			 const struct sample *smp);
/* Logs the walks and ends the unwinder (before the names it uses). */
void replay_callers_fini(struct replay *r);

/* replay_feed.c */
/* Extends the per-event tables when pipe mode adds events.  0/-ENOMEM. */
int replay_sync_events(struct replay *r);
/* The first time: recorded time starts at t, then as replay_time. */
int replay_time_start(struct replay *r, uint64_t t);

/* Recorded time has reached t: frames that end before it go out.
 * 0/-errno.  Inline: replay calls it per sample. */
static inline int
replay_time(struct replay *r, uint64_t t)
{
	if (!r->have_t0)
		return replay_time_start(r, t);
	if (t > r->rec_now)
		r->rec_now = t;
	/* Most samples fall inside the current frame. */
	if (r->rec_now >= r->frame_end)
		return replay_advance(r, r->rec_now);
	return 0;
}

/* replay_objects.c */
/* Is pe the allocation event or a heap probe?  Then re's alloc and ae,
 * or heap and he, are set. */
bool replay_alloc_event(const struct perfdata_event *pe,
			struct replay_event *re);
/* The object table at the first allocation event, the heap objects' at
 * the first heap probe (re).  0 or -ENOMEM. */
int replay_objects_on(struct replay *r, const struct replay_event *re);
/* The size floor of the recording's --heap-objects=SIZE, from its
 * CMDLINE (perfdata_writer_opts.cmdline: memtop's arguments joined by
 * spaces): 0 when there is none, or the option took a count. */
uint64_t replay_heap_floor(const char *cmdline);
/* pid called exec(2) at time: its old image's objects end. */
void replay_objects_exec(struct replay *r, int32_t pid, uint64_t time);
/* One sample of allocation event ev (or heap probe).  0 or -errno. */
int replay_alloc(struct replay *r, const struct replay_event *ev,
		 const struct perf_event_header *hdr);
/* A LOST record of an allocation ring: its losses are objects', not
 * samples'.  True when rec was one. */
bool replay_alloc_lost(struct replay *r, const struct perfdata_record *rec);
/* The frame's object counts (objects_lost). */
void replay_objects_frame(struct replay *r, struct frame *f);
/* One record from the reader into the aggregation.  0 or -errno. */
int replay_record(struct replay *r, const struct perfdata_record *rec);
/* Names from the capture's records, never /proc; its BUILD_ID feature's
 * build ids for the files.  0 or -ENOMEM. */
int replay_names_setup(struct replay *r);
void replay_tasks_fini(struct replay_tasks *t);
/*
 * A file's MEM_TOPOLOGY as a physnode, answering as
 * perfdata_info_phys_node() for every address but 0.  0 with *out (NULL
 * when there is none), -EINVAL when it does not fit one (block size not a
 * power of two, blocks past the cap), -ENOMEM.
 */
int replay_physnode_build(const struct perfdata_info *info,
			  struct physnode **out);
/* The fixed layout of l (size 0 when it has none). */
void replay_fixed_build(struct replay_fixed *fx, const struct record_layout *l);
/*
 * Decodes a SAMPLE of exactly fx's size (RAW included) as
 * record_parse_sample() would: fx's record_sample, filled (valid until the
 * next call), or NULL for any other record, which is then
 * record_parse_sample()'s to judge (tests/unit/replay/
 * test-perfdata-replay.c compares the two).  Inline: replay calls it per
 * sample.
 */
static inline struct record_sample *
replay_fixed_parse(struct replay_fixed *fx, const struct perf_event_header *hdr)
{
	const unsigned char *rec = (const void *)hdr;
	unsigned char *dst = (unsigned char *)&fx->rs;
	uint32_t raw_len = 0, i;

	if (fx->size == 0 || hdr->type != PERF_RECORD_SAMPLE ||
	    hdr->size < fx->size)
		return NULL;
	if (fx->raw >= 0) {
		/* Inside the record: raw + 4 <= fx->size <= hdr->size. */
		memcpy(&raw_len, rec + fx->raw, sizeof(raw_len));
		if ((sizeof(raw_len) + (uint64_t)raw_len) % 8 != 0)
			return NULL;
		fx->rs.raw = rec + fx->raw + sizeof(raw_len);
		fx->rs.raw_size = raw_len;
	}
	if ((uint64_t)hdr->size != fx->size + (uint64_t)raw_len)
		return NULL;
	/* Every read lies inside: off + 8 <= fx->size, and a field past
	 * RAW ends at most raw_len further, at hdr->size. */
	for (i = 0; i < fx->n_before; i++)
		memcpy(dst + fx->dst[i], rec + fx->off[i], 8);
	for (rec += raw_len; i < fx->n; i++)
		memcpy(dst + fx->dst[i], rec + fx->off[i], 8);
	/* union perf_sample_weight, as record_sample_fill splits it. */
	if (fx->weight_struct) {
		uint64_t w = fx->rs.weight;

		fx->rs.weight = w & UINT32_MAX;
		fx->rs.weight_var2 = (w >> 32) & UINT16_MAX;
	}
	return &fx->rs;
}

#endif
