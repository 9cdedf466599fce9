/*
 * -e damon in the live collector: memtop's own kdamond (collector/
 * sources/damon.h), started with the collector thread and stopped with
 * it, and its region snapshot read into the aggregation at every frame.
 * Collector thread only.
 *
 * A vaddr kdamond watches the processes (-p PID..., or -- COMMAND and the
 * processes it starts, damonfeed_regions.c): one DAMON target each.  A
 * region [start, end) accessed in k of the aggregation's sampling
 * intervals becomes k samples of kind `other` at its first page, for its
 * target's process, with no CPU (DAMON does not say which CPU touched it):
 * its share of the frame is its share of the accesses DAMON saw, its node
 * is its first page's (move_pages, as for every sample), and the frame's
 * page entry gets the region's size, age and the nodes of a few of its
 * pages.  Regions split and merge between snapshots, so a page's total
 * adds up the regions that started there.
 *
 * Under -a the kdamond is a paddr one over the RAM of /proc/iomem: a
 * region's samples go to pid 0, the "[physical]" process row, at its
 * physical address, whose node the memory-block map gives directly.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"
#include "damon.h"
#include "frame.h"
#include "log.h"
#include "source.h"

/* Sampling interval at period 1 (DAMON's default); the aggregation
 * interval is DAMONFEED_CHECKS of them, so a region's rate is k of 20. */
#define DAMONFEED_SAMPLE_US	5000u
#define DAMONFEED_UPDATE_US	1000000u
/* The process row of a paddr kdamond's samples. */
#define DAMONFEED_PHYS_PID	0
#define DAMONFEED_PHYS_COMM	"[physical]"

static void
damonfeed_intervals(uint64_t period, uint64_t *sample_us, uint64_t *aggr_us)
{
	*sample_us = DAMONFEED_SAMPLE_US * (period ? period : 1);
	*aggr_us = *sample_us * DAMONFEED_CHECKS;
}

/* The paddr kdamond's setup: the RAM ranges, the process row. */
static int
damonfeed_paddr(struct collector *c, struct damon_opts *o,
		uint64_t (**ranges)[2])
{
	int ret = damonfeed_iomem_read(&c->iomem, ranges, &o->n_ranges,
				       c->error, sizeof(c->error));

	if (ret < 0)
		return ret;
	o->paddr = true;
	o->ranges = (const uint64_t (*)[2])*ranges;
	return 0;
}

/* The vaddr kdamond's processes: every target alive now, in a new
 * array (*n of them), or NULL for want of memory. */
static pid_t *
damonfeed_pids(const struct collector *c, size_t *n)
{
	pid_t *p = calloc(c->n_targets ? c->n_targets : 1, sizeof(*p));

	*n = 0;
	for (size_t i = 0; p && i < c->n_targets; i++)
		if (c->targets[i].alive)
			p[(*n)++] = c->targets[i].pid;
	return p;
}

/* At the collector thread's start: the kdamond on the targets (-a: on
 * the machine's RAM). */
int
collector_damon_start(struct collector *c)
{
	struct damon_opts o = { .update_us = DAMONFEED_UPDATE_US };
	uint64_t (*ranges)[2] = NULL;
	int ret;

	if (!c->cfg.src->damon)
		return 0;
	if (c->damon_paddr) {
		ret = damonfeed_paddr(c, &o, &ranges);
		if (ret < 0)
			return ret;
	} else if (!(c->damon_pids = damonfeed_pids(c, &c->n_damon_pids))) {
		snprintf(c->error, sizeof(c->error), "out of memory");
		return -ENOMEM;
	}
	if (!c->damon_paddr && c->n_damon_pids == 0) {
		snprintf(c->error, sizeof(c->error), "damon: no process left "
			 "to watch");
		return -ESRCH;
	}
	o.pids = c->damon_pids;
	o.n_pids = c->n_damon_pids;
	c->damon_period = chanset_period(c->cs);
	damonfeed_intervals(c->damon_period, &o.sample_us, &o.aggr_us);
	c->damon_aggr_us = o.aggr_us;
	ret = damon_start(&c->damon, &o, c->error, sizeof(c->error));
	free(ranges);
	if (ret == 0) {
		c->kdamond = damon_kdamond_pid(c->damon);
		log_msg("damon: kdamond pid %d, %s, sampling every %llu us",
			(int)c->kdamond, c->damon_paddr ? "paddr" : "vaddr",
			(unsigned long long)o.sample_us);
	}
	return ret;
}

void
collector_damon_stop(struct collector *c)
{
	damon_stop(c->damon);
	c->damon = NULL;
	free(c->regs);
	c->regs = NULL;
	c->regs_cap = c->n_regs = 0;
	free(c->damon_pids);
	c->damon_pids = NULL;
	c->n_damon_pids = 0;
	damonfeed_iomem_free(c->iomem);
	c->iomem = NULL;
}

