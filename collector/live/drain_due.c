/*
 * The collector's drains between frames: rings whose task records wake
 * nobody, rings holding samples whose nodes are due, and channels of
 * exited threads; and when the loop wakes for them.  Collector thread
 * only.  See collector_int.h.
 */
#include "config.h"

#include <math.h>

#include "aggr.h"
#include "chanset.h"
#include "channel.h"
#include "collector_int.h"
#include "ring.h"

/* Rings whose FORK records wake nobody (no task ring): drained each poll
 * period, so a new thread's channel opens within COLLECTOR_POLL_MS however
 * quiet its siblings are. */
void
collector_sweep(struct collector *c)
{
	collector_drain_if(c, channel_tasks_in_ring);
}

static bool
collector_ring_pending(const struct channel *ch)
{
	return ring_pending(channel_ring((struct channel *)ch));
}

/* Rings holding samples, drained so their pages' nodes are asked while
 * their process lives (COLLECTOR_NODES_MS). */
void
collector_drain_pending(struct collector *c)
{
	collector_drain_if(c, collector_ring_pending);
	aggr_flush(&c->aggr);
}

/* Closes the channels whose thread exited, after a last drain. */
void
collector_close_exited(struct collector *c)
{
	for (size_t i = chanset_count(c->cs); i-- > 0;) {
		struct channel *ch = chanset_at(c->cs, i);

		if (channel_exited(ch)) {
			collector_drain(c, ch);
			collector_sync_lost(c, ch);
			chanset_remove(c->cs, ch);
		}
	}
}

/* When the loop must wake next: a frame, a rescan, a re-arm, a sweep
 * of rings without a task ring, a drain for pending page nodes. */
double
collector_wake(const struct collector *c, double next_frame,
	       double next_sweep, double next_nodes)
{
	double wake = fmin(next_frame, c->next_rescan);

	wake = fmin(wake, collector_rearm_due(c));
	/* Without channels, only a rescan tells the target's exit (or a
	 * new thread): poll as often as the sweep. */
	if ((chanset_n_untasked(c->cs) ||
	     (chanset_count(c->cs) == 0 && !c->damon)) && next_sweep < wake)
		wake = next_sweep;
	if (c->nodemap && next_nodes < wake)
		wake = next_nodes;
	return wake;
}
