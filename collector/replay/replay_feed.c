/*
 * Replay: records into the aggregation.  See replay_int.h.
 *
 * Each event of the file gets an event_spec, so that source_decode()
 * turns its samples into struct sample exactly as live: loads and stores
 * from DATA_SRC (ROLE_OP), from the fault's error code
 * (exceptions:page_fault_user), or `other`.  Processes and threads are
 * kept in small hash tables (pid or tid -> task) for the frames' targets.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "aggr.h"
#include "base.h"
#include "names.h"
#include "pagetab.h"
#include "record_mmap.h"
#include "replay_int.h"
#include "sides.h"
#include "unwind.h"

/* Task ids as index keys: never 0, so pid 0 (the idle task of a
 * system-wide capture) has one too. */
static uint64_t
replay_task_key(int32_t id)
{
	return (uint64_t)(uint32_t)id | UINT64_C(1) << 32;
}

/* The task for id, created when absent; NULL on ENOMEM. */
static struct replay_task *
replay_task(struct replay_tasks *t, int32_t id, bool *created)
{
	uint32_t i = u64idx_get(&t->index, replay_task_key(id));

	*created = false;
	if (i != U64IDX_NONE)
		return &t->v[i];
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct replay_task *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	if (u64idx_add(&t->index, replay_task_key(id), (uint32_t)t->n) < 0)
		return NULL;
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	t->v[t->n].id = id;
	*created = true;
	return &t->v[t->n++];
}

void
replay_tasks_fini(struct replay_tasks *t)
{
	free(t->v);
	u64idx_fini(&t->index);
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
	} else if (replay_alloc_event(pe, re)) {
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
	replay_fixed_build(&re->fixed, &re->layout);
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
int
replay_sync_events(struct replay *r)
{
	size_t n = perfdata_reader_n_events(r->cfg.reader);
	struct replay_event *ev;
	const char **names;

	if (n <= r->n_events)
		return 0;
	/* An allocation event or heap probe gives the aggregation its
	 * object table (replay_objects_on). */
	replay_pipe_sync(&r->pipe, &r->aggr);
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
		if (r->events[i].alloc || r->events[i].heap) {
			if (replay_objects_on(r, &r->events[i]) < 0)
				return -ENOMEM;
			continue;
		}
		/* The memory-block map only where a sample can use it:
		 * without it, and without objects, a batch's page->node pass
		 * has nothing to do for most samples (aggr_decide). */
		if (r->phys && (pe->attr.sample_type & PERF_SAMPLE_PHYS_ADDR))
			aggr_set_physnode(&r->aggr, r->phys);
		r->event_names[r->n_names++] = r->events[i].spec.name;
		r->has_kinds |= r->events[i].spec.role == ROLE_OP ||
				r->events[i].spec.role == ROLE_FAULT_TP;
		r->all_faults &= replay_is_fault_event(pe);
	}
	r->n_events = n;
	return 0;
}

/*
 * Nodes are added last to first, so that a block listed under two nodes
 * goes to the first, as perfdata_info_phys_node() answers.
 */
int
replay_physnode_build(const struct perfdata_info *info, struct physnode **out)
{
	struct physnode *p;
	int ret;

	*out = NULL;
	if (!info->mem_block_size)
		return 0;
	ret = physnode_new_empty(&p, info->mem_block_size);
	for (size_t i = info->n_mem; ret == 0 && i-- > 0;) {
		const struct perfdata_mem_node *m = &info->mem[i];

		if (m->node > 32767)
			continue;
		for (uint64_t w = 0; ret == 0 && w < (m->nr_bits + 63) / 64;
		     w++) {
			uint64_t bits = m->bitmap[w];

			if (64 * w + 64 > m->nr_bits && m->nr_bits % 64)
				bits &= (UINT64_C(1) << (m->nr_bits % 64)) - 1;
			for (; bits && ret == 0; bits &= bits - 1)
				ret = physnode_add(p, 64 * w +
						   (uint64_t)__builtin_ctzll(bits),
						   (int)m->node);
		}
	}
	if (ret < 0) {
		physnode_free(p);
		return ret;
	}
	*out = p;
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
	e = pagetab_get(aggr_pages(&r->aggr), s->pid, s->addr, &inserted);
	if (e)
		e->node = (int16_t)node;
}

