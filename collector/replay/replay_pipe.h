/*
 * The replay's second thread: the aggregation of decoded samples
 * (aggr_flush: page table, nodes, side tables) runs beside the reading,
 * ordering and decoding of the next ones.  Not for other modules: the
 * replay thread (replay.c, replay_feed.c) only.
 *
 * The replay thread decodes each sample into a batch of its own
 * (replay_pipe_slot, replay_pipe_commit) and hands a full batch over
 * through a ring of REPLAY_PIPE_SLOTS; the aggregation thread copies it
 * into the aggregation's own batch and flushes it, in the order handed
 * over.  Everything else that reads or writes the aggregation (a frame,
 * the records that act on it or on the names: LOST, THROTTLE, COMM,
 * EXIT, MMAP, FORK; a command; a new event; the allocation events,
 * callers) first waits until every batch handed over has been accounted
 * (replay_pipe_sync), and does so with the pipe off too, where it
 * flushes the aggregation's partial batch: batches are cut at the same
 * samples either way, so the frames are the same byte for byte
 * (tests/e2e/e2e-replay-pipe.sh).
 *
 * MEMTOP_REPLAY_THREADS: 1 keeps the aggregation on the replay thread,
 * 2 moves it to its own; unset, 2 when memtop may run on four CPUs or
 * more (replay_pipe.c says why not fewer).
 */
#ifndef MEMTOP_REPLAY_PIPE_H
#define MEMTOP_REPLAY_PIPE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aggr.h"
#include "sample.h"

/* Batches in flight, queued or being flushed: enough that the replay
 * thread runs on for a while when the other is off its CPU (with 4, a
 * replay beside a busy process on 2 CPUs took 0.53 s instead of 0.38). */
#define REPLAY_PIPE_SLOTS	32

/*
 * Three groups, each on cache lines of its own: a line that one thread
 * writes while the other reads it moves between their caches at every
 * write (the replay thread writes fill_n a sample; the aggregation
 * thread spins on head).
 */
#define REPLAY_PIPE_LINE	64

struct replay_pipe {
	/* The replay thread's own, read or written a sample. */
	_Alignas(REPLAY_PIPE_LINE) bool want;	/* a second thread asked for */
	bool on;		/* it runs and takes the batches */
	/* replay_pipe_stop was called (with the pipe off too, so that
	 * batches are cut at the same samples either way). */
	bool stopped;
	bool fill_weighs;
	uint32_t fill_n;
	/* The batch being filled, the replay thread's own: decoding into
	 * the ring itself wrote to lines the other thread had just read,
	 * a transfer between caches at each (source_decode took 30 % of
	 * the replay thread's time).  It goes to the ring in one copy that
	 * bypasses the caches (replay_pipe_publish). */
	struct sample *fill;
	/* Counted on the replay thread, added to the aggregation at the
	 * next sync (the aggregation thread writes its counts meanwhile). */
	uint64_t lost, unattributed;
	/* For the log: batches handed over, waits for the other thread. */
	uint64_t batches, rd_waits;
	struct sample (*buf)[AGGR_BATCH];	/* REPLAY_PIPE_SLOTS */
	pthread_t thread;
	/* Written by the replay thread a batch, read by the other. */
	_Alignas(REPLAY_PIPE_LINE) _Atomic uint64_t head; /* handed over */
	atomic_int agg_sleeps;	/* the aggregation thread sleeps */
	uint32_t n[REPLAY_PIPE_SLOTS];
	bool weighs[REPLAY_PIPE_SLOTS];
	/* Written by the aggregation thread a batch. */
	_Alignas(REPLAY_PIPE_LINE) _Atomic uint64_t tail; /* accounted */
	atomic_int rd_sleeps;	/* the replay thread sleeps */
	/* Rarely. */
	_Alignas(REPLAY_PIPE_LINE) atomic_bool quit;
	struct aggr *agg;	/* the aggregation thread's, while on */
	pthread_mutex_t mu;
	pthread_cond_t agg_wake, rd_wake;
};

/* MEMTOP_REPLAY_THREADS into p->want.  0 or -EINVAL (err). */
int replay_pipe_choose(struct replay_pipe *p, char *err, size_t errlen);
/* Starts the aggregation thread on a when p->want (a failure to start
 * leaves the pipe off, logged). */
void replay_pipe_start(struct replay_pipe *p, struct aggr *a);
/* Hands the partial batch over and waits until all are accounted; with
 * the pipe off, flushes a's partial batch.  Then adds the counts kept
 * aside.  After it, the replay thread may touch a. */
void replay_pipe_sync(struct replay_pipe *p, struct aggr *a);
/* Syncs and keeps the aggregation on the replay thread from now on. */
void replay_pipe_stop(struct replay_pipe *p, struct aggr *a);
/* With the thread running: syncs, ends it and frees the batches; else
 * nothing.  Idempotent. */
void replay_pipe_end(struct replay_pipe *p, struct aggr *a);

/* The batches and the means to wait (replay_pipe_start's first step;
 * tests/unit/replay/test-replay-pipe.c plays the aggregation thread).
 * 0 or -ENOMEM. */
int replay_pipe_init(struct replay_pipe *p);
void replay_pipe_free(struct replay_pipe *p);
/* Hands the filled batch over (replay_pipe_commit's slow path), first
 * waiting until its slot is free. */
void replay_pipe_publish(struct replay_pipe *p);

static inline struct sample *
replay_pipe_slot(struct replay_pipe *p, struct aggr *a)
{
	return p->on ? &p->fill[p->fill_n] : aggr_slot(a);
}

static inline void
replay_pipe_commit(struct replay_pipe *p, struct aggr *a)
{
	if (!p->on) {
		aggr_commit(a);
		return;
	}
	p->fill_weighs |= p->fill[p->fill_n].weight != 0;
	if (++p->fill_n == AGGR_BATCH)
		replay_pipe_publish(p);
}

#endif
