/*
 * -e damon in the live collector: memtop's own kdamond on the target
 * (collector/sources/damon.h), started with the collector thread and
 * stopped with it, and its region snapshot read into the aggregation at
 * every frame.  Collector thread only.
 *
 * A region [start, end) accessed in k of the aggregation's sampling
 * intervals becomes k samples of kind `other` at its first page, for the
 * target process, with no CPU (DAMON does not say which CPU touched it):
 * its share of the frame is its share of the accesses DAMON saw, its
 * node is its first page's (move_pages, as for every sample), and the
 * frame's page entry gets the region's size.  Regions split and merge
 * between snapshots, so a page's total adds up the regions that started
 * there.  One target: DAMON's tried regions do not say which target a
 * region belongs to.
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
#define DAMONFEED_CHECKS	20u
#define DAMONFEED_UPDATE_US	1000000u

static void
damonfeed_intervals(uint64_t period, uint64_t *sample_us, uint64_t *aggr_us)
{
	*sample_us = DAMONFEED_SAMPLE_US * (period ? period : 1);
	*aggr_us = *sample_us * DAMONFEED_CHECKS;
}

/* At the collector thread's start: the kdamond on the one target. */
int
collector_damon_start(struct collector *c)
{
	struct damon_opts o = { .update_us = DAMONFEED_UPDATE_US };
	pid_t pid;
	int ret;

	if (!c->cfg.src->damon)
		return 0;
	if (c->n_targets != 1) {
		snprintf(c->error, sizeof(c->error), "damon: one process at "
			 "a time (%zu targets)", c->n_targets);
		return -EINVAL;
	}
	pid = c->targets[0].pid;
	o.pids = &pid;
	o.n_pids = 1;
	c->damon_period = chanset_period(c->cs);
	damonfeed_intervals(c->damon_period, &o.sample_us, &o.aggr_us);
	ret = damon_start(&c->damon, &o, c->error, sizeof(c->error));
	if (ret == 0) {
		c->kdamond = damon_kdamond_pid(c->damon);
		log_msg("damon: kdamond pid %d on pid %d, sampling every %llu "
			"us", (int)c->kdamond, (int)pid,
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

/*
 * Before a frame: the kdamond's current regions into the aggregation (a
 * period change first reaches the kdamond's intervals).
 */
void
collector_damon_drain(struct collector *c)
{
	pid_t pid;
	int n;

	if (!c->damon)
		return;
	if (chanset_period(c->cs) != c->damon_period) {
		uint64_t s_us, a_us;

		c->damon_period = chanset_period(c->cs);
		damonfeed_intervals(c->damon_period, &s_us, &a_us);
		if (damon_set_intervals(c->damon, s_us, a_us) < 0)
			log_msg("damon: cannot change the intervals");
	}
	n = damon_snapshot(c->damon, &c->regs, &c->regs_cap, c->damon_why,
			   sizeof(c->damon_why));
	if (n < 0) {
		/* The kdamond stops by itself when its target exits. */
		c->n_regs = 0;
		return;
	}
	c->n_regs = (size_t)n;
	c->damon_why[0] = '\0';
	if (c->paused)
		return;
	pid = c->targets[0].pid;
	for (size_t i = 0; i < c->n_regs; i++) {
		const struct damon_region *r = &c->regs[i];

		for (uint32_t k = 0; k < r->nr_accesses; k++) {
			struct sample s = { .addr = r->start, .period = 1,
					    .pid = pid, .tid = pid,
					    .cpu = -1, .kind = SAMPLE_OTHER };

			aggr_add(&c->aggr, &s);
		}
	}
}

/* The region that starts at addr in the last snapshot; NULL none. */
static const struct damon_region *
damonfeed_find(const struct collector *c, uint64_t addr)
{
	size_t lo = 0, hi = c->n_regs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->regs[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n_regs && c->regs[lo].start == addr ? &c->regs[lo] :
							     NULL;
}

/* After a frame is built: each page entry's size is its region's. */
void
collector_damon_frame(struct collector *c, struct frame *f)
{
	for (size_t i = 0; c->damon && i < f->n_pages; i++) {
		const struct damon_region *r = damonfeed_find(c,
							      f->pages[i].addr);
		uint64_t len = r ? r->end - r->start : 0;

		if (r)
			f->pages[i].size = len > UINT32_MAX ? UINT32_MAX :
							     (uint32_t)len;
	}
}

/* The frame's note: the source's, then this interval's DAMON figures. */
const char *
collector_damon_note(struct collector *c, const char *src_note)
{
	uint64_t ns = c->kdamond > 0 ? damonfeed_kdamond_ns(c->kdamond) : 0;
	uint64_t s_us, a_us;

	damonfeed_intervals(c->damon_period, &s_us, &a_us);
	snprintf(c->damon_note, sizeof(c->damon_note),
		 "%s; %zu regions, sampled every %llu us, %u checks per "
		 "aggregation; kdamond %d CPU %.1f ms this interval%s%s",
		 src_note, c->n_regs, (unsigned long long)s_us,
		 DAMONFEED_CHECKS, (int)c->kdamond,
		 (double)(ns - c->kdamond_ns) / 1e6,
		 c->damon_why[0] ? "; last snapshot: " : "", c->damon_why);
	c->kdamond_ns = ns;
	return c->damon_note;
}
