#include "config.h"

/* memtop-workload worker threads: the touches themselves.  Each worker
 * touches only the hot pages and region slots it owns (j % workers ==
 * index), so its counters in wl->hot have a single writer; the main thread
 * reads them after pthread_join().  Every touch goes through a volatile
 * pointer: a volatile access is a side effect, so the compiler can
 * neither drop a load whose value is unused nor merge stores. */

#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

/* Loads and stores per round in access mode. */
#define WORKLOAD_ACCESS_ROUND	65536U
#define WORKLOAD_CACHE_LINE	64U

/* splitmix64: a fixed seed per worker gives the same sequence each run. */
static uint64_t workload_worker_next(struct workload_worker *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1): 53 random bits. */
static double workload_worker_uniform(struct workload_worker *w)
{
	return (double)(workload_worker_next(w) >> 11) * 0x1p-53;
}

/* Uniform in [0, 1) is below 1.0 always and below 0.0 never, so ratio 1
 * means all writes and ratio 0 all reads. */
static bool workload_worker_pick_write(struct workload_worker *w)
{
	return workload_worker_uniform(w) < w->wl->opts->write_ratio;
}

/* One access at page + offset: a store or a load, never both, so a page
 * that was dropped takes exactly one fault (a load maps the zero page, a
 * store allocates; a load then a store would add a COW fault). */
static void workload_worker_touch(struct workload_worker *w, char *page,
				  size_t offset, bool write)
{
	volatile char *p = page + offset;

	if (write)
		*p = (char)(w->index + 1);
	else
		(void)*p;
}

static void workload_worker_count(struct workload_hot *hot, bool write)
{
	if (write)
		hot->writes++;
	else
		hot->reads++;
}

static bool workload_worker_stopped(const struct workload_worker *w)
{
	return atomic_load_explicit(&w->wl->stop, memory_order_relaxed);
}

/* Waits interval_ms or until stop, whichever comes first.  Returns true
 * when the worker should stop. */
static bool workload_worker_pause(struct workload_worker *w)
{
	struct workload *wl = w->wl;
	unsigned int ms = wl->opts->interval_ms;
	struct timespec until;
	bool stop;

	if (ms == 0)
		return workload_worker_stopped(w);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&wl->lock);
	while (!atomic_load(&wl->stop) &&
	       pthread_cond_timedwait(&wl->cond, &wl->lock, &until) == 0)
		;
	stop = atomic_load(&wl->stop);
	pthread_mutex_unlock(&wl->lock);
	return stop;
}

static bool workload_worker_rounds_done(const struct workload_worker *w)
{
	uint64_t rounds = w->wl->opts->rounds;

	return rounds && w->rounds >= rounds;
}

/* Touch mode: every region page of every owned slot once.  The first page
 * of slot j is hot page j. */
static int workload_worker_run_touch(struct workload_worker *w)
{
	struct workload *wl = w->wl;
	const struct workload_opts *opts = wl->opts;
	unsigned long j, page;

	for (j = w->index; j < opts->hot; j += wl->nr_workers) {
		unsigned long first = j * wl->stride;
		unsigned long end = j + 1 == opts->hot ?
				    opts->pages : first + wl->stride;

		if (workload_worker_stopped(w))
			return 0;
		for (page = first; page < end; page++) {
			bool write = workload_worker_pick_write(w);

			workload_worker_touch(w, wl->region +
					      page * WORKLOAD_PAGE_SIZE, 0,
					      write);
			w->touched_pages++;
			if (page == first) {
				wl->hot[j].faults++;
				workload_worker_count(&wl->hot[j], write);
			}
		}
	}
	w->rounds = 1;
	return 0;
}

/* One refault round: drop, then touch once, each owned hot page that the
 * skew draw selects.  A dropped page has no PTE, so its one touch is its
 * one fault. */
