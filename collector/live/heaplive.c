/*
 * --heap-objects at run time (issue 18): the object tables set up, and at
 * each frame the allocation rate, what it costs the target (the rate
 * times the cost measured at start, heapprobe.h), memtop's own CPU, and
 * the choice to sample: when every allocation would slow the target by
 * more than HEAP_MAX_COST, the allocating functions' entry probes record
 * every Nth call (the kernel's sample period), returns and frees still
 * every one.  The probes' traps are paid at every call regardless: the
 * note says what sampling cannot save.  Collector thread only (set-up:
 * main thread, before it starts).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "chanset.h"
#include "collector_int.h"
#include "log.h"
#include "textbuf.h"

#define HEAPLIVE_MAX_EVERY 1000

static bool
heaplive_probes(const struct source *src)
{
	for (size_t i = 0; i < src->n_alloc; i++)
		if (src->alloc[i].heap_fn != HEAP_NONE)
			return true;
	return false;
}

bool
collector_inherit_ok(const struct source *src)
{
	if (heaplive_probes(src))
		return false;
	for (size_t i = 1; i < src->n_events; i++)
		if (strcmp(src->events[i].pmu, src->events[0].pmu) != 0)
			return false;
	return true;
}

int
collector_objects_init(struct collector *c)
{
	const struct collector_config *cfg = &c->cfg;
	int ret;

	c->heap.period = cfg->heap.every ? cfg->heap.every : 1;
	c->heap.at = base_now_s();
	if (!cfg->src->n_alloc)
		return 0;
	ret = allocs_init(&c->allocs, COLLECTOR_MAX_OBJECTS);
	if (ret < 0)
		return ret;
	c->aggr.objects = c->allocs.objs;
	if (!heaplive_probes(cfg->src))
		return 0;
	ret = heapobjs_init(&c->heap_objs, c->allocs.objs, c->allocs.unw,
			    COLLECTOR_MAX_OBJECTS, cfg->heap.min_size);
	if (ret < 0)
		return ret;
	c->aggr.heap_objects = c->heap_objs.objs;
	return 0;
}

/* The target's slowdown at `rate` allocations/s recording every
 * `every`th. */
static double
heaplive_cost(const struct heap_cost *k, double rate, uint64_t every)
{
	double ns = (double)k->trap_ns +
		    (double)(k->full_ns - k->trap_ns) / (double)every;

	return rate * ns / 1e9;
}

/* Automatic sampling: the smallest N that keeps the cost under the
 * limit, back to every allocation once half of it would do. */
static uint64_t
heaplive_choose(const struct heap_cost *k, double rate, uint64_t now)
{
	double room = HEAP_MAX_COST * 1e9 - rate * (double)k->trap_ns;
	double n;

	if (heaplive_cost(k, rate, 1) <= HEAP_MAX_COST / 2)
		return 1;
	if (heaplive_cost(k, rate, now) <= HEAP_MAX_COST && now > 1)
		return now;
	if (heaplive_cost(k, rate, 1) <= HEAP_MAX_COST)
		return now;
	if (room <= 0)
		return HEAPLIVE_MAX_EVERY;
	n = ceil(rate * (double)(k->full_ns - k->trap_ns) / room);
	return n < 2 ? 2 : n > HEAPLIVE_MAX_EVERY ? HEAPLIVE_MAX_EVERY :
							 (uint64_t)n;
}

void
collector_heap_tick(struct collector *c)
{
	const struct heap_cost *k = &c->cfg.heap_cost;
	const struct heap_stats *st = &c->heap_objs.st;
	double now = base_now_s(), dt = now - c->heap.at;
	uint64_t cpu = base_clock_ns(CLOCK_THREAD_CPUTIME_ID), every;
	double rate, cpu_pct;

	if (!c->heap_objs.objs || dt <= 0)
		return;
	/* Entries are recorded 1 in period: the calls made are that many
	 * times more. */
	rate = (double)(st->calls - c->heap.calls_at) *
	       (double)c->heap.period / dt;
	cpu_pct = 100.0 * (double)(cpu - c->heap.cpu_at) / 1e9 / dt;
	c->heap.calls_at = st->calls;
	c->heap.cpu_at = cpu;
	c->heap.at = now;
	every = c->cfg.heap.every ? c->cfg.heap.every :
				    heaplive_choose(k, rate, c->heap.period);
	if (every != c->heap.period) {
		c->heap.period = every;
		log_msg("heap objects: recording every %llu allocation "
			"entry from now", (unsigned long long)every);
	}
	/* New channels open at the source's period: every frame. */
	for (size_t i = 0; i < chanset_count(c->cs); i++)
		(void)channel_alloc_heap_period(chanset_at(c->cs, i),
						c->heap.period);
	c->heap_objs.sampled = c->heap.period > 1;
	snprintf(c->heap.note, sizeof(c->heap.note),
		 "heap objects: %.0f allocations/s, +%llu ns each "
		 "(measured at start): target +%.1f %% (its time in the "
		 "probes), memtop %.1f %% CPU; %s",
		 rate, (unsigned long long)k->full_ns,
		 100.0 * heaplive_cost(k, rate, c->heap.period), cpu_pct,
		 c->heap.period == 1 ? "every allocation" : "");
	if (c->heap.period > 1)
		textbuf_appendf(c->heap.note, sizeof(c->heap.note),
				"sampled: 1 allocation in %llu%s",
				(unsigned long long)c->heap.period,
				c->cfg.heap.every ? "" : " (every one would "
				"cost the target more than 5 %)");
	if (c->heap.period > 1 &&
	    heaplive_cost(k, rate, 1000000) > HEAP_MAX_COST)
		textbuf_appendf(c->heap.note, sizeof(c->heap.note),
				"; the traps alone cost %.1f %%: sampling "
				"cannot help",
				100.0 * heaplive_cost(k, rate, 1000000));
}
