/*
 * --rearm: soft-dirty re-arm of every live target (collector/sources/
 * softdirty.h), so that the faults source samples each page's first
 * write in every interval, not only its first touch.  Collector thread
 * only, apart from collector_rearm_setup (main thread, collector_new).
 *
 * The re-arm runs right after a frame is built (every frame), or every
 * cfg.rearm_s seconds; the time it takes is memtop's cost and the frame's
 * note says it, with what the samples mean and what they miss.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collector_int.h"
#include "log.h"
#include "softdirty.h"

void
collector_rearm_setup(struct collector *c)
{
	struct collector_rearm *r = &c->rearm;

	r->on = c->cfg.rearm_s != 0;
	if (!r->on)
		return;
	r->every_s = c->cfg.rearm_s;
	r->ok = softdirty_probe(r->why, sizeof(r->why)) == 0;
	if (!r->ok)
		log_msg("--rearm off: %s", r->why);
}

/* When the next re-arm is due (base_now_s() time); INFINITY: at frames
 * only, or never. */
double
collector_rearm_due(const struct collector *c)
{
	const struct collector_rearm *r = &c->rearm;

	if (!r->on || !r->ok || r->every_s <= 0)
		return INFINITY;
	return r->next;
}

/* Re-arms every live target now; `frame`: called at a frame boundary. */
void
collector_rearm(struct collector *c, double now, bool frame)
{
	struct collector_rearm *r = &c->rearm;
	uint64_t t0;
	uint32_t n = 0;

	if (!r->on || !r->ok)
		return;
	if (r->every_s > 0 ? now < r->next : !frame)
		return;
	if (r->every_s > 0)
		r->next = now + r->every_s;
	t0 = base_now_ns();
	collector_proc_begin(c);
	for (size_t i = 0; i < c->n_targets; i++) {
		struct target *t = &c->targets[i];
		int ret;

		if (!t->alive)
			continue;
		ret = softdirty_clear(t->pid);
		if (ret == 0) {
			n++;
			continue;
		}
		if (ret == -ENOENT || ret == -ESRCH)
			continue;	/* exited: the rescan will tell */
		r->failed++;
		if (!r->fail[0]) {
			softdirty_explain(-ret, t->pid, r->fail,
					  sizeof(r->fail));
			log_msg("--rearm: %s", r->fail);
		}
	}
	collector_proc_end(c);
	r->ns += base_now_ns() - t0;
	r->count++;
	r->targets = n;
}

/*
 * The frame's source note: what --rearm makes the samples mean, what they
 * miss and what it cost this interval (then the interval's figures start
 * again), followed by the source's own note.
 */
const char *
collector_rearm_note(struct collector *c, const char *src_note)
{
	struct collector_rearm *r = &c->rearm;
	char every[48];

	if (!r->ok) {
		snprintf(r->note, sizeof(r->note), "--rearm not available: "
			 "%s; %s", r->why, src_note);
		return r->note;
	}
	if (r->every_s > 0)
		snprintf(every, sizeof(every), "every %g s", r->every_s);
	else
		snprintf(every, sizeof(every), "every frame");
	snprintf(r->note, sizeof(r->note),
		 "--rearm: samples are the first write per page per interval "
		 "(soft-dirty re-armed %s), plus first touches; loads are not "
		 "seen; re-arm cost %.0f us for %u process(es), %u re-arm(s) "
		 "this interval%s%s [faults: %s]",
		 every, (double)r->ns / 1e3, r->targets, r->count,
		 r->fail[0] ? "; failed: " : "", r->fail, src_note);
	r->ns = 0;
	r->count = 0;
	return r->note;
}

/* The frame's note: --rearm's or DAMON's (each ends with the source's
 * own), then why objects are off (source_alloc.c), if they are, and
 * what --heap-objects costs (heaplive.c) or why it is off. */
const char *
collector_frame_note(struct collector *c, char *buf, size_t len)
{
	const struct source *src = c->cfg.src;
	const char *heap = c->heap.note;

	collector_heap_tick(c);
	if (!heap[0] && c->cfg.heap.on)
		heap = src->heap_note;	/* why there are none */
	snprintf(buf, len, "%s%s%s%s%s",
		 c->rearm.on ? collector_rearm_note(c, src->note) :
		 c->damon ? collector_damon_note(c, src->note) : src->note,
		 src->n_alloc || !src->alloc_note[0] ? "" : "; ",
		 src->n_alloc ? "" : src->alloc_note, heap[0] ? "; " : "",
		 heap);
	return buf;
}
