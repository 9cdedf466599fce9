/*
 * Any thread.  The eventfd counter mirrors emptiness: it is written when
 * the queue goes from empty to non-empty and drained when pop empties it.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "queue.h"

struct queue {
	pthread_mutex_t lock;
	size_t capacity;
	size_t item_size;
	size_t head;		/* index of the oldest item */
	size_t len;
	int efd;
	unsigned char *items;
};

struct queue *
queue_new(size_t capacity, size_t item_size)
{
	struct queue *q;

	if (capacity == 0 || item_size == 0) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->items = calloc(capacity, item_size);
	if (!q->items)
		goto out_free;
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->efd < 0)
		goto out_items;
	pthread_mutex_init(&q->lock, NULL);
	q->capacity = capacity;
	q->item_size = item_size;
	return q;

out_items:
	free(q->items);
out_free:
	free(q);
	return NULL;
}

void
queue_free(struct queue *q)
{
	if (!q)
		return;
	close(q->efd);
	pthread_mutex_destroy(&q->lock);
	free(q->items);
	free(q);
}

static void
queue_signal(struct queue *q)
{
	uint64_t one = 1;

	/* Only fails with EAGAIN on counter overflow, which cannot happen
	 * as the counter is drained whenever the queue empties. */
	(void)!write(q->efd, &one, sizeof(one));
}

static void *
queue_slot(struct queue *q, size_t idx)
{
	return q->items + ((q->head + idx) % q->capacity) * q->item_size;
}

int
queue_push(struct queue *q, const void *item)
{
	int ret = 0;

	pthread_mutex_lock(&q->lock);
	if (q->len == q->capacity) {
		ret = -EAGAIN;
	} else {
		memcpy(queue_slot(q, q->len), item, q->item_size);
		if (q->len++ == 0)
			queue_signal(q);
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

int
queue_push_replace(struct queue *q, const void *item,
		   int (*match)(const void *queued, const void *item))
{
	pthread_mutex_lock(&q->lock);
	for (size_t i = q->len; i-- > 0;) {
		void *slot = queue_slot(q, i);

		if (match(slot, item)) {
			memcpy(slot, item, q->item_size);
			pthread_mutex_unlock(&q->lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&q->lock);
	return queue_push(q, item);
}

int
queue_pop(struct queue *q, void *item)
{
	int ret = 0;

	pthread_mutex_lock(&q->lock);
	if (q->len == 0) {
		ret = -EAGAIN;
	} else {
		memcpy(item, queue_slot(q, 0), q->item_size);
		q->head = (q->head + 1) % q->capacity;
		if (--q->len == 0) {
			uint64_t v;

			(void)!read(q->efd, &v, sizeof(v));
		}
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

size_t
queue_len(struct queue *q)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	n = q->len;
	pthread_mutex_unlock(&q->lock);
	return n;
}

bool
queue_full(struct queue *q)
{
	bool full;

	pthread_mutex_lock(&q->lock);
	full = q->len == q->capacity;
	pthread_mutex_unlock(&q->lock);
	return full;
}

int
queue_fd(const struct queue *q)
{
	return q->efd;
}
