/*
 * The replay's aggregation thread.  See replay_pipe.h.
 *
 * One producer (the replay thread), one consumer (this thread), a ring of
 * REPLAY_PIPE_SLOTS batches indexed by two counters: head (batches
 * handed over) and tail (batches accounted).  A thread that must wait
 * spins a while (a batch takes about 10 to 30 microseconds to decode or
 * to account), then sleeps on its condition variable; the other wakes it
 * when it says it sleeps.  The counters and the sleep flags are
 * sequentially consistent, so a thread that goes to sleep after the
 * other looked at its flag must have seen the other's counter (the
 * check is repeated under the mutex, which the waker takes to signal).
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "env.h"
#include "log.h"
#include "replay_pipe.h"

/*
 * The second thread by default from this many CPUs on.  It trades CPU
 * time for wall time (the batches cross between caches: a page-fault
 * capture took 30 to 50 % more CPU time for 25 % less wall time, on an
 * idle 2-CPU VM), so it pays only with a CPU to spare: with one busy
 * process beside it on that VM, the replay took 0.38 s instead of 0.24.
 */
#define REPLAY_PIPE_MIN_CPUS	4
/* Pause instructions before a wait sleeps: about 50 us. */
#define REPLAY_PIPE_SPIN	1000

/* The CPUs this process may run on. */
static int
replay_pipe_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		return CPU_COUNT(&set);
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

int
replay_pipe_choose(struct replay_pipe *p, char *err, size_t errlen)
{
	const char *env = getenv("MEMTOP_REPLAY_THREADS");
	unsigned long v;

	if (!env || !*env) {
		p->want = replay_pipe_cpus() >= REPLAY_PIPE_MIN_CPUS;
		return 0;
	}
	if (!env_ulong("MEMTOP_REPLAY_THREADS", 1, 2, &v)) {
		snprintf(err, errlen, "MEMTOP_REPLAY_THREADS=%s: want 1 or 2",
			 env);
		return -EINVAL;
	}
	p->want = v == 2;
	return 0;
}

static inline void
replay_pipe_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Waits until *word >= want or quit; sleeps on cv after spinning. */
static void
replay_pipe_wait(struct replay_pipe *p, _Atomic uint64_t *word, uint64_t want,
		 atomic_int *sleeps, pthread_cond_t *cv)
{
	for (unsigned i = 0; i < REPLAY_PIPE_SPIN; i++) {
		if (atomic_load(word) >= want || atomic_load(&p->quit))
			return;
		replay_pipe_relax();
	}
	pthread_mutex_lock(&p->mu);
	atomic_store(sleeps, 1);
	while (atomic_load(word) < want && !atomic_load(&p->quit))
		pthread_cond_wait(cv, &p->mu);
	atomic_store(sleeps, 0);
	pthread_mutex_unlock(&p->mu);
}

/* After a counter moved: wakes the thread that sleeps on cv, if any. */
static void
replay_pipe_wake(struct replay_pipe *p, atomic_int *sleeps, pthread_cond_t *cv)
{
	if (!atomic_load(sleeps))
		return;
	pthread_mutex_lock(&p->mu);
	pthread_cond_signal(cv);
	pthread_mutex_unlock(&p->mu);
}

int
replay_pipe_init(struct replay_pipe *p)
{
	p->buf = aligned_alloc(REPLAY_PIPE_LINE,
			       (REPLAY_PIPE_SLOTS + 1) * sizeof(*p->buf));
	if (!p->buf)
		return -ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->agg_wake, NULL);
	pthread_cond_init(&p->rd_wake, NULL);
	atomic_store(&p->head, 0);
	atomic_store(&p->tail, 0);
	atomic_store(&p->quit, false);
	p->fill = p->buf[REPLAY_PIPE_SLOTS];
	p->fill_n = 0;
	p->fill_weighs = false;
	return 0;
}

void
replay_pipe_free(struct replay_pipe *p)
{
	pthread_cond_destroy(&p->rd_wake);
	pthread_cond_destroy(&p->agg_wake);
	pthread_mutex_destroy(&p->mu);
	free(p->buf);
	p->buf = NULL;
	p->fill = NULL;
}

