/* See producer.h. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "cmd.h"
#include "frame.h"
#include "framebuild.h"
#include "producer.h"
#include "queue.h"

/* How long a batch producer waits for the writer before trying again. */
#define PRODUCER_FULL_WAIT_US	10000
/* The TUI's final frame waits at most this many times: 2 s. */
#define PRODUCER_FINAL_WAITS	200

void
producer_init(struct producer *p, const struct producer_ops *ops,
	      struct queue *frames, struct queue *cmds, bool batch,
	      enum sort_key sort, size_t top_k)
{
	*p = (struct producer){
		.ops = ops, .frames = frames, .cmds = cmds, .batch = batch,
		.sort = sort, .top_k = top_k,
	};
}

static void *
producer_main(void *arg)
{
	struct producer *p = arg;

	p->result = p->ops->run(p);
	return NULL;
}

int
producer_start(struct producer *p)
{
	int ret = pthread_create(&p->thread, NULL, producer_main, p);

	if (ret)
		return -ret;
	/* Best effort: a name tells it from the UI thread. */
	pthread_setname_np(p->thread, p->ops->thread_name);
	p->started = true;
	return 0;
}

int
producer_join(struct producer *p)
{
	if (p->started) {
		pthread_join(p->thread, NULL);
		p->started = false;
	}
	return p->result;
}

void
producer_free(struct producer *p)
{
	if (!p)
		return;
	producer_join(p);
	p->ops->destroy(p);
}

void
producer_commands(struct producer *p)
{
	size_t n = queue_len(p->cmds);
	struct cmd cmd;

	while (n-- > 0 && queue_pop(p->cmds, &cmd) == 0) {
		switch (cmd.type) {
		case CMD_SORT:
			if (cmd.value < SORT__COUNT)
				p->sort = (enum sort_key)cmd.value;
			break;
		case CMD_SET_TOP:
			if (cmd.value > 0 && cmd.value <= FRAME_TOP_MAX)
				p->top_k = (size_t)cmd.value;
			break;
		case CMD_QUIT:
			p->quit = true;
			break;
		case CMD_PAGES_OF:
			p->pages_pid = cmd.pid > 0 ? cmd.pid : 0;
			break;
		default:
			p->ops->apply(p, &cmd);
			break;
		}
	}
}

struct frame *
producer_build(struct producer *p, struct aggr *a, struct frame_meta *m)
{
	struct frame *f;

	m->seq = p->seq + 1;
	m->sort = p->sort;
	m->top_k = p->top_k;
	m->pages_pid = p->pages_pid;
	f = frame_build(a, m);
	if (!f)
		return NULL;
	p->seq = m->seq;
	f->skipped = p->skipped;
	p->skipped = 0;
	return f;
}

bool
producer_room(struct producer *p, bool final)
{
	if (p->batch || final || !queue_full(p->frames))
		return true;
	p->skipped++;
	return false;
}

int
producer_publish(struct producer *p, struct frame *f)
{
	unsigned waits = 0;

	while (queue_push(p->frames, &f) == -EAGAIN) {
		/* The TUI waits only for a final frame, not once it has asked
		 * to quit (it takes nothing more then), and not for ever. */
		if (!p->batch && (!f->final || p->quit ||
				  waits++ >= PRODUCER_FINAL_WAITS)) {
			frame_free(f);
			p->skipped++;
			return 0;
		}
		usleep(PRODUCER_FULL_WAIT_US);
		producer_commands(p);
	}
	return 0;
}
