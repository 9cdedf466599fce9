/*
 * Replay: the callers of code sites in a capture recorded with user
 * stacks (`perf record --call-graph dwarf`), whose call chains hold only
 * the kernel's frames.  See replay_int.h.  Replay thread
 * (replay_callers_setup on the main thread, before it starts).
 *
 * A code site's first sample with a user stack is walked by the unwind
 * helper with the CFI of the capture's own files (src/names/unwind.h),
 * for the frame past the sampled instruction: its return address is the
 * site's caller, as a frame-pointer chain's would be
 * (record_callchain_caller).  A site whose walk finds none is noted
 * (callers_none) and walked again at a later sample, at most
 * REPLAY_CALLER_TRIES times, so the walks are bounded by the sites
 * (CALLERS_MAX; a new site past that is not walked, counted), not the
 * samples.
 */
#include "config.h"

#include <errno.h>

#include "callers.h"
#include "log.h"
#include "names.h"
#include "replay_int.h"
#include "sides.h"
#include "unwind.h"

/* Frames of a walk: the sampled one and its caller. */
#define REPLAY_CALLER_FRAMES	2
/* Walks of one code site before it is given up: a walk can fail for a
 * while (the helper restarting, a module names has not opened yet under
 * its ELF budget), so a site is walked again at a later sample, with its
 * process's modules read again. */
#define REPLAY_CALLER_TRIES	3

int
replay_callers_setup(struct replay *r)
{
	const uint64_t need = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	struct sides *s = aggr_sides(&r->aggr);
	bool stacks = false;

	for (size_t i = 0; i < r->n_events; i++) {
		const struct replay_event *ev = &r->events[i];

		if (!ev->alloc && !ev->heap &&
		    (ev->layout.sample_type & need) == need)
			stacks = true;
	}
	if (!stacks || !s || !sides_names(s))
		return 0;
	r->unw_callers = unwinder_new();
	if (!r->unw_callers)
		return -ENOMEM;
	unwind_use_names(r->unw_callers, sides_names(s));
	return 0;
}

/* A site with nothing to walk from: given up at once. */
static void
replay_callers_give_up(struct callers *c, int32_t pid, uint64_t ip)
{
	for (int i = 0; i < REPLAY_CALLER_TRIES; i++)
		if (callers_none(c, pid, ip) == 0)
			break;
}

void
replay_callers_walk(struct replay *r, const struct replay_event *ev,
		    const struct record_sample *rs, const struct sample *smp)
{
	struct callers *c = &aggr_sides(&r->aggr)->callers;
	struct unwind_frame f[REPLAY_CALLER_FRAMES];
	uint64_t regs[UNWIND_REGS];
	uint32_t tries;
	int n;

	/* A 32-bit task's registers are i386's: not walked. */
	if (rs->regs_user_abi != PERF_SAMPLE_REGS_ABI_64 ||
	    rs->stack_user_dyn == 0)
		return;
	tries = callers_tries(c, smp->pid, smp->ip);
	if (tries >= REPLAY_CALLER_TRIES)
		return;		/* a caller, or given up */
	if (tries == 0 && !callers_room(c)) {
		/* A new site, the table full: no mark would stop the next
		 * sample's walk. */
		r->callers_no_room++;
		return;
	}
	if (!unwind_regs_from_perf(ev->layout.sample_regs_user,
				   rs->regs_user.p, rs->regs_user.n, regs) ||
	    (regs[16] != smp->ip && !(smp->ip >> 63))) {
		/* No stack or instruction pointer, or a user ip that is not
		 * the registers': nothing to walk from. */
		replay_callers_give_up(c, smp->pid, smp->ip);
		return;
	}
	/* A kernel ip: the first user frame past it is the user pc, as a
	 * call chain would give it. */
	if (regs[16] != smp->ip) {
		callers_note(c, smp->pid, smp->ip, regs[16]);
		return;
	}
	if (tries > 0)
		unwind_stale(r->unw_callers, smp->pid);
	r->callers_walked++;
	n = unwind_frames(r->unw_callers, smp->pid, smp->tid, regs,
			  rs->stack_user.p, rs->stack_user_dyn, f,
			  REPLAY_CALLER_FRAMES);
	/* The walk gives a caller's pc as its call (return address - 1). */
	if (n >= 2) {
		callers_note(c, smp->pid, smp->ip, f[1].pc + 1);
		r->callers_found++;
	} else {
		(void)callers_none(c, smp->pid, smp->ip);
	}
}

void
replay_callers_fini(struct replay *r)
{
	if (!r->unw_callers)
		return;
	log_msg("replay %s: %llu user stacks of code sites walked for their "
		"callers, %llu found; %llu samples of sites past the callers "
		"table's room not walked", r->cfg.path,
		(unsigned long long)r->callers_walked,
		(unsigned long long)r->callers_found,
		(unsigned long long)r->callers_no_room);
	unwinder_free(r->unw_callers);
	r->unw_callers = NULL;
}
