#include "config.h"

/*
 * The replay pipe's ring (collector/replay/replay_pipe.h) without its
 * aggregation thread: this test plays that thread.  The replay thread
 * (a thread of the test) hands over batches whose first sample carries
 * the batch's number; it must hand over REPLAY_PIPE_SLOTS of them and
 * then wait, without touching a slot, until the test accounts one (moves
 * tail and wakes it, as the aggregation thread does); each slot then
 * holds the batch handed over into it, with its count and weight flag.
 */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replay_pipe.h"
#include "testlib.h"

#define BATCHES	(REPLAY_PIPE_SLOTS + 2)

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The replay thread: BATCHES batches of i + 1 samples, the first at
 * address batch number + 1, the last weighing when i is odd. */
static void *
producer(void *arg)
{
	struct replay_pipe *p = arg;

	for (uint32_t b = 0; b < BATCHES; b++) {
		for (uint32_t i = 0; i <= b; i++) {
			struct sample *s = &p->fill[p->fill_n];

			memset(s, 0, sizeof(*s));
			s->addr = i == 0 ? b + 1 : 0xdead;
			s->weight = i == b && (b & 1);
			p->fill_weighs |= s->weight != 0;
			p->fill_n++;
		}
		replay_pipe_publish(p);
	}
	return NULL;
}

/* Waits up to 2 s for head to reach want; then 50 ms more, so that a
 * publisher that would go past it has had the time to. */
static uint64_t
head_settles(struct replay_pipe *p, uint64_t want)
{
	for (int i = 0; i < 2000 && atomic_load(&p->head) < want; i++)
		sleep_ms(1);
	sleep_ms(50);
	return atomic_load(&p->head);
}

/* Accounts the batch at tail as the aggregation thread would. */
static void
account_one(struct replay_pipe *p, uint64_t t)
{
	size_t i = t % REPLAY_PIPE_SLOTS;

	check_eq_u64(p->buf[i][0].addr, t + 1);
	check_eq_u64(p->n[i], t + 1);
	check_eq_i64(p->weighs[i], (t & 1) != 0);
	atomic_store(&p->tail, t + 1);
	pthread_mutex_lock(&p->mu);
	pthread_cond_signal(&p->rd_wake);
	pthread_mutex_unlock(&p->mu);
}

int
main(void)
{
	struct replay_pipe *p = aligned_alloc(_Alignof(struct replay_pipe),
					      sizeof(*p));
	pthread_t th;

	check(p != NULL);
	if (!p)
		return test_result();
	memset(p, 0, sizeof(*p));
	check_eq_i64(replay_pipe_init(p), 0);
	p->on = true;		/* as if the thread ran */
	check_eq_i64(pthread_create(&th, NULL, producer, p), 0);

	/* A full ring: SLOTS handed over, the next waits. */
	check_eq_u64(head_settles(p, REPLAY_PIPE_SLOTS), REPLAY_PIPE_SLOTS);
	for (uint64_t t = 0; t < BATCHES; t++) {
		uint64_t want = t + 1 + REPLAY_PIPE_SLOTS < BATCHES ?
				t + 1 + REPLAY_PIPE_SLOTS : BATCHES;

		account_one(p, t);
		/* One slot freed: exactly one more batch comes. */
		check_eq_u64(head_settles(p, want), want);
	}
	pthread_join(th, NULL);
	check_eq_u64(p->batches, BATCHES);
	check(p->rd_waits >= 2);
	replay_pipe_free(p);
	free(p);
	return test_result();
}
