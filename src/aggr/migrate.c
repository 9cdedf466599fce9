#include "config.h"

/*
 * Page migration on request.  See migrate.h.
 *
 * Result per page, from move_pages' status[i] (move_pages(2)):
 *   == target node          moved (or already there: a no-op success)
 *   -EBUSY                  busy: pinned, locked or under I/O right now
 *   -EPERM, -EACCES         denied (also when the whole call is refused:
 *                           no ptrace access to the target, which 4.13+
 *                           requires, or a shared page without
 *                           MPOL_MF_MOVE_ALL)
 *   anything else           failed (-ENOENT gone, -EFAULT, -ENOMEM,
 *                           -ENODEV no such node, a different node)
 */

#include <errno.h>
#include <limits.h>
#include <numaif.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "cpuvote.h"
#include "migrate.h"
#include "pagetab.h"
#include "topo.h"

#define MIGRATE_BATCH 512

struct migrate_cand {
	int32_t pid;
	int32_t node;		/* where it is */
	int32_t target;		/* where it goes */
	uint64_t addr;		/* page base */
	uint64_t local;
	uint64_t remote;
};

struct migrate {
	struct migrate_cand *cand;	/* best first */
	size_t n_cand;
	struct frame_migrations done;
	migrate_move_fn move;
	void *move_ctx;
	/* One batch: pages of one pid. */
	void *pages[MIGRATE_BATCH];
	int nodes[MIGRATE_BATCH];
	int status[MIGRATE_BATCH];
};

static long
migrate_move_pages(void *ctx, int pid, unsigned long count, void **pages,
		   const int *nodes, int *status, int flags)
{
	return move_pages(pid, count, pages, nodes, status, flags);
}

struct migrate *
migrate_new(void)
{
	struct migrate *m = calloc(1, sizeof(*m));

	if (m)
		m->move = migrate_move_pages;
	return m;
}

void
migrate_free(struct migrate *m)
{
	if (!m)
		return;
	free(m->cand);
	free(m);
}

void
migrate_set_mover(struct migrate *m, migrate_move_fn fn, void *ctx)
{
	m->move = fn ? fn : migrate_move_pages;
	m->move_ctx = fn ? ctx : NULL;
}

/*
 * Node number the page's remote samples came from, or -1.  Two nodes: the
 * node that is not the page's.  More: the vote table's winner (which may
 * be the page's own node when local samples won the vote: no target).
 */
static int
migrate_target(const struct aggr *a, const struct frame_page *p,
	       unsigned shift)
{
	int here = topo_node_index(a->topo, p->node), idx;

	if (here < 0 || a->n_nodes < 2)
		return -1;
	if (a->n_nodes == 2)
		idx = 1 - here;
	else
		idx = cpuvote_top(a->cpuvote, p->pid, p->addr >> shift);
	if (idx < 0 || idx == here)
		return -1;
	return topo_node_id(a->topo, idx);
}

