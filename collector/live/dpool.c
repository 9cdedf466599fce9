/*
 * The parallel drain's threads and the collector's side of a drain.  See
 * dpool.h.  dpool_new, dpool_drain, dpool_merge, dpool_merge_draining,
 * dpool_like, dpool_cpu_ns and dpool_free: the collector thread only;
 * dpool_thread and what it calls: the drain threads.
 *
 * One mutex guards each thread's block queue (head, tail) and overflow
 * list, its done flag and the job; block contents are written by the
 * drain thread before it moves head and read by the collector before it
 * moves tail, both under the mutex, so each block has one owner at a
 * time.  Blocks carry only the rings' records other than samples (rare);
 * samples stay in the thread's shard.  A shard is touched by its thread
 * during a drain and by the collector (merge) only between drains, or
 * during a draining merge's job, when its thread drains nothing.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggr.h"
#include "base.h"
#include "dpool.h"
#include "ingest.h"
#include "nodemap.h"
#include "pagetab.h"
#include "record.h"

/* Blocks in each thread's queue: the drain runs this far ahead of the
 * collector's handling of its other records. */
#define DPOOL_BLOCKS	16
/* A block holds a record of up to this many bytes (MMAP2 records with
 * the longest paths); a longer one is copied to the heap. */
#define DPOOL_RECORD	4352
/* While a shard is merged, the other threads drain their rings again
 * after this long, so that no ring waits for the whole merge. */
#define DPOOL_NAP_US	1000

struct dblock {
	uint32_t n;		/* the record's bytes */
	size_t item;
	unsigned char *big;	/* a record larger than rec, malloc'd */
	unsigned char rec[DPOOL_RECORD];
};

/* A record queued while the collector merges and the blocks are full. */
struct dover {
	struct dover *next;
	size_t item;
	unsigned char rec[];
};

struct drainer {
	struct dpool *pool;
	pthread_t thread;
	unsigned idx;
	bool started;
	/* The decoder, learning layouts per source as the collector's,
	 * into the thread's shard (aggr_shard_init) and its nodemap. */
	struct ingest in;
	struct aggr shard;
	bool shard_ok;
	struct nodemap *nm;
	struct dpool_item *items;	/* the drain's */
	size_t cur;		/* the item being drained */
	struct dblock *blocks;	/* DPOOL_BLOCKS */
	/* Under pool->mu.  Records past a full block queue during a
	 * draining merge wait on ovf, after the blocks, in order. */
	size_t head, tail;
	struct dover *ovf, **ovf_tail;
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
	uint64_t overflowed;	/* records queued on an overflow list */
	uint64_t dropped;	/* records not queued: no memory (dpool_drop) */
	bool quit;
	struct dpool_item *items;
	size_t n_items;
	uint64_t period;
	int merging;		/* the shard being merged (-1: none), whose
				 * group's rings the next thread drains */
	bool loop;		/* drain again and again until cleared */
	unsigned n;
	struct drainer d[];
};

/* A free block, once the collector has taken one.  The pool stops only
 * between drains (dpool_free), when no thread drains: a drain always
 * finds one, and no record is left behind at quit. */
