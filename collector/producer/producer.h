/*
 * The frame producer: what the live collector and replay share.  Each is
 * a thread that applies commands from the UI, aggregates samples, builds
 * one frame per interval and hands it to the UI through the frame queue
 * (docs/design.md, "Frames and commands").  The embedding object (struct
 * collector, struct replay) puts a struct producer inside itself and
 * gives the operations that differ: the thread's body, the commands only
 * it knows, and how it is freed.
 *
 * Set up on the main thread; between producer_start() and producer_join()
 * only the producer's own thread touches it.
 */
#ifndef MEMTOP_PRODUCER_H
#define MEMTOP_PRODUCER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sortkey.h"

struct aggr;
struct cmd;
struct frame;
struct frame_meta;
struct producer;
struct queue;

struct producer_ops {
	const char *thread_name;	/* for top -H and perf --tid */
	/* The thread's body: 0 or -errno (what producer_join returns). */
	int (*run)(struct producer *p);
	/* A command that is not common to every producer (see
	 * producer_commands). */
	void (*apply)(struct producer *p, const struct cmd *cmd);
	/* Frees the embedding object; the thread has been joined. */
	void (*destroy)(struct producer *p);
};

struct producer {
	const struct producer_ops *ops;
	struct queue *frames;	/* out: struct frame *; the UI frees them */
	struct queue *cmds;	/* in: struct cmd */
	bool batch;		/* never skip a frame: wait for room */
	enum sort_key sort;	/* the frame's page order */
	size_t top_k;		/* pages per frame */
	int32_t pages_pid;	/* CMD_PAGES_OF: that pid's pages only; 0 all */
	bool quit;		/* CMD_QUIT seen: publish the final frame */
	uint64_t seq;		/* of the last frame built */
	uint64_t skipped;	/* frames dropped since the last published */
	pthread_t thread;
	bool started;
	int result;
};

/* Fills p for ops; frames, cmds, batch, sort and top_k as configured. */
void producer_init(struct producer *p, const struct producer_ops *ops,
		   struct queue *frames, struct queue *cmds, bool batch,
		   enum sort_key sort, size_t top_k);

int producer_start(struct producer *p);
/* Waits for the thread; its result (0 or -errno).  Idempotent. */
int producer_join(struct producer *p);
/* Joins if started, then frees the embedding object.  NULL-safe. */
void producer_free(struct producer *p);

/*
 * Applies the commands queued now, not those pushed meanwhile: a UI that
 * keeps pushing must not keep the producer from draining and publishing
 * (the queue's eventfd stays readable while commands remain).  Sort, top
 * and quit are applied here; every other command goes to ops->apply.
 */
void producer_commands(struct producer *p);

/*
 * Builds the next frame from a: m's seq, sort, top_k come from p; the
 * caller fills the rest of m.  The frame carries the count of frames
 * skipped since the last one.  NULL when out of memory.
 */
struct frame *producer_build(struct producer *p, struct aggr *a,
			     struct frame_meta *m);

/*
 * Whether a frame built now would reach the UI.  False only for the TUI
 * while the UI has not taken the frames queued before: the caller then
 * builds no frame and leaves its interval running, so the next frame
 * covers both intervals and no count is lost (the skipped tick is
 * counted in that frame's skipped).  A final frame is always built.
 */
bool producer_room(struct producer *p, bool final);

/*
 * Hands f to the UI.  Batch waits for room, applying commands meanwhile
 * so that a quit still gets through; so does the TUI's final frame until
 * the UI asks to quit (it takes nothing more then: the frame is dropped).
 * Any other TUI frame that finds the queue full (a caller that did not
 * ask producer_room) is dropped, counted in the next frame's skipped.
 * 0.
 */
int producer_publish(struct producer *p, struct frame *f);

#endif
