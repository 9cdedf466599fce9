/*
 * The collector's drains between frames: rings whose task records wake
 * nobody, rings holding samples whose nodes are due, and channels of
 * exited threads.  Collector thread only.  See collector_int.h.
 */
#include "config.h"

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
	for (size_t i = 0; i < chanset_count(c->cs); i++) {
		struct channel *ch = chanset_at(c->cs, i);

		if (channel_tasks_in_ring(ch))
			collector_drain(c, ch);
	}
}

/* Rings holding samples, drained so their pages' nodes are asked while
 * their process lives (COLLECTOR_NODES_MS). */
void
collector_drain_pending(struct collector *c)
{
	for (size_t i = 0; i < chanset_count(c->cs); i++)
		if (ring_pending(channel_ring(chanset_at(c->cs, i))))
			collector_drain(c, chanset_at(c->cs, i));
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