static struct dblock *
dpool_slot(struct drainer *d)
{
	struct dpool *p = d->pool;
	struct dblock *b;

	pthread_mutex_lock(&p->mu);
	while (d->head - d->tail == DPOOL_BLOCKS)
		pthread_cond_wait(&d->room, &p->mu);
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

/*
 * A record that cannot reach the collector (no memory for its copy),
 * counted as collector_on_record would have counted it: a LOST record's
 * samples go to its ring's lost records through the item (the collector
 * reconciles them with the event's own lost count: dpool_item.lost), a
 * LOST_SAMPLES record's and a THROTTLE into the shard's lost and
 * throttled; a record that names pages or threads (MMAP, MMAP2, COMM,
 * FORK, EXIT) counts one lost, as the kernel's lost count holds those it
 * drops (man page, JSON FIELDS: lost).  UNTHROTTLE and the kinds the
 * collector ignores count nothing there.  Every one counts in the pool's
 * dropped, which the collector logs.
 */
static void
dpool_drop(struct drainer *d, const struct perf_event_header *hdr)
{
	struct dpool *p = d->pool;
	uint64_t n;

	pthread_mutex_lock(&p->mu);
	p->dropped++;
	pthread_mutex_unlock(&p->mu);
	switch (hdr->type) {
	case PERF_RECORD_LOST:
		if (record_parse_lost(hdr, &n) == 0)
			d->items[d->cur].lost += n;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (record_parse_lost(hdr, &n) == 0)
			aggr_count_lost(&d->shard, n);
		break;
	case PERF_RECORD_THROTTLE:
		aggr_count_throttled(&d->shard, 1);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		aggr_count_lost(&d->shard, 1);
		break;
	default:
		break;
	}
}

/*
 * Whether the record goes on d's overflow list instead of a block: while
 * the collector merges (p->loop) it takes no block, and a drain waiting
 * for room would leave its rings undrained for the whole merge; once the
 * list holds records, every later one follows them.  Dropped (counted,
 * dpool_drop) when there is no memory for it.
 */
static bool
dpool_overflow(struct drainer *d, const struct perf_event_header *hdr)
{
	struct dpool *p = d->pool;
	struct dover *o;
	bool over;

	pthread_mutex_lock(&p->mu);
	over = d->ovf || (p->loop && d->head - d->tail == DPOOL_BLOCKS);
	pthread_mutex_unlock(&p->mu);
	if (!over)
		return false;
	o = malloc(sizeof(*o) + hdr->size);
	if (!o) {
		dpool_drop(d, hdr);
		return true;
	}
	o->next = NULL;
	o->item = d->cur;
	memcpy(o->rec, hdr, hdr->size);
	pthread_mutex_lock(&p->mu);
	*d->ovf_tail = o;
	d->ovf_tail = &o->next;
	p->overflowed++;
	pthread_cond_signal(&p->ready);
	pthread_mutex_unlock(&p->mu);
	return true;
}

/* ingest_drain's other: the record to the collector. */
static int
dpool_other(const struct perf_event_header *hdr, void *ctx)
{
	struct drainer *d = ctx;
	struct dblock *b;

	if (dpool_overflow(d, hdr))
		return 0;
	b = dpool_slot(d);
	b->n = hdr->size;
	b->item = d->cur;
	b->big = NULL;
	if (hdr->size > sizeof(b->rec)) {
		b->big = malloc(hdr->size);
		if (!b->big) {
			dpool_drop(d, hdr);
			return 0;
		}
	}
	memcpy(b->big ? b->big : b->rec, hdr, hdr->size);
	dpool_push(d);
	return 0;
}

/* One pass of a drain: the items of this thread's group, and those of
 * the group before while that group's shard is being merged. */
static void
dpool_run(struct drainer *d, struct dpool_item *items, size_t n,
	  uint64_t period, int merging)
{
	struct dpool *p = d->pool;

	/* Its shard is the collector's until the merge is done. */
	if ((int)d->idx == merging)
		return;
	d->items = items;
	for (size_t i = 0; i < n; i++) {
		uint64_t bad = d->in.stats.bad;
		unsigned own = items[i].group % p->n;

		if ((int)own == merging)
			own = (own + 1) % p->n;
		if (own != d->idx)
			continue;
		d->cur = i;
		ingest_drain(&d->in, items[i].ev, items[i].ring, period,
			     dpool_other, d, &items[i].st);
		items[i].bad += d->in.stats.bad - bad;
	}
	/* The pass's samples accounted now, as the collector's own at the
	 * end of its drain: their pages' nodes are asked while short-lived
	 * processes still live, not at the frame's merge. */
	aggr_flush(&d->shard);
}

/* Between two passes of a draining merge: DPOOL_NAP_US, or less when
 * the collector wakes the threads.  Under p->mu. */
static void
dpool_nap(struct dpool *p)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += DPOOL_NAP_US * 1000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&p->job, &p->mu, &ts);
}

