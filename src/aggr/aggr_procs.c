/*
 * Process rows (see aggr.h, aggr_int.h): counted sample by sample in
 * aggr.c through the batch's thread slots, named and aged here.
 * Collector thread only.
 *
 * Naming is bounded work: a row is named once, at the first frame after
 * its first sample (its comm from a COMM record or its parent's at fork
 * when one came, else /proc/PID/comm; its start time and cgroup from
 * /proc), at most AGGR_PROC_NAME_BUDGET rows a frame.  A process whose
 * /proc is gone or unreadable then is "[unknown]" and counted, never an
 * error.  Liveness comes from EXIT records; an idle row is also checked
 * every AGGR_PROC_CHECK_EVERY frames against /proc (an EXIT record may be
 * lost with a full ring): gone, or a different start time (its pid was
 * given to a new process), it is shown once as dead and dropped, so the
 * pid's next samples make a new row.  A pid reused within one interval
 * (pid_max wrapping in under a second) counts in the old row for that
 * interval.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "base.h"
#include "aggr_int.h"
#include "cgroupfs.h"
#include "frame.h"
#include "keysort.h"
#include "procfs.h"
#include "proctab.h"
#include "threadtab.h"

#define AGGR_PROC_NAME_BUDGET	2048
#define AGGR_PROC_CHECK_BUDGET	256
#define AGGR_PROC_CHECK_EVERY	16
/* Near full (7/8), rows idle this many frames give way, down to 3/4. */
#define AGGR_PROC_EVICT_IDLE	8

static const char aggr_proc_unknown[] = "[unknown]";

int
aggr_procs_config(struct aggr *a, size_t max, bool live)
{
	struct proctab *t;

	a->procs_live = live;
	if (!max || max == proctab_max(a->procs))
		return 0;
	t = proctab_new(a->n_nodes, max);
	if (!t)
		return -ENOMEM;
	proctab_free(a->procs);
	a->procs = t;
	aggr_tslots_forget(a);
	return 0;
}

struct proc_entry *
aggr_proc_of(struct aggr *a, int32_t pid)
{
	struct proc_entry *e = proctab_get(a->procs, pid, NULL);

	e->flags |= PROC_SAMPLED;
	return e;
}

void
aggr_tslot_spill(struct aggr *a, uint64_t kinds[3], struct aggr_tslot *ts)
{
	int32_t pid_tid[2];	/* as in struct sample */
	uint32_t n = ts->kinds[0] + ts->kinds[1] + ts->kinds[2];

	if (!n)
		return;
	memcpy(pid_tid, &ts->pid_tid, sizeof(pid_tid));
	threadtab_add(a->threads, pid_tid[0], pid_tid[1], n);
	for (int k = 0; k < 3; k++) {
		kinds[k] += ts->kinds[k];
		ts->proc->kinds[k] += ts->kinds[k];
		ts->proc->lr[k] += ts->lr[k];
		ts->kinds[k] = ts->lr[k] = 0;
	}
}

bool
aggr_proc_worth_naming(void *ctx, int32_t pid)
{
	struct aggr *a = ctx;
	struct proc_entry *e;

	if (!a->names_bar || !a->procs)
		return true;
	e = proctab_find(a->procs, pid);
	return !e || proctab_samples(e) >= a->names_bar;
}

void
aggr_tslots_forget(struct aggr *a)
{
	for (size_t i = 0; a->tslots && i < AGGR_TSLOTS; i++)
		a->tslots[i].pid_tid = UINT64_MAX;
}

static void
aggr_proc_set_comm(struct proc_entry *e, const char *comm, uint64_t time)
{
	/* comm may be shorter than the field (a COMM record's copy is not,
	 * a caller's string may be): copy up to its end. */
	size_t n = strnlen(comm, sizeof(e->comm) - 1);

	memcpy(e->comm, comm, n);
	e->comm[n] = '\0';
	e->comm_time = time;
	e->flags |= PROC_NAMED;
}

void
aggr_proc_comm(struct aggr *a, int32_t pid, const char *comm, uint64_t time)
{
	struct proc_entry *e = proctab_get(a->procs, pid, NULL);

	if (e == proctab_sink(a->procs))
		return;
	if (!(e->flags & PROC_NAMED) || time >= e->comm_time)
		aggr_proc_set_comm(e, comm, time);
}

void
aggr_proc_virtual(struct aggr *a, int32_t pid, const char *comm)
{
	struct proc_entry *e = proctab_get(a->procs, pid, NULL);

	if (e == proctab_sink(a->procs) || (e->flags & PROC_VIRTUAL))
		return;
	aggr_proc_set_comm(e, comm, 0);
	e->flags |= PROC_VIRTUAL | PROC_INFO;
}