static void
replay_note_thread(struct replay *r, const struct sample *s)
{
	size_t slot = (uint32_t)s->tid % REPLAY_SEEN;
	struct replay_task *p, *t;
	bool created;

	/* Noting a pair again changes nothing: most samples stop here. */
	if (r->seen[slot].tid == s->tid && r->seen[slot].pid == s->pid)
		return;
	p = replay_task(&r->procs, s->pid, &created);
	if (!p)
		return;
	p->sampled = true;
	t = replay_task(&r->threads, s->tid, &created);
	if (!t)
		return;
	if (created) {
		t->pid = s->pid;
		p->threads++;
	}
	r->seen[slot].tid = s->tid;
	r->seen[slot].pid = s->pid;
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
	for (size_t i = 0; i < ARRAY_SIZE(offs); i++) {
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

int
replay_time_start(struct replay *r, uint64_t t)
{
	r->have_t0 = true;
	r->t0 = r->frame_start = r->rec_now = t;
	r->frame_end = t + r->interval_ns;
	r->play_rec = t;
	r->play_wall = base_now_s();
	return replay_time(r, t);
}

static int
replay_sample(struct replay *r, const struct perfdata_record *rec)
{
	struct replay_event *ev;
	struct record_sample walked, *rs;
	unsigned char raw[REPLAY_RAW_COPY];
	struct sample *s;
	int ret;

	/* Only pipe mode adds events, and only an index past the known
	 * ones needs a look (PERFDATA_NO_EVENT is past them all). */
	if (rec->event_idx >= r->n_events &&
	    (rec->event_idx == PERFDATA_NO_EVENT ||
	     replay_sync_events(r) < 0 || rec->event_idx >= r->n_events)) {
		r->pipe.lost++;
		r->bad_samples++;
		return 0;
	}
	ev = &r->events[rec->event_idx];
	/* The object tables are the aggregation's too (aggr_decide). */
	if (ev->alloc || ev->heap) {
		if (!r->pipe.stopped)
			replay_pipe_stop(&r->pipe, &r->aggr);
		return replay_alloc(r, ev, rec->hdr);
	}
	rs = replay_fixed_parse(&ev->fixed, rec->hdr);
	if (!rs) {
		if (record_parse_sample(&ev->layout, rec->hdr, &walked) < 0) {
			r->pipe.lost++;
			r->bad_samples++;
			return 0;
		}
		rs = &walked;
	}
	if (rs->present & PERF_SAMPLE_TIME) {
		ret = replay_time(r, rs->time);
		if (ret < 0)
			return ret;
	}
	if (ev->spec.role == ROLE_FAULT_TP &&
	    perfdata_reader_is_swapped(r->cfg.reader))
		replay_swap_raw(&ev->spec, rs, raw);
	/* The callers' table is the aggregation's side tables'. */
	if (rs->caller && !r->pipe.stopped)
		replay_pipe_stop(&r->pipe, &r->aggr);
	/* Decoded in place in the batch: no copy on this thread. */
	s = replay_pipe_slot(&r->pipe, &r->aggr);
	ret = source_decode(&r->src, &ev->spec, rs, ev->period, s);
	if (ret > 0) {
		replay_note_thread(r, s);
		if (rs->caller && aggr_sides(&r->aggr))
			callers_note(&aggr_sides(&r->aggr)->callers, s->pid,
				     s->ip, rs->caller);
		else if (r->unw_callers &&
			 (rs->present & PERF_SAMPLE_STACK_USER))
			replay_callers_walk(r, ev, rs, s);
		if (r->phys_slow)
			replay_set_node(r, s, rs->phys_addr);
		replay_pipe_commit(&r->pipe, &r->aggr);
	} else if (ret == 0) {
		r->pipe.unattributed++;
	}
	return 0;
}

int
replay_names_setup(struct replay *r)
{
	const struct perfdata_info *info = perfdata_reader_info(r->cfg.reader);
	struct names *names = sides_names(aggr_sides(&r->aggr));

	if (!names)
		return 0;
	names_use_records(names, true);
	if (r->cfg.no_files)
		names_no_files(names);
	for (size_t i = 0; i < info->n_build_ids; i++)
		if (names_add_build_id(names, info->build_ids[i].path,
				       info->build_ids[i].id,
				       info->build_ids[i].size) < 0)
			return -ENOMEM;
	return 0;
}

/* MMAP, MMAP2, FORK: what names the capture's pages.  Records come in
 * time order (perfdata_order.c), so names needs no times (0). */
static void
replay_names_record(struct replay *r, const struct perf_event_header *hdr)
{
	struct names *names = sides_names(aggr_sides(&r->aggr));
	struct record_task task;
	struct record_mmap m;

	if (!names)
		return;
	if (hdr->type == PERF_RECORD_FORK) {
		if (record_parse_task(hdr, &task) == 0 && task.pid == task.tid)
			names_fork(names, (int32_t)task.pid,
				   (int32_t)task.ppid, 0);
		return;
	}
	if (record_parse_mmap(hdr, &m) == 0 && (int32_t)m.pid != -1) {
		struct names_map nm = {
			.start = m.addr, .end = m.addr + m.len,
			.pgoff = m.pgoff, .inode = m.ino,
			.dev_major = m.maj, .dev_minor = m.min,
			.prot = m.prot, .shared = (m.flags & MAP_SHARED) != 0,
			.name = m.filename, .name_len = m.filename_len,
			.build_id = m.build_id,
			.build_id_size = m.build_id_size,
		};

		names_mmap(names, (int32_t)m.pid, &nm);
		if (r->unw_callers)
			unwind_stale(r->unw_callers, (int)m.pid);
	}
}

/* The time in a non-sample record's sample_id trailer; 0 without one. */
static uint64_t
replay_trailer_time(const struct replay *r, const struct perfdata_record *rec,
		    size_t body_size)
{
	struct record_id rid;

	if (rec->event_idx >= r->n_events ||
	    record_parse_id(&r->events[rec->event_idx].layout, rec->hdr,
			    body_size, &rid) != 0)
		return 0;
	return rid.time;
}

static void
replay_task_record(struct replay *r, const struct perfdata_record *rec)
{
	const struct perf_event_header *hdr = rec->hdr;
	uint64_t when;

	struct names *names = sides_names(aggr_sides(&r->aggr));
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
		aggr_proc_comm(&r->aggr, (int32_t)pid, comm, 0);
		/* exec: the old image's names go; its MMAP2s follow. */
		if (names && (hdr->misc & PERF_RECORD_MISC_COMM_EXEC))
			names_forget(names, (int32_t)pid, 0);
		/* exec: the old image's objects end (as live, follow.c). */
		if (r->allocs.objs &&
		    (hdr->misc & PERF_RECORD_MISC_COMM_EXEC) &&
		    (when = replay_trailer_time(r, rec, 8)) != 0)
			replay_objects_exec(r, (int32_t)pid, when);
	} else if (hdr->type == PERF_RECORD_EXIT &&
		   record_parse_task(hdr, &task) == 0 &&
		   task.pid == task.tid && (int32_t)task.pid != -1) {
		t = replay_task(&r->procs, (int32_t)task.pid, &created);
		if (t)
			t->exited = true;
		aggr_proc_exit(&r->aggr, (int32_t)task.pid, 0);
		if (names)
			names_exit(names, (int32_t)task.pid);
		if (r->allocs.objs)
			allocs_exit(&r->allocs, (int32_t)task.pid);
		if (r->unw_callers)
			unwind_forget(r->unw_callers, (int)task.pid);
	}
}

/* A record other than a sample (apart: replay_record's samples save no
 * registers for it). */
static __attribute__((noinline)) int
replay_other(struct replay *r, const struct perfdata_record *rec)
{
	const struct perf_event_header *hdr = rec->hdr;
	uint64_t n;

	/* Each kind acted on touches the aggregation or the names it
	 * reads: the batches handed over go first (and the aggregation's
	 * own, with one thread).  The others (context switches, AUX, ...)
	 * may come between any two samples and cut no batch. */
	switch (hdr->type) {
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		replay_pipe_sync(&r->pipe, &r->aggr);
		if (replay_alloc_lost(r, rec))
			break;
		if (record_parse_lost(hdr, &n) == 0)
			aggr_count_lost(&r->aggr, n);
		break;
	case PERF_RECORD_THROTTLE:
		replay_pipe_sync(&r->pipe, &r->aggr);
		aggr_count_throttled(&r->aggr, 1);
		break;
	case PERF_RECORD_COMM:
	case PERF_RECORD_EXIT:
		replay_pipe_sync(&r->pipe, &r->aggr);
		replay_task_record(r, rec);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_FORK:
		replay_pipe_sync(&r->pipe, &r->aggr);
		replay_names_record(r, hdr);
		break;
	default:
		if (hdr->type > REPLAY_LAST_KERNEL_TYPE &&
		    hdr->type < 64)
			r->unknown_records++;
		break;
	}
	return 0;
}

int
replay_record(struct replay *r, const struct perfdata_record *rec)
{
	/* Samples first, without the switch: a tail call. */
	if (rec->hdr->type == PERF_RECORD_SAMPLE)
		return replay_sample(r, rec);
	return replay_other(r, rec);
}
