/*
 * The parallel drain's threads and the collector's side of a drain.  See
 * dpool.h.  dpool_new, dpool_drain, dpool_cpu_ns and dpool_free: the
 * collector thread only; dpool_thread and what it calls: the drain
 * threads.
 *
 * One mutex guards each thread's block queue (head, tail), its done flag
 * and the job; block contents are written by the drain thread before it
 * moves head and read by the collector before it moves tail, both under
 * the mutex, so each block has one owner at a time.  A lock a block of
 * AGGR_BATCH samples costs a few ns a sample at most.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "base.h"
#include "dpool.h"
#include "ingest.h"

/* Blocks in each thread's queue: the decoder runs this far ahead. */
#define DPOOL_BLOCKS	16

enum { DB_SAMPLES, DB_RECORD };

struct dblock {
	uint32_t kind;
	uint32_t n;		/* samples, or the record's bytes */
	size_t item;
	bool weights;		/* a sample may carry a weight */
	unsigned char *big;	/* a record larger than u.rec, malloc'd */
	union {
		struct sample s[AGGR_BATCH];
		unsigned char rec[AGGR_BATCH * sizeof(struct sample)];
	} u;
};

struct drainer {
	struct dpool *pool;
	pthread_t thread;
	unsigned idx;
	bool started;
	/* The decoder, learning layouts per source as the collector's; its
	 * aggr is a batch only (ingest.flush hands it on, never
	 * aggr_flush), whose interval counts unattributed and lost. */
	struct ingest in;
	struct aggr batch;
	size_t cur;		/* the item being drained */
	bool failed;		/* a record could not be copied */
	struct dblock *blocks;	/* DPOOL_BLOCKS */
	/* Under pool->mu. */
	size_t head, tail;
	bool done;
	uint64_t gen;
	uint64_t cpu_ns;
	pthread_cond_t room;
};

struct dpool {
	pthread_mutex_t mu;
	pthread_cond_t job;	/* a new drain, or quit */
	pthread_cond_t ready;	/* a block or a thread done */
	uint64_t gen;
	bool quit;
	struct dpool_item *items;
	size_t n_items;
	uint64_t period;
	unsigned n;
	struct drainer d[];
};

/* A free block (waiting for the collector to take one), or NULL at quit. */
static struct dblock *
dpool_slot(struct drainer *d)
{
	struct dpool *p = d->pool;
	struct dblock *b = NULL;

	pthread_mutex_lock(&p->mu);
	while (d->head - d->tail == DPOOL_BLOCKS && !p->quit)
		pthread_cond_wait(&d->room, &p->mu);
	if (!p->quit)
		b = &d->blocks[d->head % DPOOL_BLOCKS];
	pthread_mutex_unlock(&p->mu);
	return b;
}

static void
dpool_push(struct drainer *d)
{
	struct dpool *p = d->pool;

	pthread_mutex_lock(&p->mu);
	d->head++;
	pthread_cond_signal(&p->ready);
	pthread_mutex_unlock(&p->mu);
}

/* ingest.flush: the batch to the queue. */
static void
dpool_flush(struct ingest *in)
{
	struct drainer *d = (struct drainer *)((char *)in -
					       offsetof(struct drainer, in));
	size_t n = d->batch.n_batch;
	struct dblock *b;

	d->batch.n_batch = 0;
	if (n == 0 || !(b = dpool_slot(d)))
		return;
	b->kind = DB_SAMPLES;
	b->n = (uint32_t)n;
	b->item = d->cur;
	b->weights = d->batch.weights_possible;
	d->batch.weights_possible = false;
	memcpy(b->u.s, d->batch.batch, n * sizeof(b->u.s[0]));
	dpool_push(d);
}

/* ingest_drain's other: the samples before it, then the record. */
static int
dpool_other(const struct perf_event_header *hdr, void *ctx)
{
	struct drainer *d = ctx;
	struct dblock *b;

	dpool_flush(&d->in);
	b = dpool_slot(d);
	if (!b)
		return 1;
	b->kind = DB_RECORD;
	b->n = hdr->size;
	b->item = d->cur;
	b->big = NULL;
	if (hdr->size > sizeof(b->u.rec)) {
		b->big = malloc(hdr->size);
		if (!b->big) {
			/* Counted lost, as a record that cannot be read. */
			aggr_count_lost(&d->batch, 1);
			return 0;
		}
	}
	memcpy(b->big ? b->big : b->u.rec, hdr, hdr->size);
	dpool_push(d);
	return 0;
}

/* One drain's share: the items of this thread's group. */
static void
dpool_run(struct drainer *d, struct dpool_item *items, size_t n,
	  uint64_t period)
{
	struct dpool *p = d->pool;

	for (size_t i = 0; i < n; i++) {
		uint64_t bad = d->in.stats.bad;

		if (items[i].group % p->n != d->idx)
			continue;
		d->cur = i;
		memset(&items[i].st, 0, sizeof(items[i].st));
		ingest_drain(&d->in, items[i].ev, items[i].ring, period,
			     dpool_other, d, &items[i].st);
		dpool_flush(&d->in);
		items[i].bad = d->in.stats.bad - bad;
	}
}