void
aggr_proc_fork(struct aggr *a, int32_t pid, int32_t ppid)
{
	struct proc_entry *parent = proctab_find(a->procs, ppid), *e;

	if (!parent || !(parent->flags & PROC_NAMED))
		return;
	e = proctab_get(a->procs, pid, NULL);
	/* Its own COMM record (exec) replaces the parent's name. */
	if (e != proctab_sink(a->procs) && !(e->flags & PROC_NAMED))
		aggr_proc_set_comm(e, parent->comm, 0);
}

void
aggr_proc_exit(struct aggr *a, int32_t pid, uint64_t time)
{
	struct proc_entry *e = proctab_find(a->procs, pid);

	if (e && !e->dead_ns)
		e->dead_ns = time ? time : 1;
}

void
aggr_procs_cutoff(struct aggr *a, uint64_t ns)
{
	a->procs_cutoff_ns = ns;
}

/* Known dead now: at this frame, or the next (see aggr_procs_cutoff). */
static void
aggr_proc_gone(struct proc_entry *e)
{
	if (!e->dead_ns)
		e->dead_ns = base_now_ns();
}

/* Start time, comm (unless a record named it) and cgroup from /proc. */
static void
aggr_proc_name(struct proc_entry *e)
{
	char buf[4096];

	e->flags |= PROC_INFO;
	if (procfs_start_time(e->pid, &e->start_time) < 0) {
		aggr_proc_gone(e);
		if (!(e->flags & PROC_NAMED))
			e->flags |= PROC_UNKNOWN;
		return;
	}
	if (!(e->flags & PROC_NAMED) &&
	    procfs_comm(e->pid, buf, sizeof(e->comm)) == 0)
		aggr_proc_set_comm(e, buf, 0);
	if (cgroupfs_of_pid(e->pid, true, buf, sizeof(buf)) == 0) {
		free(e->cgroup);
		e->cgroup = strdup(buf);
	}
}

/* An idle row: still the process it was named after? */
static void
aggr_proc_check(struct proc_entry *e)
{
	uint64_t start;

	if (e->flags & PROC_VIRTUAL)
		return;
	if (procfs_start_time(e->pid, &start) < 0 ||
	    (e->start_time && start != e->start_time))
		aggr_proc_gone(e);
}

struct aggr_proc_pass {
	struct aggr *a;
	unsigned named;
	unsigned checked;
	size_t rows;
};

static bool
aggr_proc_shown(const struct proc_entry *e)
{
	return proctab_samples(e) ||
	       (e->flags & (PROC_EXITED | PROC_SAMPLED)) ==
	       (PROC_EXITED | PROC_SAMPLED);
}

/* First pass over a row: its idle count, its name or check, whether the
 * frame shows it. */
static void
aggr_proc_visit(struct proc_entry *e, struct aggr_proc_pass *p)
{
	bool sampled = proctab_samples(e) != 0;

	e->idle = sampled ? 0 : e->idle + 1;
	if (e->dead_ns && e->dead_ns < p->a->procs_cutoff_ns)
		e->flags |= PROC_EXITED;
	if (p->a->procs_live && (e->flags & PROC_SAMPLED) && !e->dead_ns) {
		if (!(e->flags & PROC_INFO)) {
			if (p->named < AGGR_PROC_NAME_BUDGET) {
				aggr_proc_name(e);
				p->named++;
			}
		} else if (e->idle % AGGR_PROC_CHECK_EVERY == 1 &&
			   p->checked < AGGR_PROC_CHECK_BUDGET) {
			aggr_proc_check(e);
			p->checked++;
		}
	}
	p->rows += aggr_proc_shown(e);
}

static void
aggr_proc_row(struct frame *f, struct frame_process *r,
	      const struct proc_entry *e, uint64_t *nodes, size_t nn)
{
	r->pid = e->pid;
	if (e->flags & PROC_NAMED) {
		memcpy(r->comm, e->comm, sizeof(r->comm));
	} else {
		memcpy(r->comm, aggr_proc_unknown, sizeof(aggr_proc_unknown));
		f->processes_unknown++;
	}
	r->cgroup = e->cgroup ? strdup(e->cgroup) : NULL;
	r->loads = e->kinds[SAMPLE_LOAD];
	r->stores = e->kinds[SAMPLE_STORE];
	r->other = e->kinds[SAMPLE_OTHER];
	r->samples = proctab_samples(e);
	r->total = e->total + r->samples;
	r->local = e->lr[PROC_LOC_LOCAL];
	r->remote = e->lr[PROC_LOC_REMOTE];
	r->share = f->totals.samples ?
		   (double)r->samples / (double)f->totals.samples : 0;
	r->nodes = nodes;
	memcpy(nodes, e->nodes + 1, nn * sizeof(*nodes));
	r->threads = e->threads;
	r->alive = !(e->flags & PROC_EXITED);
}

