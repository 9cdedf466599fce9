/*
 * The replay thread for `memtop -i FILE`: the collector's shape (frames
 * out, commands in, the same aggregation and frame builder) fed from a
 * perf.data reader instead of rings.  One frame per interval of recorded
 * time, cut at the samples' TIME values.
 *
 * Batch: as fast as possible, never skipping a frame.  TUI: at recorded
 * speed; commands pause it, double or halve the speed, or run to the end
 * at full speed (the TUI then skips the frames it cannot keep up with).
 *
 * Page nodes come from PHYS_ADDR and the file's MEM_TOPOLOGY when both
 * exist, else they are unknown (no move_pages: the pages are gone).
 *
 * Set up on the main thread; then its producer (replay_producer) is
 * started, joined and freed like the live collector's (producer.h), and
 * only the replay thread touches it in between.
 */
#ifndef MEMTOP_REPLAY_H
#define MEMTOP_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "sortkey.h"

struct perfdata_reader;
struct producer;
struct queue;
struct replay;
struct topo;

struct replay_config {
	struct perfdata_reader *reader;	/* outlives the replay */
	const struct topo *topo;	/* the recording's; outlives it */
	const char *path;		/* for the header and messages */
	double interval_s;
	size_t top_k;
	enum sort_key sort;
	size_t max_pages;		/* 0 = unlimited */
	bool batch;
	bool no_files;			/* names from records, no ELF read */
	struct queue *frames;		/* out: struct frame * */
	struct queue *cmds;		/* in: struct cmd */
};

int replay_new(struct replay **out, const struct replay_config *cfg,
	       char *err, size_t errlen);
/* The frame producer: producer_start, producer_join (0 or -errno; a
 * reader error is reported in the final frame instead), producer_free. */
struct producer *replay_producer(struct replay *r);

#endif