static int workload_worker_refault_round(struct workload_worker *w)
{
	struct workload *wl = w->wl;
	const struct workload_opts *opts = wl->opts;
	unsigned long j;

	for (j = w->index; j < opts->hot; j += wl->nr_workers) {
		char *page = workload_hot_addr(wl, j);
		bool write;

		if (opts->skew > 0 &&
		    workload_worker_uniform(w) >= wl->touch_prob[j])
			continue;
		if (madvise(page, WORKLOAD_PAGE_SIZE, MADV_DONTNEED) < 0)
			return -errno;
		write = workload_worker_pick_write(w);
		workload_worker_touch(w, page, 0, write);
		wl->hot[j].faults++;
		workload_worker_count(&wl->hot[j], write);
	}
	w->rounds++;
	return 0;
}

static int workload_worker_run_refault(struct workload_worker *w)
{
	int ret;

	while (!workload_worker_rounds_done(w) && !workload_worker_stopped(w)) {
		ret = workload_worker_refault_round(w);
		if (ret < 0)
			return ret;
		if (workload_worker_rounds_done(w))
			break;
		if (workload_worker_pause(w))
			break;
	}
	return 0;
}

/* Index into owned[] for a uniform u, by binary search over the
 * cumulative weights cdf[0..n-1] (cdf[n-1] is the total). */
static unsigned long workload_worker_pick(const double *cdf, unsigned long n,
					  double u)
{
	double target = u * cdf[n - 1];
	unsigned long lo = 0, hi = n - 1;

	while (lo < hi) {
		unsigned long mid = lo + (hi - lo) / 2;

		if (cdf[mid] > target)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Access mode: one first-touch store per owned hot page (a store, so no
 * zero-page mapping and no later COW fault), then rounds of loads and
 * stores with hot page j weighted 1/(j+1)^skew, spread over its cache
 * lines. */
static int workload_worker_run_access(struct workload_worker *w)
{
	struct workload *wl = w->wl;
	const struct workload_opts *opts = wl->opts;
	unsigned long n = 0, k, j;
	unsigned long *owned;
	double *cdf, sum = 0;
	unsigned int a;
	int ret = 0;

	for (j = w->index; j < opts->hot; j += wl->nr_workers)
		n++;
	if (n == 0)
		return 0;
	owned = calloc(n, sizeof(*owned));
	cdf = calloc(n, sizeof(*cdf));
	if (!owned || !cdf) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (k = 0, j = w->index; j < opts->hot; j += wl->nr_workers, k++) {
		owned[k] = j;
		sum += wl->touch_prob[j];
		cdf[k] = sum;
		workload_worker_touch(w, workload_hot_addr(wl, j), 0, true);
		wl->hot[j].faults++;
		wl->hot[j].writes++;
	}
	while (!workload_worker_rounds_done(w) && !workload_worker_stopped(w)) {
		for (a = 0; a < WORKLOAD_ACCESS_ROUND; a++) {
			uint64_t r = workload_worker_next(w);
			double u = (double)(r >> 11) * 0x1p-53;
			size_t line = (size_t)(r & 63) * WORKLOAD_CACHE_LINE;
			bool write = workload_worker_pick_write(w);

			j = owned[workload_worker_pick(cdf, n, u)];
			workload_worker_touch(w, workload_hot_addr(wl, j),
					      line, write);
			workload_worker_count(&wl->hot[j], write);
		}
		w->rounds++;
	}
out_free:
	free(owned);
	free(cdf);
	return ret;
}

void *workload_worker_main(void *arg)
{
	struct workload_worker *w = arg;
	struct workload *wl = w->wl;
	uint64_t one = 1;
	struct timespec ts;

	/* Before anything else: when this thread came to be, on the clock
	 * perf's samples use with use_clockid (memtop --record). */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	w->start_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	w->tid = gettid();
	switch (wl->opts->mode) {
	case WORKLOAD_MODE_TOUCH:
		w->error = workload_worker_run_touch(w);
		break;
	case WORKLOAD_MODE_REFAULT:
		w->error = workload_worker_run_refault(w);
		break;
	case WORKLOAD_MODE_ACCESS:
		w->error = workload_worker_run_access(w);
		break;
	}
	/* The main thread counts finished workers on this eventfd; a failed
	 * write only delays the end until --duration or a signal. */
	if (write(wl->done_fd, &one, sizeof(one)) < 0)
		w->error = w->error ? w->error : -errno;
	return NULL;
}