static void *
dpool_thread(void *arg)
{
	struct drainer *d = arg;
	struct dpool *p = d->pool;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		uint64_t c0;

		while (d->gen == p->gen && !p->quit)
			pthread_cond_wait(&p->job, &p->mu);
		if (p->quit)
			break;
		d->gen = p->gen;
		pthread_mutex_unlock(&p->mu);
		c0 = base_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		dpool_run(d, p->items, p->n_items, p->period);
		c0 = base_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		pthread_mutex_lock(&p->mu);
		d->cpu_ns += c0;
		d->done = true;
		pthread_cond_signal(&p->ready);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int
dpool_new(struct dpool **out, unsigned n_threads)
{
	struct dpool *p;
	int ret = 0;

	*out = NULL;
	if (n_threads < 1 || n_threads > DPOOL_MAX_THREADS)
		return -EINVAL;
	p = calloc(1, sizeof(*p) + n_threads * sizeof(p->d[0]));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->job, NULL);
	pthread_cond_init(&p->ready, NULL);
	p->n = n_threads;
	for (unsigned i = 0; i < n_threads; i++) {
		struct drainer *d = &p->d[i];

		d->pool = p;
		d->idx = i;
		d->done = true;
		pthread_cond_init(&d->room, NULL);
		ingest_init(&d->in, &d->batch);
		d->in.flush = dpool_flush;
		d->blocks = calloc(DPOOL_BLOCKS, sizeof(*d->blocks));
		if (!d->blocks) {
			ret = -ENOMEM;
			break;
		}
		ret = -pthread_create(&d->thread, NULL, dpool_thread, d);
		if (ret < 0)
			break;
		d->started = true;
	}
	if (ret < 0) {
		dpool_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

void
dpool_free(struct dpool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = true;
	pthread_cond_broadcast(&p->job);
	for (unsigned i = 0; i < p->n; i++)
		pthread_cond_broadcast(&p->d[i].room);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->n; i++) {
		if (p->d[i].started)
			pthread_join(p->d[i].thread, NULL);
		pthread_cond_destroy(&p->d[i].room);
		free(p->d[i].blocks);
	}
	pthread_cond_destroy(&p->job);
	pthread_cond_destroy(&p->ready);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

unsigned
dpool_threads(const struct dpool *p)
{
	return p->n;
}

/* A block into the aggregation (samples) or to other(). */
static void
dpool_take(struct dblock *b, struct dpool_item *items, struct aggr *a,
	   dpool_other_fn other, void *ctx)
{
	if (b->kind == DB_RECORD) {
		other(b->big ? (const void *)b->big : (const void *)b->u.rec,
		      items[b->item].tag, ctx);
		free(b->big);
		b->big = NULL;
		return;
	}
	if (b->weights)
		aggr_weights_possible(a);
	for (size_t k = 0; k < b->n;) {
		size_t room = AGGR_BATCH - a->n_batch;
		size_t m = b->n - k < room ? b->n - k : room;

		memcpy(&a->batch[a->n_batch], &b->u.s[k],
		       m * sizeof(b->u.s[0]));
		a->n_batch += m;
		k += m;
		if (a->n_batch == AGGR_BATCH)
			aggr_flush(a);
	}
}

void
dpool_drain(struct dpool *p, struct dpool_item *items, size_t n,
	    uint64_t period, struct aggr *a, dpool_other_fn other, void *ctx)
{
	pthread_mutex_lock(&p->mu);
	p->items = items;
	p->n_items = n;
	p->period = period;
	p->gen++;
	for (unsigned i = 0; i < p->n; i++)
		p->d[i].done = false;
	pthread_cond_broadcast(&p->job);
	for (;;) {
		bool all_done = true, took = false;

		for (unsigned i = 0; i < p->n; i++) {
			struct drainer *d = &p->d[i];

			while (d->tail != d->head) {
				struct dblock *b =
					&d->blocks[d->tail % DPOOL_BLOCKS];

				pthread_mutex_unlock(&p->mu);
				dpool_take(b, items, a, other, ctx);
				pthread_mutex_lock(&p->mu);
				d->tail++;
				pthread_cond_signal(&d->room);
				took = true;
			}
			all_done &= d->done;
		}
		if (all_done)
			break;
		if (!took)
			pthread_cond_wait(&p->ready, &p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	/* What the decoders counted; theirs are read only between drains. */
	for (unsigned i = 0; i < p->n; i++) {
		struct counts *ic = &p->d[i].batch.interval;

		aggr_count_lost(a, ic->lost);
		aggr_count_unattributed(a, ic->unattributed);
		ic->lost = ic->unattributed = 0;
	}
}

uint64_t
dpool_cpu_ns(struct dpool *p)
{
	uint64_t ns = 0;

	pthread_mutex_lock(&p->mu);
	for (unsigned i = 0; i < p->n; i++)
		ns += p->d[i].cpu_ns;
	pthread_mutex_unlock(&p->mu);
	return ns;
}
