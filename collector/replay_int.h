/*
 * The replay module's insides, shared by replay.c (the thread: recorded
 * time, pacing, commands, frames) and replay_feed.c (records into the
 * aggregation: events, processes, samples).  Not for other modules: see
 * replay.h.  Replay thread only.
 */
#ifndef MEMTOP_REPLAY_INT_H
#define MEMTOP_REPLAY_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "aggr.h"
#include "perfdata_read.h"
#include "record.h"
#include "replay.h"
#include "source.h"

#define REPLAY_MAX_EMPTY	100
#define REPLAY_MAX_TARGETS	64
/* Records between looks at the command queue when not waiting. */
#define REPLAY_CMD_EVERY	4096
#define REPLAY_WAIT_MS		100
#define REPLAY_SPEED_MAX	1024.0
#define REPLAY_SPEED_MIN	(1.0 / 64)
/* PERF_RECORD_AUX_OUTPUT_HW_ID: the last kernel type perf 6.1 knows. */
#define REPLAY_LAST_KERNEL_TYPE	21
/* Bytes of a tracepoint payload copied to swap the fields read. */
#define REPLAY_RAW_COPY		64

/* How one event of the file turns into samples. */
struct replay_event {
	struct event_spec spec;
	struct record_layout layout;
	uint64_t period;	/* when a sample has no PERIOD */
};

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
	uint32_t *slots;	/* index + 1, 0 = empty */
	size_t n_slots;
};

struct replay {
	struct replay_config cfg;
	struct aggr aggr;
	struct source src;	/* only period_in_sample is read */
	pthread_t thread;
	bool started;
	int result;

	struct replay_event *events;
	size_t n_events;
	const char **event_names;
	bool has_kinds;
	bool all_faults;

	struct replay_tasks procs;
	struct replay_tasks threads;

	bool have_t0;
	uint64_t t0;
	uint64_t rec_now;	/* latest sample time */
	uint64_t frame_start;	/* recorded ns the current frame began */
	uint64_t frame_end;
	uint64_t interval_ns;

	double speed;
	bool paused;
	bool to_end;
	bool quit;
	double play_wall;
	uint64_t play_rec;

	uint64_t seq;
	uint64_t skipped;
	uint64_t unknown_records;
	uint64_t bad_samples;
	uint64_t reader_bad_seen;
	uint64_t since_cmds;
	char note[512];
	char error[320];
};

/* CLOCK_MONOTONIC seconds. */
double replay_wall(void);
/* Emits every frame that ends at or before recorded time t.  0/-errno. */
int replay_advance(struct replay *r, uint64_t t);

/* replay_feed.c */
/* Extends the per-event tables when pipe mode adds events.  0/-ENOMEM. */
int replay_sync_events(struct replay *r);
/* One record from the reader into the aggregation.  0 or -errno. */
int replay_record(struct replay *r, const struct perfdata_record *rec);
void replay_tasks_fini(struct replay_tasks *t);

#endif
