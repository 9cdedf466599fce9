/*
 * A real channel on a real thread (faults source, software variant):
 * a worker thread of this process touches fresh pages on command; the
 * channel's ring must hold exactly one sample per fault at period 1, one
 * per 4 faults at period 4, none at period 0 (disabled), and the task
 * ring must carry the FORK of a thread the worker creates.
 * Skips (77) when perf_event_open is not permitted here.
 *
 * Then, as root only: a child process that gives up root and locked
 * memory gets a ring smaller than it asked for, and that ring must still
 * wake its poller at its watermark (half the ring), not only when full.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <grp.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "channel.h"
#include "channel_int.h"
#include "record.h"
#include "source.h"
#include "testlib.h"

#define PAGES 256

struct worker {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int todo;		/* 1 = touch pages, 2 = spawn a thread, -1 = exit */
	pid_t tid;
	unsigned char *region;	/* pages touched by the last command */
	pid_t spawned_tid;
};

static void *
worker_child(void *arg)
{
	pid_t *tid = arg;

	*tid = (pid_t)syscall(SYS_gettid);
	return NULL;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	long page = sysconf(_SC_PAGESIZE);

	pthread_mutex_lock(&w->lock);
	w->tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&w->cond);
	for (;;) {
		while (w->todo == 0)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->todo < 0)
			break;
		if (w->todo == 1) {
			w->region = mmap(NULL, PAGES * (size_t)page,
					 PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			madvise(w->region, PAGES * (size_t)page,
				MADV_NOHUGEPAGE);
			for (int i = 0; i < PAGES; i++)
				((volatile unsigned char *)w->region)
					[(size_t)i * (size_t)page] = 1;
		} else {
			pthread_t t;

			pthread_create(&t, NULL, worker_child,
				       &w->spawned_tid);
			pthread_join(t, NULL);
		}
		w->todo = 0;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void
worker_do(struct worker *w, int what)
{
	pthread_mutex_lock(&w->lock);
	w->todo = what;
	pthread_cond_broadcast(&w->cond);
	while (w->todo != 0 && what > 0)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

struct tally {
	const struct channel *ch;
	const unsigned char *lo, *hi;
	unsigned in_region;
	unsigned samples;
	unsigned forks;
	pid_t fork_tid;
};

static int
tally_record(const struct perf_event_header *hdr, void *ctx)
{
	struct tally *t = ctx;
	struct record_layout l;
	struct record_sample rs;
	struct record_task task;

	if (hdr->type == PERF_RECORD_SAMPLE) {
		source_layout(&t->ch->ev.src->events[0], &l);
		if (record_parse_sample(&l, hdr, &rs) == 0) {
			t->samples++;
			if (rs.addr >= (uintptr_t)t->lo &&
			    rs.addr < (uintptr_t)t->hi)
				t->in_region++;
		}
	} else if (hdr->type == PERF_RECORD_FORK &&
		   record_parse_task(hdr, &task) == 0) {
		t->forks++;
		t->fork_tid = (pid_t)task.tid;
	}
	return 0;
}

static struct tally
touch_and_count(struct worker *w, struct channel *ch)
{
	long page = sysconf(_SC_PAGESIZE);
	struct tally t = { .ch = ch };

	worker_do(w, 1);
	t.lo = w->region;
	t.hi = w->region + PAGES * (size_t)page;
	ring_drain(&ch->ring, tally_record, &t, NULL);
	if (ch->task_map)
		ring_drain(&ch->task_ring, tally_record, &t, NULL);
	munmap(w->region, PAGES * (size_t)page);
	return t;
}

/*
 * The child of small_ring_wakes: as nobody, with RLIMIT_MEMLOCK 0, a
 * channel asking for 1024 pages maps what perf_event_mlock_kb allows.
 * Filling 3/4 of that ring must wake a poller (the watermark is half the
 * ring); a watermark left at half the wanted ring is clamped by the kernel
 * to the whole ring, and no wakeup would come.
 */
static int
small_ring_child(const struct source *src)
{
	struct rlimit none = { 0, 0 };
	struct channel_params p = { .pid = getpid(), .tid = getpid(),
				    .cpu = -1, .ring_pages = 1024,
				    .period = 1, .enable = true };
	struct pollfd pfd;
	struct channel *ch;
	uint64_t size, want;
	char err[512];
	int ret;

	if (setrlimit(RLIMIT_MEMLOCK, &none) < 0 || setgroups(0, NULL) < 0 ||
	    setresgid(65534, 65534, 65534) < 0 ||
	    setresuid(65534, 65534, 65534) < 0)
		test_skip("cannot become nobody");
	ret = channel_open(&ch, src, &p, err, sizeof(err));
	if (ret < 0)
		test_skip("channel_open as nobody: %s", err);
	if (ch->ring_pages >= 1024) {
		channel_close(ch);
		test_skip("the locked-memory limit left the ring whole");
	}
	/* Bytes a sample takes, from 64 faults. */
	test_touch_pages(64);
	size = ring_pending(&ch->ring) / 64;
	ring_drain(&ch->ring, NULL, NULL, NULL);
	pfd = (struct pollfd){ .fd = channel_poll_fd(ch), .events = POLLIN };
	poll(&pfd, 1, 0);	/* clears a wakeup the 64 faults caused */
	check(size >= 16);
	want = ch->ring.data_size * 3 / 4;
	test_touch_pages(size ? want / size : 0);
	check(ring_pending(&ch->ring) > ch->ring.data_size / 2);
	check(ring_pending(&ch->ring) < ch->ring.data_size * 7 / 8);
	pfd.revents = 0;
	check_eq_i64(poll(&pfd, 1, 0), 1);
	check(pfd.revents & POLLIN);
	channel_close(ch);
	return test_result();
}

static void
small_ring_wakes(const struct source *src)
{
	pid_t pid;
	int status;

	if (geteuid() != 0)
		return;
	pid = fork();
	if (pid == 0)
		exit(small_ring_child(src));
	check(pid > 0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return;
	if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP)
		return;
	check(WIFEXITED(status));
	check_eq_i64(WEXITSTATUS(status), 0);
}

int
main(void)
{
	struct worker w = { .lock = PTHREAD_MUTEX_INITIALIZER,
			    .cond = PTHREAD_COND_INITIALIZER };
	struct channel_params p = { .pid = getpid(), .cpu = -1,
				    .ring_pages = 64, .period = 1,
				    .enable = true };
	struct channel *ch = NULL;
	struct source src;
	struct tally t;
	pthread_t thr;
	char err[512];
	int ret;

	setenv("MEMTOP_FAULTS_NO_TRACEPOINT", "1", 1);
	ret = source_faults_init(&src, err, sizeof(err));
	if (ret == -EACCES || ret == -EPERM)
		test_skip("cannot open page-fault events here: %s", err);
	check_eq_i64(ret, 0);
	/* Before any thread: the child forks a one-thread process. */
	small_ring_wakes(&src);

	pthread_create(&thr, NULL, worker_main, &w);
	pthread_mutex_lock(&w.lock);
	while (w.tid == 0)
		pthread_cond_wait(&w.cond, &w.lock);
	pthread_mutex_unlock(&w.lock);
	p.tid = w.tid;

	ret = channel_open(&ch, &src, &p, err, sizeof(err));
	if (ret == -EACCES || ret == -EPERM)
		test_skip("channel_open: %s", err);
	check_eq_i64(ret, 0);
	if (ret == 0) {
		check(ch->task_fd >= 0);
		t = touch_and_count(&w, ch);
		check_eq_u64(t.in_region, PAGES);

		check_eq_i64(channel_set_period(ch, 4), 0);
		t = touch_and_count(&w, ch);
		check_eq_u64(t.in_region, PAGES / 4);

		check_eq_i64(channel_set_period(ch, 0), 0);
		t = touch_and_count(&w, ch);
		check_eq_u64(t.samples, 0);

		check_eq_i64(channel_set_period(ch, 1), 0);
		check_eq_i64(channel_enable(ch, true), 0);
		t = touch_and_count(&w, ch);
		check_eq_u64(t.in_region, PAGES);

		/* A thread the worker creates shows up as FORK in the task
		 * ring, even while sampling is disabled. */
		check_eq_i64(channel_enable(ch, false), 0);
		worker_do(&w, 2);
		t = (struct tally){ .ch = ch };
		ring_drain(&ch->task_ring, tally_record, &t, NULL);
		ring_drain(&ch->ring, tally_record, &t, NULL);
		check_eq_u64(t.forks, 1);
		check_eq_i64(t.fork_tid, w.spawned_tid);
		check_eq_u64(t.samples, 0);
	}
	worker_do(&w, -1);
	pthread_join(thr, NULL);
	channel_close(ch);
	channel_close(NULL);
	return test_result();
}