static uint64_t
aggr_proc_key(const struct frame_process *r, enum sort_key key)
{
	switch (key) {
	case SORT_TOTAL:
		return r->total;
	case SORT_LOADS:
		return r->loads;
	case SORT_STORES:
		return r->stores;
	default:
		return r->samples;
	}
}

static int
aggr_proc_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct frame_process *a = pa, *b = pb;
	enum sort_key key = *(const enum sort_key *)ctx;
	uint64_t ka = aggr_proc_key(a, key), kb = aggr_proc_key(b, key);

	if (ka != kb)
		return ka > kb ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static void
aggr_proc_sort_key(const void *item, const void *ctx, uint64_t *hi,
		   uint64_t *lo)
{
	const struct frame_process *r = item;

	*hi = UINT64_MAX - aggr_proc_key(r, *(const enum sort_key *)ctx);
	*lo = (uint64_t)((int64_t)r->pid - INT32_MIN);
}

/* By the sort key, most first, then by pid: a radix sort (keysort.h) for
 * a whole machine's thousands of rows, qsort_r when it has no memory. */
static void
aggr_procs_sort(struct frame_process *v, size_t n, enum sort_key key)
{
	if (keysort_array(v, n, sizeof(*v), aggr_proc_sort_key, &key) < 0)
		qsort_r(v, n, sizeof(*v), aggr_proc_cmp, &key);
}

/* After the frame: rows shown dead (or dead unsampled) go; a table near
 * its limit lets long-idle rows go too, so new processes find room. */
static void
aggr_procs_prune(struct aggr *a, struct proc_entry **rows, size_t n)
{
	size_t max = proctab_max(a->procs);
	bool crowded = proctab_count(a->procs) > max - max / 8;

	/* Rows are heap objects: removing one leaves the others put. */
	for (size_t i = 0; i < n; i++) {
		if (rows[i]->flags & PROC_EXITED) {
			proctab_remove(a->procs, rows[i]->pid);
		} else if (crowded && rows[i]->idle >= AGGR_PROC_EVICT_IDLE &&
			   proctab_count(a->procs) > max - max / 4) {
			a->procs_pruned_live = true;
			proctab_remove(a->procs, rows[i]->pid);
		}
	}
}

struct aggr_proc_rows {
	struct proc_entry **v;
	size_t n;
};

static void
aggr_proc_collect(struct proc_entry *e, void *ctx)
{
	struct aggr_proc_rows *r = ctx;

	e->threads = 0;
	r->v[r->n++] = e;
}

bool
framebuild_processes(struct frame *f, struct aggr *a)
{
	struct aggr_proc_pass pass = { .a = a };
	struct aggr_proc_rows rows = { 0 };
	size_t nn = (size_t)a->n_nodes, k = 0;

	rows.v = malloc((proctab_count(a->procs) + 1) * sizeof(*rows.v));
	if (!rows.v)
		return false;
	proctab_foreach(a->procs, aggr_proc_collect, &rows);
	for (size_t i = 0; i < f->n_threads; i++) {
		struct proc_entry *e = proctab_find(a->procs,
						    f->threads[i].pid);

		if (e)
			e->threads++;
	}
	for (size_t i = 0; i < rows.n; i++)
		aggr_proc_visit(rows.v[i], &pass);
	f->processes_untracked = proctab_samples(proctab_sink(a->procs));
	f->processes = calloc(pass.rows ? pass.rows : 1,
			      sizeof(*f->processes));
	f->process_nodes = calloc(pass.rows * nn > 0 ? pass.rows * nn : 1,
				  sizeof(*f->process_nodes));
	if (!f->processes || !f->process_nodes) {
		free(rows.v);
		return false;
	}
	for (size_t i = 0; i < rows.n; i++) {
		if (aggr_proc_shown(rows.v[i])) {
			aggr_proc_row(f, &f->processes[k], rows.v[i],
				      f->process_nodes + k * nn, nn);
			k++;
		}
	}
	f->n_processes = k;
	aggr_procs_sort(f->processes, k, f->sort);
	aggr_procs_prune(a, rows.v, rows.n);
	aggr_tslots_forget(a);
	free(rows.v);
	return true;
}
