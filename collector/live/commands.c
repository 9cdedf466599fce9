/*
 * Collector: the UI's commands (period, pause, reset, sort, top, quit,
 * granularity, migrations), taken from the command queue.  See
 * collector_int.h.  Collector thread only.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "aggr_granularity.h"
#include "cmd.h"
#include "collector_int.h"
#include "granularity.h"
#include "log.h"
#include "procfs.h"
#include "queue.h"
#include "source.h"

/*
 * IOC_PERIOD does not reach inherited copies, so a period change moves a
 * launched command to per-thread channels: open them disabled at the new
 * period, stop the inherited ones (DISABLE reaches the copies), then
 * enable.  Samples in between are missed, none counted twice.
 */
static int
collector_leave_inherit(struct collector *c, uint64_t period)
{
	if (period == 0)
		return -EINVAL;
	chanset_set_default_period(c->cs, period);
	c->inherit = false;
	for (size_t i = 0; i < c->n_targets; i++) {
		char msg[256];
		struct collector_scan s = { .c = c, .pid = c->targets[i].pid,
					    .start = CHANSET_START_DISABLED,
					    .err = msg, .errlen = sizeof(msg) };
		int n;

		if (!c->targets[i].alive)
			continue;
		collector_proc_begin(c);
		n = procfs_tasks(s.pid, collector_scan_thread, &s);
		collector_proc_end(c);
		if (n >= 0)
			collector_scanned(&c->targets[i], &s);
	}
	chanset_enable(c->cs, false, CHANSET_CPUS);
	for (size_t i = 0; i < chanset_count(c->cs); i++) {
		struct channel *ch = chanset_at(c->cs, i);

		if (channel_cpu(ch) >= 0) {
			collector_drain(c, ch);
			channel_mark_exited(ch);
		}
	}
	log_msg("period %llu: moved to per-thread channels",
		(unsigned long long)period);
	return c->paused ? 0 : chanset_enable(c->cs, true, CHANSET_THREADS);
}

void
collector_apply(struct producer *p, const struct cmd *cmd)
{
	struct collector *c = collector_of(p);
	uint64_t period;
	int ret = 0;

	switch (cmd->type) {
	case CMD_SET_PERIOD:
		/* What the PMU accepts (IBS: multiple of 16, >= 0x90); the
		 * header shows the period in force. */
		period = cmd->value ? source_period(c->cfg.src, cmd->value) : 0;
		if (c->inherit) {
			ret = collector_leave_inherit(c, period);
			break;
		}
		ret = chanset_set_period(c->cs, period);
		if (ret < 0)
			log_msg("period %llu refused: %s",
				(unsigned long long)period,
				strerror(-ret));
		break;
	case CMD_PAUSE:
	case CMD_RESUME:
	case CMD_TOGGLE_PAUSE:
		if (cmd->type == CMD_PAUSE)
			c->paused = true;
		else if (cmd->type == CMD_RESUME)
			c->paused = false;
		else
			c->paused = !c->paused;
		ret = chanset_enable(c->cs, !c->paused, CHANSET_ALL);
		break;
	case CMD_RESET:
		collector_drain_all(c);
		/* What the drain threads drained during its merge is from
		 * before the reset too. */
		collector_par_merge(c);
		aggr_reset(&c->aggr);
		break;
	case CMD_SET_GRANULARITY:
		/* The drain threads' samples at the old page size first;
		 * their shards are of that size: a new pool at the next
		 * drain on threads. */
		collector_par_merge(c);
		collector_par_stop(c);
		ret = aggr_granularity_apply(&c->aggr, (unsigned)cmd->value,
					c->cfg.max_pages);
		break;
	case CMD_MIGRATE:
		if (cmd->addr)
			migrate_page(c->migrate, &c->aggr, cmd->pid, cmd->addr);
		else
			migrate_top(c->migrate, &c->aggr, (size_t)cmd->value);
		break;
	default:
		break;		/* replay only, or common (producer.c) */
	}
	if (ret < 0)
		log_msg("command %d: %s", (int)cmd->type, strerror(-ret));
}