static int
migrate_cand_cmp(const void *pa, const void *pb)
{
	const struct migrate_cand *a = pa, *b = pb;
	uint64_t ga = a->remote - a->local, gb = b->remote - b->local;

	if (ga != gb)
		return ga > gb ? -1 : 1;
	if (a->remote != b->remote)
		return a->remote > b->remote ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

int
migrate_snapshot(struct migrate *m, const struct frame *f,
		 const struct aggr *a)
{
	unsigned shift = pagetab_page_shift(a->pages);
	struct migrate_cand *c = NULL;
	size_t n = 0;

	m->n_cand = 0;
	if (f->n_pages) {
		c = malloc(f->n_pages * sizeof(*c));
		if (!c)
			return -ENOMEM;
	}
	for (size_t i = 0; i < f->n_pages; i++) {
		const struct frame_page *p = &f->pages[i];
		int target;

		if (p->node < 0 || p->remote <= p->local)
			continue;
		target = migrate_target(a, p, shift);
		if (target < 0)
			continue;
		c[n++] = (struct migrate_cand){
			.pid = p->pid, .node = p->node, .target = target,
			.addr = p->addr, .local = p->local,
			.remote = p->remote,
		};
	}
	/* qsort must not be handed NULL, even for 0 elements (UBSan). */
	if (n)
		qsort(c, n, sizeof(*c), migrate_cand_cmp);
	free(m->cand);
	m->cand = c;
	m->n_cand = n;
	return 0;
}

size_t
migrate_n_candidates(const struct migrate *m)
{
	return m->n_cand;
}

static void
migrate_count(struct migrate *m, int status, int target)
{
	if (status == target)
		m->done.moved++;
	else if (status == -EBUSY)
		m->done.busy++;
	else if (status == -EPERM || status == -EACCES)
		m->done.denied++;
	else
		m->done.failed++;
}

/* move_pages never writes this; a slot still holding it was not done. */
#define MIGRATE_UNSET INT_MIN

/*
 * move_pages walks the pages in order and stops at the first one whose
 * node is bad (-ENODEV: no such node or no memory there; -EACCES: not in
 * the target's cpuset; -EFAULT), returning that error for the whole call
 * after storing the status of every page before it.  Such an error blames
 * that page alone: count it and go on with the pages after it.  Errors
 * found before the walk (-EPERM no ptrace access, -ESRCH gone, -EINVAL,
 * -ENOMEM) concern every page.
 */
static bool
migrate_page_error(int err)
{
	return err == ENODEV || err == EACCES || err == EFAULT;
}

/* move_pages for c[0..n), all of one pid, in calls of up to n pages. */
static void
migrate_batch(struct migrate *m, struct aggr *a, const struct migrate_cand *c,
	      size_t n)
{
	while (n > 0) {
		size_t first_unset = n;
		long ret;
		int err;

		for (size_t i = 0; i < n; i++) {
			m->pages[i] = (void *)(uintptr_t)c[i].addr;
			m->nodes[i] = c[i].target;
			m->status[i] = MIGRATE_UNSET;
		}
		errno = 0;
		ret = m->move(m->move_ctx, c[0].pid, (unsigned long)n,
			      m->pages, m->nodes, m->status, MPOL_MF_MOVE);
		err = errno ? errno : EINVAL;
		for (size_t i = 0; i < n; i++) {
			if (m->status[i] == MIGRATE_UNSET) {
				if (first_unset == n)
					first_unset = i;
				continue;
			}
			migrate_count(m, m->status[i], c[i].target);
			/* Samples from now on land on the new node. */
			if (m->status[i] == c[i].target)
				aggr_set_node(a, c[i].pid, c[i].addr,
					      c[i].target);
		}
		if (first_unset == n)
			return;
		if (ret >= 0 || !migrate_page_error(err)) {
			/* Refused as a whole (or a kernel that skipped
			 * slots): every page left gets the error. */
			for (size_t i = first_unset; i < n; i++)
				if (m->status[i] == MIGRATE_UNSET)
					migrate_count(m, ret >= 0 ? -EINVAL :
						      -err, c[i].target);
			return;
		}
		migrate_count(m, -err, c[first_unset].target);
		c += first_unset + 1;
		n -= first_unset + 1;
	}
}

static int
migrate_pid_cmp(const void *pa, const void *pb)
{
	const struct migrate_cand *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Moves c[0..n): a copy sorted by pid, one batch per pid run. */
static void
migrate_run(struct migrate *m, struct aggr *a, const struct migrate_cand *c,
	    size_t n)
{
	struct migrate_cand *s = malloc(n * sizeof(*s));

	if (!s) {
		m->done.failed += n;
		return;
	}
	memcpy(s, c, n * sizeof(*s));
	qsort(s, n, sizeof(*s), migrate_pid_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && j - i < MIGRATE_BATCH && s[j].pid == s[i].pid)
			j++;
		migrate_batch(m, a, s + i, j - i);
		i = j;
	}
	free(s);
}

size_t
migrate_top(struct migrate *m, struct aggr *a, size_t n)
{
	if (n == 0 || n > m->n_cand)
		n = m->n_cand;
	if (n == 0)
		return 0;
	migrate_run(m, a, m->cand, n);
	memmove(m->cand, m->cand + n, (m->n_cand - n) * sizeof(*m->cand));
	m->n_cand -= n;
	return n;
}

size_t
migrate_page(struct migrate *m, struct aggr *a, int32_t pid, uint64_t addr)
{
	uint64_t base = addr >> pagetab_page_shift(a->pages) <<
			pagetab_page_shift(a->pages);

	for (size_t i = 0; i < m->n_cand; i++) {
		if (m->cand[i].pid != pid || m->cand[i].addr != base)
			continue;
		migrate_run(m, a, &m->cand[i], 1);
		memmove(m->cand + i, m->cand + i + 1,
			(m->n_cand - i - 1) * sizeof(*m->cand));
		m->n_cand--;
		return 1;
	}
	m->done.skipped++;
	return 0;
}

void
migrate_take(struct migrate *m, struct frame_migrations *out)
{
	*out = m->done;
	memset(&m->done, 0, sizeof(m->done));
}
