/* The bounded FIFO with its eventfd: order, capacity, replace, the fd's
 * readability mirroring emptiness, and two threads hammering it. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>

#include "cmd.h"
#include "queue.h"
#include "testlib.h"

static bool
queue_readable(struct queue *q)
{
	struct pollfd p = { .fd = queue_fd(q), .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static int
match_type(const void *queued, const void *item)
{
	return ((const struct cmd *)queued)->type ==
	       ((const struct cmd *)item)->type;
}

static void
test_order_and_capacity(void)
{
	struct queue *q = queue_new(4, sizeof(int));
	int v;

	check(!queue_readable(q));
	check_eq_i64(queue_pop(q, &v), -EAGAIN);
	for (int i = 0; i < 4; i++)
		check_eq_i64(queue_push(q, &i), 0);
	check_eq_i64(queue_push(q, &v), -EAGAIN);
	check(queue_readable(q));
	check_eq_u64(queue_len(q), 4);
	for (int i = 0; i < 4; i++) {
		check_eq_i64(queue_pop(q, &v), 0);
		check_eq_i64(v, i);
	}
	check(!queue_readable(q));
	/* Wraps around the ring of slots. */
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 3; i++)
			queue_push(q, &i);
		for (int i = 0; i < 3; i++) {
			queue_pop(q, &v);
			check_eq_i64(v, i);
		}
	}
	check(!queue_readable(q));
	queue_free(q);
}

static void
test_replace(void)
{
	struct queue *q = queue_new(8, sizeof(struct cmd));
	struct cmd c1 = { CMD_SET_PERIOD, 2 }, c2 = { CMD_PAUSE, 0 },
		   c3 = { CMD_SET_PERIOD, 8 }, out;

	queue_push(q, &c1);
	queue_push(q, &c2);
	check_eq_i64(queue_push_replace(q, &c3, match_type), 0);
	check_eq_u64(queue_len(q), 2);
	queue_pop(q, &out);
	check_eq_u64(out.type, CMD_SET_PERIOD);
	check_eq_u64(out.value, 8);
	queue_pop(q, &out);
	check_eq_u64(out.type, CMD_PAUSE);
	/* Nothing to replace: pushes. */
	check_eq_i64(queue_push_replace(q, &c1, match_type), 0);
	check_eq_u64(queue_len(q), 1);
	queue_free(q);
}

#define N_ITEMS 200000

static void *
producer(void *arg)
{
	struct queue *q = arg;

	for (uint64_t i = 0; i < N_ITEMS; i++)
		while (queue_push(q, &i) == -EAGAIN)
			;
	return NULL;
}

static void
test_threads(void)
{
	struct queue *q = queue_new(16, sizeof(uint64_t));
	uint64_t next = 0, v;
	pthread_t t;
	bool in_order = true;

	pthread_create(&t, NULL, producer, q);
	while (next < N_ITEMS) {
		struct pollfd p = { .fd = queue_fd(q), .events = POLLIN };

		poll(&p, 1, 1000);
		while (queue_pop(q, &v) == 0) {
			if (v != next)
				in_order = false;
			next++;
		}
	}
	pthread_join(t, NULL);
	check(in_order);
	check_eq_u64(next, N_ITEMS);
	check(!queue_readable(q));
	queue_free(q);
}

int
main(void)
{
	test_order_and_capacity();
	test_replace();
	test_threads();
	queue_free(NULL);
	return test_result();
}
