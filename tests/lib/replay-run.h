/*
 * One replay of a perf.data file, as memtop -i runs it, for the tests and
 * benchmarks that drive collector/replay directly: open the file, its
 * topology and the replay with its queues, start the producer, take its
 * frames until the final one, join and free.
 */
#ifndef MEMTOP_TEST_REPLAY_RUN_H
#define MEMTOP_TEST_REPLAY_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "replay.h"

struct frame;

struct replay_run {
	struct replay_config cfg;	/* set by replay_run_open */
	struct perfdata_reader *reader;
	struct topo *topo;
	struct replay *rp;
};

/*
 * Opens path for a replay: frames_cap frames may wait in the queue,
 * frames every interval_s, top_k pages each; batch: wait for the reader
 * of the frames (memtop -b) rather than skip frames (the TUI).  With
 * end, the replay is told to end at the end of the file (as -b is).
 * 0, or -1 with err set.  replay_run_close frees it either way.
 */
int replay_run_open(struct replay_run *rr, const char *path,
		    size_t frames_cap, double interval_s, size_t top_k,
		    bool batch, bool end, char *err, size_t errlen);
/* Starts the replay, then gives each frame to fn (until the final one;
 * fn may sleep) and frees it, then joins the replay.  Returns the
 * producer's status, or -1 when it did not start. */
int replay_run_frames(struct replay_run *rr,
		      void (*fn)(const struct frame *f, void *ctx), void *ctx);
void replay_run_close(struct replay_run *rr);

#endif