/* CPU time (ns) of the kdamond so far, from /proc/PID/stat; 0 unknown. */
static uint64_t
damonfeed_kdamond_ns(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* After "(comm)": state, then 10 fields up to utime and stime. */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
			 "%*u %llu %llu", &ut, &st) != 2)
		return 0;
	return (ut + st) * (1000000000ull / 100);
}

/* A new period reaches the kdamond's intervals; new processes of a
 * launched command become its targets. */
static void
damonfeed_update(struct collector *c)
{
	char why[256];
	pid_t *pids;
	size_t n;

	if (chanset_period(c->cs) != c->damon_period) {
		uint64_t s_us, a_us;

		c->damon_period = chanset_period(c->cs);
		damonfeed_intervals(c->damon_period, &s_us, &a_us);
		if (damon_set_intervals(c->damon, s_us, a_us) < 0)
			log_msg("damon: cannot change the intervals");
		else
			c->damon_aggr_us = a_us;
	}
	if (c->damon_paddr || !damonfeed_follow_children(c) ||
	    !(pids = damonfeed_pids(c, &n)))
		return;
	/* The kdamond keeps its old targets when the commit fails. */
	if (damon_set_pids(c->damon, pids, n, why, sizeof(why)) < 0) {
		log_msg("%s", why);
		free(pids);
		return;
	}
	free(c->damon_pids);
	c->damon_pids = pids;
	c->n_damon_pids = n;
	log_msg("damon: %zu processes watched", n);
}

/*
 * Before a frame: the kdamond's current regions into the aggregation,
 * each as its process's samples (a region of a target memtop no longer
 * knows is unattributed).
 */
void
collector_damon_drain(struct collector *c)
{
	int n;

	/* After a quit the final frame reads no snapshot: one waits for
	 * the kdamond's next aggregation, which under load (paddr checks
	 * walk reverse maps) can outlast the UI's wait for that frame. */
	if (!c->damon || c->prod.quit)
		return;
	damonfeed_update(c);
	n = damon_snapshot(c->damon, &c->regs, &c->regs_cap, c->damon_why,
			   sizeof(c->damon_why));
	if (n < 0) {
		/* The kdamond stops by itself when its targets exit. */
		c->n_regs = 0;
		return;
	}
	c->n_regs = (size_t)n;
	c->damon_why[0] = '\0';
	if (c->paused)
		return;
	/* Again at each frame: a reset may have dropped the row. */
	if (c->damon_paddr)
		aggr_proc_virtual(&c->aggr, DAMONFEED_PHYS_PID,
				  DAMONFEED_PHYS_COMM);
	for (size_t i = 0; i < c->n_regs; i++) {
		const struct damon_region *r = &c->regs[i];
		struct sample s = { .addr = r->start, .period = 1,
				    .cpu = -1, .kind = SAMPLE_OTHER };

		if (c->damon_paddr) {
			s.pid = s.tid = DAMONFEED_PHYS_PID;
			s.phys_addr = r->start;
		} else if (r->target < c->n_damon_pids) {
			s.pid = s.tid = c->damon_pids[r->target];
		} else {
			aggr_count_unattributed(&c->aggr, r->nr_accesses);
			continue;
		}
		for (uint32_t k = 0; k < r->nr_accesses; k++)
			aggr_add(&c->aggr, &s);
	}
}

/* The frame's note: the source's, then this interval's DAMON figures. */
const char *
collector_damon_note(struct collector *c, const char *src_note)
{
	uint64_t ns = c->kdamond > 0 ? damonfeed_kdamond_ns(c->kdamond) : 0;
	uint64_t s_us, a_us;
	char what[64];

	damonfeed_intervals(c->damon_period, &s_us, &a_us);
	if (c->damon_paddr)
		snprintf(what, sizeof(what), "paddr: physical memory, in the "
			 "[physical] row");
	else
		snprintf(what, sizeof(what), "vaddr on %zu process(es)",
			 c->n_damon_pids);
	snprintf(c->damon_note, sizeof(c->damon_note),
		 "%s; %s; %zu regions, sampled every %llu us, %u checks per "
		 "aggregation; kdamond %d CPU %.1f ms this interval%s%s",
		 src_note, what, c->n_regs, (unsigned long long)s_us,
		 DAMONFEED_CHECKS, (int)c->kdamond,
		 (double)(ns - c->kdamond_ns) / 1e6,
		 c->damon_why[0] ? "; last snapshot: " : "", c->damon_why);
	c->kdamond_ns = ns;
	return c->damon_note;
}
