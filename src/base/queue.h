/*
 * Bounded FIFO of fixed-size items between two threads, with an eventfd
 * that is readable while the queue is non-empty, so the consumer can sit in
 * poll/epoll beside its other fds.  One mutex; no lock is held by callers.
 * Used for frames (collector -> UI, item = struct frame *) and commands
 * (UI -> collector, item = struct cmd).
 */
#ifndef MEMTOP_QUEUE_H
#define MEMTOP_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

struct queue;

/* NULL on failure (errno set). */
struct queue *queue_new(size_t capacity, size_t item_size);
/* NULL-safe.  Items still queued are dropped without being freed. */
void queue_free(struct queue *q);

/* Copies item in.  0, or -EAGAIN when full. */
int queue_push(struct queue *q, const void *item);
/* Copies the oldest item out.  0, or -EAGAIN when empty. */
int queue_pop(struct queue *q, void *item);
/* Replaces the newest queued item for which match(item, ctx) is true, else
 * pushes.  Lets a newer period command replace a pending one. */
int queue_push_replace(struct queue *q, const void *item,
		       int (*match)(const void *queued, const void *item));
size_t queue_len(struct queue *q);
/* No room for one more item (a single pusher may rely on it staying so
 * false until it pushes: consumers only make room). */
bool queue_full(struct queue *q);
/* Readable while the queue is non-empty. */
int queue_fd(const struct queue *q);

#endif
