/*
 * Builds the immutable frame for one interval from the aggregation state.
 * Collector thread only; the result is handed over and never touched again.
 */
#ifndef MEMTOP_FRAMEBUILD_H
#define MEMTOP_FRAMEBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"

struct aggr;

/* What the collector knows that the aggregation does not. */
struct frame_meta {
	uint64_t seq;
	double time;
	double interval;
	bool final;
	bool paused;
	const char *source;
	const char *const *events;
	size_t n_events;
	const char *source_note;
	bool has_kinds;
	uint64_t period;
	enum sort_key sort;
	size_t top_k;
	int32_t pages_pid;			/* pages of this pid only; 0 all */
	const struct frame_target *targets;	/* copied */
	size_t n_targets;
	int exit_status;
	const char *error;			/* copied; NULL = none */
};

/*
 * Selects the top pages (re-asking the kernel for their nodes, batched, so
 * shown nodes are current), copies every per-CPU, per-node, per-thread and
 * matrix figure.  NULL on ENOMEM.
 */
struct frame *frame_build(struct aggr *a, const struct frame_meta *m);

#endif