static void *
dpool_thread(void *arg)
{
	struct drainer *d = arg;
	struct dpool *p = d->pool;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		uint64_t c0;
		int merging;

		while (d->gen == p->gen && !p->quit)
			pthread_cond_wait(&p->job, &p->mu);
		if (p->quit)
			break;
		d->gen = p->gen;
		merging = p->merging;
		/* One pass; while the collector merges, more until it is
		 * done (p->loop cleared). */
		for (;;) {
			pthread_mutex_unlock(&p->mu);
			c0 = base_clock_ns(CLOCK_THREAD_CPUTIME_ID);
			dpool_run(d, p->items, p->n_items, p->period,
				  merging);
			c0 = base_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
			pthread_mutex_lock(&p->mu);
			d->cpu_ns += c0;
			if (!p->loop || p->quit)
				break;
			dpool_nap(p);
			if (!p->loop || p->quit)
				break;
		}
		d->done = true;
		pthread_cond_signal(&p->ready);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int
dpool_new(struct dpool **out, unsigned n_threads, const struct aggr *like)
{
	pthread_condattr_t ca;
	struct dpool *p;
	int ret = 0;

	*out = NULL;
	if (n_threads < 1 || n_threads > DPOOL_MAX_THREADS)
		return -EINVAL;
	p = calloc(1, sizeof(*p) + n_threads * sizeof(p->d[0]));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	/* Naps of a draining merge count on the monotonic clock. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->job, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&p->ready, NULL);
	p->n = n_threads;
	p->merging = -1;
	/* Every drainer's, before any can fail: dpool_free destroys them. */
	for (unsigned i = 0; i < n_threads; i++)
		pthread_cond_init(&p->d[i].room, NULL);
	for (unsigned i = 0; i < n_threads; i++) {
		struct drainer *d = &p->d[i];

		d->pool = p;
		d->idx = i;
		d->done = true;
		d->ovf_tail = &d->ovf;
		d->blocks = calloc(DPOOL_BLOCKS, sizeof(*d->blocks));
		if (like->nodemap)
			d->nm = nodemap_new();
		if (!d->blocks || (like->nodemap && !d->nm) ||
		    aggr_shard_init(&d->shard, like, d->nm) < 0) {
			ret = -ENOMEM;
			break;
		}
		d->shard_ok = true;
		ingest_init(&d->in, &d->shard);
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
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->n; i++) {
		if (p->d[i].started)
			pthread_join(p->d[i].thread, NULL);
		pthread_cond_destroy(&p->d[i].room);
		free(p->d[i].blocks);
		while (p->d[i].ovf) {
			struct dover *o = p->d[i].ovf;

			p->d[i].ovf = o->next;
			free(o);
		}
		if (p->d[i].shard_ok)
			aggr_fini(&p->d[i].shard);
		nodemap_free(p->d[i].nm);
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

/* A record to other(). */
static void
dpool_take(struct dblock *b, struct dpool_item *items, dpool_other_fn other,
	   void *ctx)
{
	other(b->big ? (const void *)b->big : (const void *)b->rec,
	      items[b->item].tag, ctx);
	free(b->big);
	b->big = NULL;
}

/* A drain of items[0..n) started on the threads. */
static void
dpool_start(struct dpool *p, struct dpool_item *items, size_t n,
	    uint64_t period, int merging)
{
	for (size_t i = 0; i < n; i++) {
		memset(&items[i].st, 0, sizeof(items[i].st));
		items[i].bad = 0;
		items[i].lost = 0;
	}
	pthread_mutex_lock(&p->mu);
	p->items = items;
	p->n_items = n;
	p->period = period;
	p->merging = merging;
	p->loop = merging >= 0;
	p->gen++;
	for (unsigned i = 0; i < p->n; i++)
		p->d[i].done = false;
	pthread_cond_broadcast(&p->job);
	pthread_mutex_unlock(&p->mu);
}

/* The records other than samples to other(), until every thread is
 * done with the drain started. */
static void
dpool_wait(struct dpool *p, struct dpool_item *items, dpool_other_fn other,
	   void *ctx)
{
	pthread_mutex_lock(&p->mu);
	for (;;) {
		bool all_done = true, took = false;

		for (unsigned i = 0; i < p->n; i++) {
			struct drainer *d = &p->d[i];

			while (d->tail != d->head) {
				struct dblock *b =
					&d->blocks[d->tail % DPOOL_BLOCKS];

				pthread_mutex_unlock(&p->mu);
				dpool_take(b, items, other, ctx);
				pthread_mutex_lock(&p->mu);
				d->tail++;
				pthread_cond_signal(&d->room);
				took = true;
			}
			/* The overflow after the blocks: older blocks are
			 * taken first, and none is queued while it holds
			 * records. */
			if (d->ovf) {
				struct dover *o = d->ovf;

				d->ovf = o->next;
				if (!d->ovf)
					d->ovf_tail = &d->ovf;
				pthread_mutex_unlock(&p->mu);
				other((const void *)o->rec, items[o->item].tag,
				      ctx);
				free(o);
				pthread_mutex_lock(&p->mu);
				took = true;
				all_done = false;
				continue;
			}
			all_done &= d->done;
		}
		if (all_done)
			break;
		if (!took)
			pthread_cond_wait(&p->ready, &p->mu);
	}
	pthread_mutex_unlock(&p->mu);
}

void
dpool_drain(struct dpool *p, struct dpool_item *items, size_t n,
	    uint64_t period, dpool_other_fn other, void *ctx)
{
	dpool_start(p, items, n, period, -1);
	dpool_wait(p, items, other, ctx);
}

int
dpool_merge_draining(struct dpool *p, unsigned i, struct aggr *dst,
		     struct dpool_item *items, size_t n, uint64_t period,
		     dpool_other_fn other, void *ctx)
{
	int ret;

	if (p->n < 2 || i >= p->n)
		return -EINVAL;
	dpool_start(p, items, n, period, (int)i);
	ret = aggr_merge(dst, &p->d[i].shard);
	pthread_mutex_lock(&p->mu);
	p->loop = false;
	pthread_cond_broadcast(&p->job);
	pthread_mutex_unlock(&p->mu);
	dpool_wait(p, items, other, ctx);
	return ret;
}

int
dpool_merge(struct dpool *p, struct aggr *dst)
{
	int ret = 0;

	for (unsigned i = 0; i < p->n; i++) {
		int r = aggr_merge(dst, &p->d[i].shard);

		if (r < 0 && ret == 0)
			ret = r;
	}
	return ret;
}

bool
dpool_like(const struct dpool *p, const struct aggr *a)
{
	return p->n == 0 || (pagetab_page_shift(p->d[0].shard.pages) ==
			     pagetab_page_shift(a->pages));
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

/* A pool counter, read under the mutex its threads add under. */
static uint64_t
dpool_count(struct dpool *p, const uint64_t *v)
{
	uint64_t n;

	pthread_mutex_lock(&p->mu);
	n = *v;
	pthread_mutex_unlock(&p->mu);
	return n;
}

uint64_t
dpool_overflowed(struct dpool *p)
{
	return dpool_count(p, &p->overflowed);
}

uint64_t
dpool_dropped(struct dpool *p)
{
	return dpool_count(p, &p->dropped);
}

uint64_t
dpool_shard_resets(const struct dpool *p)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < p->n; i++)
		n += p->d[i].shard.shard_resets;
	return n;
}

size_t
dpool_queued(const struct dpool *p)
{
	size_t n = 0;

	for (unsigned i = 0; i < p->n; i++)
		n += p->d[i].shard.n_batch;
	return n;
}
