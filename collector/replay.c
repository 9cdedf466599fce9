/*
 * Replay thread.  See replay.h.
 *
 * Recorded time: t0 is the first sample's TIME; frame k covers
 * [t0 + k * interval, t0 + (k + 1) * interval).  A sample at or past the
 * current frame's end first emits the frames before it (empty ones too,
 * as live would), at most REPLAY_MAX_EMPTY in a row: a longer silence
 * becomes one frame spanning it, so a hostile timestamp cannot make a
 * billion frames.  Records are not reordered: a sample older than the
 * current frame counts in the current frame, and the clock never runs
 * backwards.  Samples without TIME all fall in the final frame.
 *
 * Pacing (TUI): the frame ending at recorded time B is published when the
 * wall clock reaches play_wall + (B - play_rec) / speed.  A speed change
 * or a resume moves (play_wall, play_rec) to the current position, so the
 * picture continues from where it is.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aggr.h"
#include "cmd.h"
#include "frame.h"
#include "framebuild.h"
#include "log.h"
#include "pagetab.h"
#include "perfdata_read.h"
#include "queue.h"
#include "record.h"
#include "replay.h"
#include "source.h"
#include "topo.h"

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

static double
replay_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t
replay_slot(int32_t id, size_t n)
{
	return (size_t)(((uint32_t)id * 2654435761u) >> 7) & (n - 1);
}

static int
replay_tasks_rehash(struct replay_tasks *t)
{
	size_t n = t->n_slots ? 2 * t->n_slots : 64;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t s = replay_slot(t->v[i].id, n);

		while (slots[s])
			s = (s + 1) & (n - 1);
		slots[s] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->n_slots = n;
	return 0;
}

/* The task for id, created when absent; NULL on ENOMEM. */
static struct replay_task *
replay_task(struct replay_tasks *t, int32_t id, bool *created)
{
	size_t s;

	*created = false;
	if (t->n_slots) {
		for (s = replay_slot(id, t->n_slots); t->slots[s];
		     s = (s + 1) & (t->n_slots - 1))
			if (t->v[t->slots[s] - 1].id == id)
				return &t->v[t->slots[s] - 1];
	}
	if (2 * (t->n + 1) > t->n_slots && replay_tasks_rehash(t) < 0)
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct replay_task *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	t->v[t->n].id = id;
	s = replay_slot(id, t->n_slots);
	while (t->slots[s])
		s = (s + 1) & (t->n_slots - 1);
	t->slots[s] = (uint32_t)t->n + 1;
	*created = true;
	return &t->v[t->n++];
}