static void *
replay_pipe_main(void *arg)
{
	struct replay_pipe *p = arg;
	struct aggr *a = p->agg;
	uint64_t t = atomic_load(&p->tail);

	for (;;) {
		size_t i = t % REPLAY_PIPE_SLOTS;

		replay_pipe_wait(p, &p->head, t + 1, &p->agg_sleeps,
				 &p->agg_wake);
		if (atomic_load(&p->head) <= t)
			break;		/* quit, nothing queued */
		memcpy(a->batch, p->buf[i], p->n[i] * sizeof(a->batch[0]));
		a->n_batch = p->n[i];
		if (p->weighs[i])
			aggr_weights_possible(a);
		aggr_flush(a);
		atomic_store(&p->tail, ++t);
		replay_pipe_wake(p, &p->rd_sleeps, &p->rd_wake);
	}
	return NULL;
}

void
replay_pipe_start(struct replay_pipe *p, struct aggr *a)
{
	if (!p->want || p->on)
		return;
	if (replay_pipe_init(p) < 0)
		goto off;
	p->agg = a;
	/* Any partial batch of a's goes first, on this thread. */
	if (a->n_batch)
		aggr_flush(a);
	if (pthread_create(&p->thread, NULL, replay_pipe_main, p) != 0) {
		replay_pipe_free(p);
		goto off;
	}
	p->on = true;
	return;
off:
	log_msg("replay: no aggregation thread (out of memory or threads): "
		"the replay thread aggregates");
	p->want = false;
}

/* n bytes from src to dst, both 16-byte aligned, n a multiple of 16,
 * with stores that go around the caches: the other thread's copy of
 * dst's lines is dropped without a transfer. */
static void
replay_pipe_stream(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
	__m128i *d = dst;
	const __m128i *s = src;

	for (size_t i = 0; i < n / sizeof(*d); i++)
		_mm_stream_si128(&d[i], _mm_load_si128(&s[i]));
	_mm_sfence();
#else
	memcpy(dst, src, n);
#endif
}

void
replay_pipe_publish(struct replay_pipe *p)
{
	uint64_t h = atomic_load(&p->head);
	size_t i = h % REPLAY_PIPE_SLOTS;

	/* Slot i is free once the batch it held last, h - SLOTS, is
	 * accounted. */
	if (h - atomic_load(&p->tail) >= REPLAY_PIPE_SLOTS) {
		p->rd_waits++;
		replay_pipe_wait(p, &p->tail, h + 1 - REPLAY_PIPE_SLOTS,
				 &p->rd_sleeps, &p->rd_wake);
	}
	replay_pipe_stream(p->buf[i], p->fill,
			   (p->fill_n * sizeof(p->fill[0]) + 15) & ~(size_t)15);
	p->n[i] = p->fill_n;
	p->weighs[i] = p->fill_weighs;
	atomic_store(&p->head, h + 1);
	replay_pipe_wake(p, &p->agg_sleeps, &p->agg_wake);
	p->batches++;
	p->fill_n = 0;
	p->fill_weighs = false;
}

void
replay_pipe_sync(struct replay_pipe *p, struct aggr *a)
{
	if (p->on) {
		if (p->fill_n)
			replay_pipe_publish(p);
		if (atomic_load(&p->tail) < atomic_load(&p->head)) {
			p->rd_waits++;
			replay_pipe_wait(p, &p->tail, atomic_load(&p->head),
					 &p->rd_sleeps, &p->rd_wake);
		}
	} else if (a->n_batch) {
		aggr_flush(a);
	}
	if (p->lost)
		aggr_count_lost(a, p->lost);
	if (p->unattributed)
		aggr_count_unattributed(a, p->unattributed);
	p->lost = p->unattributed = 0;
}

void
replay_pipe_stop(struct replay_pipe *p, struct aggr *a)
{
	replay_pipe_sync(p, a);
	p->stopped = true;
	if (!p->on)
		return;
	log_msg("replay: the aggregation thread stops after %llu batches "
		"(this capture's allocation events or callers need the "
		"aggregation on the replay thread)",
		(unsigned long long)p->batches);
	replay_pipe_end(p, a);
}

void
replay_pipe_end(struct replay_pipe *p, struct aggr *a)
{
	if (!p->on)
		return;
	replay_pipe_sync(p, a);
	log_msg("replay: aggregation thread: %llu batches handed over, the "
		"replay thread waited for it %llu times",
		(unsigned long long)p->batches,
		(unsigned long long)p->rd_waits);
	atomic_store(&p->quit, true);
	pthread_mutex_lock(&p->mu);
	pthread_cond_signal(&p->agg_wake);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	replay_pipe_free(p);
	p->on = false;
}