static void
replay_tasks_fini(struct replay_tasks *t)
{
	free(t->v);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/*
 * Decoding per event.  exceptions:page_fault_user carries its address in
 * RAW at the x86 layout (common fields 8 bytes, address, ip, error_code),
 * stable since the tracepoint appeared in 3.13; the file has no format.
 */
static void
replay_event_init(const struct perfdata_event *pe, struct replay_event *re)
{
	struct event_spec *ev = &re->spec;
	uint64_t st = pe->attr.sample_type;
	size_t len;

	memset(re, 0, sizeof(*re));
	re->layout = pe->layout;
	len = strnlen(pe->name, sizeof(ev->name) - 1);

	memcpy(ev->name, pe->name, len);
	ev->name[len] = '\0';
	ev->attr = pe->attr;
	ev->leader = -1;
	ev->tp_addr_off = ev->tp_ip_off = ev->tp_error_off = -1;
	if (strstr(pe->name, "mem-loads-aux")) {
		ev->role = ROLE_AUX;
	} else if (pe->attr.type == PERF_TYPE_TRACEPOINT &&
		   strstr(pe->name, "page_fault_user") &&
		   (st & PERF_SAMPLE_RAW)) {
		ev->role = ROLE_FAULT_TP;
		ev->tp_addr_off = 8;
		ev->tp_ip_off = 16;
		ev->tp_error_off = 24;
	} else if (st & PERF_SAMPLE_DATA_SRC) {
		ev->role = ROLE_OP;
	} else {
		ev->role = ROLE_FAULT;
	}
	re->period = pe->attr.freq || !pe->attr.sample_period ?
		     1 : pe->attr.sample_period;
}

static bool
replay_is_fault_event(const struct perfdata_event *pe)
{
	return (pe->attr.type == PERF_TYPE_SOFTWARE &&
		(pe->attr.config == PERF_COUNT_SW_PAGE_FAULTS ||
		 pe->attr.config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
		 pe->attr.config == PERF_COUNT_SW_PAGE_FAULTS_MAJ)) ||
	       strstr(pe->name, "page_fault") != NULL;
}

/* Pipe mode may describe more events later: extends the tables. */
static int
replay_sync_events(struct replay *r)
{
	size_t n = perfdata_reader_n_events(r->cfg.reader);
	struct replay_event *ev;
	const char **names;

	if (n <= r->n_events)
		return 0;
	ev = realloc(r->events, n * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	r->events = ev;
	names = realloc(r->event_names, n * sizeof(*names));
	if (!names)
		return -ENOMEM;
	r->event_names = names;
	if (r->n_events == 0)
		r->all_faults = true;
	for (size_t i = r->n_events; i < n; i++) {
		const struct perfdata_event *pe =
			perfdata_reader_event(r->cfg.reader, i);

		replay_event_init(pe, &r->events[i]);
		r->event_names[i] = r->events[i].spec.name;
		r->has_kinds |= r->events[i].spec.role == ROLE_OP ||
				r->events[i].spec.role == ROLE_FAULT_TP;
		r->all_faults &= replay_is_fault_event(pe);
	}
	r->n_events = n;
	return 0;
}

static void
replay_note(struct replay *r)
{
	const struct perfdata_info *info = perfdata_reader_info(r->cfg.reader);
	char speed[32];

	if (r->to_end)
		snprintf(speed, sizeof(speed), "to the end");
	else if (r->cfg.batch)
		snprintf(speed, sizeof(speed), "as fast as possible");
	else
		snprintf(speed, sizeof(speed), "speed %gx", r->speed);
	snprintf(r->note, sizeof(r->note),
		 "replay of %s (%s%s%s; recorded on %s, %s): %s; %s",
		 r->cfg.path,
		 perfdata_reader_is_pipe(r->cfg.reader) ? "pipe mode" :
		 "perf.data",
		 perfdata_reader_is_swapped(r->cfg.reader) ?
		 ", other byte order" : "",
		 info->compressed ? ", zstd" : "",
		 info->hostname[0] ? info->hostname : "an unknown host",
		 info->perf_version[0] ? info->perf_version : "unknown perf",
		 r->all_faults ? "samples are page faults (first touch, "
		 "copy-on-write, refault), not access frequency" :
		 "samples as recorded", speed);
}

int
replay_new(struct replay **out, const struct replay_config *cfg, char *err,
	   size_t errlen)
{
	struct replay *r = calloc(1, sizeof(*r));
	int ret;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->cfg = *cfg;
	r->speed = 1.0;
	r->src.period_in_sample = true;
	snprintf(r->src.name, sizeof(r->src.name), "replay");
	r->interval_ns = (uint64_t)(cfg->interval_s * 1e9);
	if (r->interval_ns == 0)
		r->interval_ns = 1;
	ret = aggr_init(&r->aggr, cfg->topo, NULL, 12, cfg->max_pages);
	if (ret == 0)
		ret = replay_sync_events(r);
	if (ret < 0) {
		snprintf(err, errlen, "out of memory");
		replay_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void
replay_free(struct replay *r)
{
	if (!r)
		return;
	if (r->started)
		replay_join(r);
	aggr_fini(&r->aggr);
	free(r->events);
	free(r->event_names);
	replay_tasks_fini(&r->procs);
	replay_tasks_fini(&r->threads);
	free(r);
}

/* The recorded time the picture has reached now (TUI pacing). */
static uint64_t
replay_position(const struct replay *r, double now)
{
	double ahead = (now - r->play_wall) * 1e9 * r->speed;
	uint64_t pos = r->play_rec + (ahead > 0 ? (uint64_t)ahead : 0);

	return pos > r->frame_end ? r->frame_end : pos;
}

static void
replay_rebase(struct replay *r)
{
	double now = replay_wall();

	r->play_rec = replay_position(r, now);
	r->play_wall = now;
}

static void
replay_apply(struct replay *r, const struct cmd *cmd)
{
	bool was_paused = r->paused;

	switch (cmd->type) {
	case CMD_PAUSE:
	case CMD_RESUME:
	case CMD_TOGGLE_PAUSE:
		if (!was_paused)
			replay_rebase(r);
		r->paused = cmd->type == CMD_PAUSE ? true :
			    cmd->type == CMD_RESUME ? false : !r->paused;
		if (was_paused && !r->paused)
			r->play_wall = replay_wall();
		break;
	case CMD_REPLAY_FASTER:
	case CMD_REPLAY_SLOWER:
		if (!r->paused)
			replay_rebase(r);
		r->speed *= cmd->type == CMD_REPLAY_FASTER ? 2.0 : 0.5;
		if (r->speed > REPLAY_SPEED_MAX)
			r->speed = REPLAY_SPEED_MAX;
		if (r->speed < REPLAY_SPEED_MIN)
			r->speed = REPLAY_SPEED_MIN;
		break;
	case CMD_REPLAY_END:
		r->to_end = true;
		r->paused = false;
		break;
	case CMD_RESET:
		aggr_reset(&r->aggr);
		break;
	case CMD_SORT:
		if (cmd->value < SORT__COUNT)
			r->cfg.sort = (enum sort_key)cmd->value;
		break;
	case CMD_SET_TOP:
		if (cmd->value > 0 && cmd->value <= 100000)
			r->cfg.top_k = (size_t)cmd->value;
		break;
	case CMD_SET_PERIOD:
		log_msg("replay: the period of a recording cannot change");
		break;
	case CMD_QUIT:
		r->quit = true;
		break;
	default:
		/* Live-only commands (e.g. page migration): a recording has
		 * no process to act on. */
		break;
	}
}

static void
replay_commands(struct replay *r)
{
	struct cmd cmd;

	while (queue_pop(r->cfg.cmds, &cmd) == 0)
		replay_apply(r, &cmd);
	r->since_cmds = 0;
}

/* Waits for a command or timeout_ms. */
static void
replay_wait(struct replay *r, int timeout_ms)
{
	struct pollfd pfd = { .fd = queue_fd(r->cfg.cmds), .events = POLLIN };

	if (poll(&pfd, 1, timeout_ms) > 0)
		replay_commands(r);
}

/* TUI: holds the frame ending at frame_end until its wall time. */
static void
replay_pace(struct replay *r)
{
	for (;;) {
		double now = replay_wall(), due;

		replay_commands(r);
		if (r->quit || r->to_end || r->cfg.batch)
			return;
		if (r->paused) {
			replay_wait(r, -1);
			continue;
		}
		due = r->play_wall + (double)(r->frame_end - r->play_rec) /
				     1e9 / r->speed;
		if (now >= due)
			return;
		replay_wait(r, (int)((due - now) * 1000) + 1 > REPLAY_WAIT_MS ?
			    REPLAY_WAIT_MS : (int)((due - now) * 1000) + 1);
	}
}

static int
replay_publish(struct replay *r, struct frame *f)
{
	while (queue_push(r->cfg.frames, &f) == -EAGAIN) {
		if (!r->cfg.batch) {
			frame_free(f);
			r->skipped++;
			return 0;
		}
		/* Batch never skips; a quit still gets through. */
		usleep(10000);
		replay_commands(r);
	}
	return 0;
}

static size_t
replay_fill_targets(const struct replay *r, struct frame_target *ft)
{
	size_t n = 0;

	for (size_t i = 0; i < r->procs.n && n < REPLAY_MAX_TARGETS; i++) {
		const struct replay_task *t = &r->procs.v[i];

		if (!t->sampled)
			continue;
		ft[n].pid = t->id;
		memcpy(ft[n].comm, t->comm, sizeof(ft[n].comm));
		ft[n].comm[sizeof(ft[n].comm) - 1] = '\0';
		if (!ft[n].comm[0])
			snprintf(ft[n].comm, sizeof(ft[n].comm), ":%d", t->id);
		ft[n].threads = t->threads;
		ft[n].alive = !t->exited;
		n++;
	}
	return n;
}

/* Bodies the reader could not swap, and samples that named no event,
 * were never handed over as samples: count them as lost. */
static void
replay_count_reader_losses(struct replay *r)
{
	const struct perfdata_stats *st =
		perfdata_reader_stats(r->cfg.reader);

	if (st->bad_records > r->reader_bad_seen) {
		aggr_count_lost(&r->aggr, st->bad_records -
			       r->reader_bad_seen);
		r->reader_bad_seen = st->bad_records;
	}
}

static int
replay_emit(struct replay *r, bool final)
{
	struct frame_target ft[REPLAY_MAX_TARGETS];
	struct frame_meta m = { 0 };
	const struct perf_event_attr *a0 = &r->events[0].spec.attr;
	uint64_t end = final ? (r->rec_now > r->frame_start ? r->rec_now :
				r->frame_start) : r->frame_end;
	struct frame *f;

	aggr_flush(&r->aggr);
	replay_count_reader_losses(r);
	replay_note(r);
	m.seq = ++r->seq;
	m.time = r->have_t0 ? (double)(end - r->t0) / 1e9 : 0;
	m.interval = (double)(end - r->frame_start) / 1e9;
	m.final = final;
	m.paused = r->paused;
	m.source = "replay";
	m.events = r->event_names;
	m.n_events = r->n_events;
	m.source_note = r->note;
	m.has_kinds = r->has_kinds;
	m.period = a0->freq ? 0 : a0->sample_period;
	m.sort = r->cfg.sort;
	m.top_k = r->cfg.top_k;
	m.targets = ft;
	m.n_targets = replay_fill_targets(r, ft);
	m.exit_status = -1;
	m.error = r->error[0] ? r->error : NULL;
	f = frame_build(&r->aggr, &m);
	if (!f)
		return -ENOMEM;
	f->skipped = r->skipped;
	r->skipped = 0;
	snprintf(f->follow_mode, sizeof(f->follow_mode), "replay");
	aggr_next_interval(&r->aggr);
	r->frame_start = end;
	return replay_publish(r, f);
}

/* Emits every frame that ends at or before t. */
static int
replay_advance(struct replay *r, uint64_t t)
{
	unsigned empty = 0;
	int ret;

	while (t >= r->frame_end && !r->quit) {
		if (++empty > REPLAY_MAX_EMPTY) {
			/* One frame spans the rest of the silence. */
			uint64_t k = (t - r->t0) / r->interval_ns;

			r->frame_end = r->t0 + k * r->interval_ns;
			if (r->frame_end <= r->frame_start)
				r->frame_end = t;
		}
		replay_pace(r);
		ret = replay_emit(r, false);
		if (ret < 0)
			return ret;
		r->frame_end = r->frame_start + r->interval_ns;
		if (r->frame_end < r->frame_start)	/* overflow */
			r->frame_end = UINT64_MAX;
	}
	return 0;
}

static void
replay_set_node(struct replay *r, const struct sample *s, uint64_t phys)
{
	const struct perfdata_info *info = perfdata_reader_info(r->cfg.reader);
	struct page_entry *e;
	bool inserted;
	int node;

	if (!phys || !info->mem_block_size)
		return;
	node = perfdata_info_phys_node(info, phys);
	if (node < 0)
		return;
	e = pagetab_get(r->aggr.pages, s->pid, s->addr, &inserted);
	if (e)
		e->node = (int16_t)node;
}

static void
replay_note_thread(struct replay *r, const struct sample *s)
{
	struct replay_task *p, *t;
	bool created;

	p = replay_task(&r->procs, s->pid, &created);
	if (!p)
		return;
	p->sampled = true;
	t = replay_task(&r->threads, s->tid, &created);
	if (t && created) {
		t->pid = s->pid;
		p->threads++;
	}
}

/*
 * A tracepoint's RAW payload is in the byte order of the machine that
 * recorded it (the reader swaps the record around it, not its fields):
 * swap the u64 fields the decoder reads, in a copy.
 */
static void
replay_swap_raw(const struct event_spec *ev, struct record_sample *rs,
		unsigned char *copy)
{
	const int offs[] = { ev->tp_addr_off, ev->tp_ip_off,
			     ev->tp_error_off };
	size_t n = rs->raw_size < REPLAY_RAW_COPY ? rs->raw_size :
		   REPLAY_RAW_COPY;

	if (!rs->raw)
		return;
	memcpy(copy, rs->raw, n);
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		uint64_t v;

		if (offs[i] < 0 || (size_t)offs[i] + 8 > n)
			continue;
		memcpy(&v, copy + offs[i], 8);
		v = __builtin_bswap64(v);
		memcpy(copy + offs[i], &v, 8);
	}
	rs->raw = copy;
	rs->raw_size = (uint32_t)n;
}

static int
replay_sample(struct replay *r, const struct perfdata_record *rec)
{
	const struct replay_event *ev;
	struct record_sample rs;
	unsigned char raw[REPLAY_RAW_COPY];
	struct sample s;
	int ret;

	if (rec->event_idx == PERFDATA_NO_EVENT ||
	    replay_sync_events(r) < 0 || rec->event_idx >= r->n_events) {
		aggr_count_lost(&r->aggr, 1);
		r->bad_samples++;
		return 0;
	}
	ev = &r->events[rec->event_idx];
	if (record_parse_sample(&ev->layout, rec->hdr, &rs) < 0) {
		aggr_count_lost(&r->aggr, 1);
		r->bad_samples++;
		return 0;
	}
	if (rs.present & PERF_SAMPLE_TIME) {
		if (!r->have_t0) {
			r->have_t0 = true;
			r->t0 = r->frame_start = r->rec_now = rs.time;
			r->frame_end = rs.time + r->interval_ns;
			r->play_rec = rs.time;
			r->play_wall = replay_wall();
		}
		if (rs.time > r->rec_now)
			r->rec_now = rs.time;
		ret = replay_advance(r, r->rec_now);
		if (ret < 0)
			return ret;
	}
	if (ev->spec.role == ROLE_FAULT_TP &&
	    perfdata_reader_is_swapped(r->cfg.reader))
		replay_swap_raw(&ev->spec, &rs, raw);
	ret = source_decode(&r->src, &ev->spec, &rs, ev->period, &s);
	if (ret > 0) {
		replay_note_thread(r, &s);
		replay_set_node(r, &s, rs.phys_addr);
		aggr_add(&r->aggr, &s);
	} else if (ret == 0) {
		aggr_count_unattributed(&r->aggr, 1);
	}
	return 0;
}

static void
replay_task_record(struct replay *r, const struct perf_event_header *hdr)
{
	struct record_task task;
	struct replay_task *t;
	uint32_t pid, tid;
	char comm[16];
	bool created;

	if (hdr->type == PERF_RECORD_COMM &&
	    record_parse_comm(hdr, &pid, &tid, comm) == 0 && pid == tid &&
	    (int32_t)pid != -1) {
		t = replay_task(&r->procs, (int32_t)pid, &created);
		if (t)
			memcpy(t->comm, comm, sizeof(t->comm));
	} else if (hdr->type == PERF_RECORD_EXIT &&
		   record_parse_task(hdr, &task) == 0 &&
		   task.pid == task.tid && (int32_t)task.pid != -1) {
		t = replay_task(&r->procs, (int32_t)task.pid, &created);
		if (t)
			t->exited = true;
	}
}

static int
replay_record(struct replay *r, const struct perfdata_record *rec)
{
	const struct perf_event_header *hdr = rec->hdr;
	uint64_t n;

	switch (hdr->type) {
	case PERF_RECORD_SAMPLE:
		return replay_sample(r, rec);
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		if (record_parse_lost(hdr, &n) == 0)
			aggr_count_lost(&r->aggr, n);
		break;
	case PERF_RECORD_THROTTLE:
		aggr_count_throttled(&r->aggr, 1);
		break;
	case PERF_RECORD_COMM:
	case PERF_RECORD_EXIT:
		replay_task_record(r, hdr);
		break;
	default:
		if (hdr->type > REPLAY_LAST_KERNEL_TYPE &&
		    hdr->type < 64)
			r->unknown_records++;
		break;
	}
	return 0;
}

static void
replay_log_summary(const struct replay *r)
{
	const struct perfdata_stats *st =
		perfdata_reader_stats(r->cfg.reader);
	const struct perfdata_info *info = perfdata_reader_info(r->cfg.reader);

	log_msg("replay %s: %llu records, %llu skipped (perf bookkeeping), "
		"%llu of unknown types, %llu unknown kernel types, %llu "
		"undecodable samples (counted lost), %llu compressed records "
		"(%llu -> %llu bytes), %llu unknown and %llu malformed "
		"optional features", r->cfg.path,
		(unsigned long long)st->records,
		(unsigned long long)st->skipped_records,
		(unsigned long long)st->unknown_records,
		(unsigned long long)r->unknown_records,
		(unsigned long long)r->bad_samples,
		(unsigned long long)st->compressed_records,
		(unsigned long long)st->compressed_bytes,
		(unsigned long long)st->decompressed_bytes,
		(unsigned long long)info->unknown_features,
		(unsigned long long)info->bad_features);
}

static void *
replay_main(void *arg)
{
	struct replay *r = arg;
	struct perfdata_record rec;
	char err[256];
	int ret = 0, got;

	r->frame_end = UINT64_MAX;
	while (!r->quit) {
		got = perfdata_reader_next(r->cfg.reader, &rec, err,
					   sizeof(err));
		if (got < 0) {
			snprintf(r->error, sizeof(r->error), "%s: %s",
				 r->cfg.path, err);
			break;
		}
		if (got == 0)
			break;
		ret = replay_record(r, &rec);
		if (ret < 0)
			break;
		if (++r->since_cmds >= REPLAY_CMD_EVERY)
			replay_commands(r);
	}
	replay_log_summary(r);
	if (ret == 0)
		ret = replay_emit(r, true);
	r->result = ret;
	return NULL;
}

int
replay_start(struct replay *r)
{
	int ret = pthread_create(&r->thread, NULL, replay_main, r);

	if (ret)
		return -ret;
	r->started = true;
	return 0;
}

int
replay_join(struct replay *r)
{
	if (r->started) {
		pthread_join(r->thread, NULL);
		r->started = false;
	}
	return r->result;
}
