#include "config.h"

/* memtop-workload set-up and control: the region, its NUMA binding, worker
 * placement, the start gate, and the main thread's loop that starts late
 * workers, enforces --duration, reads signals and joins everything.
 * Main thread only; the workers' code is in workload_worker.c. */

#include <errno.h>
#include <math.h>
#include <numa.h>
#include <numaif.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

/* Fixed so that two runs with the same options make the same choices. */
#define WORKLOAD_SEED	0x6d656d746f70ULL

void *workload_hot_addr(const struct workload *wl, unsigned long j)
{
	return wl->region + j * wl->stride * WORKLOAD_PAGE_SIZE;
}

static int workload_err(const char *what, int err)
{
	fprintf(stderr, "memtop-workload: %s: %s\n", what, strerror(-err));
	return err;
}

/* MPOL_BIND before the first touch: every fault, including refaults after
 * MADV_DONTNEED, allocates on the node. */
static int workload_bind_region(struct workload *wl, int node)
{
	struct bitmask *nodes;
	int ret = 0;

	if (numa_available() < 0) {
		fputs("memtop-workload: --node: NUMA is not available on "
		      "this system (no NUMA support in the kernel)\n", stderr);
		return -ENOSYS;
	}
	if (node > numa_max_node() ||
	    !numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned int)node)) {
		fprintf(stderr, "memtop-workload: --node %d: no such memory "
			"node (highest is %d)\n", node, numa_max_node());
		return -EINVAL;
	}
	nodes = numa_allocate_nodemask();
	if (!nodes)
		return workload_err("numa_allocate_nodemask", -ENOMEM);
	numa_bitmask_setbit(nodes, (unsigned int)node);
	if (mbind(wl->region, wl->region_len, MPOL_BIND, nodes->maskp,
		  nodes->size + 1, 0) < 0)
		ret = workload_err("mbind(MPOL_BIND)", -errno);
	numa_bitmask_free(nodes);
	return ret;
}

static int workload_node_cpus(int node, cpu_set_t *set)
{
	struct bitmask *cpus;
	unsigned int cpu;
	int ret = 0;

	if (numa_available() < 0) {
		fputs("memtop-workload: --cpu-node: NUMA is not available "
		      "on this system\n", stderr);
		return -ENOSYS;
	}
	if (node > numa_max_node()) {
		fprintf(stderr, "memtop-workload: --cpu-node %d: no such node "
			"(highest is %d)\n", node, numa_max_node());
		return -EINVAL;
	}
	cpus = numa_allocate_cpumask();
	if (!cpus)
		return workload_err("numa_allocate_cpumask", -ENOMEM);
	if (numa_node_to_cpus(node, cpus) < 0) {
		ret = workload_err("numa_node_to_cpus", -errno);
		goto out_free;
	}
	CPU_ZERO(set);
	for (cpu = 0; cpu < cpus->size && cpu < CPU_SETSIZE; cpu++)
		if (numa_bitmask_isbitset(cpus, cpu))
			CPU_SET(cpu, set);
	if (CPU_COUNT(set) == 0) {
		fprintf(stderr, "memtop-workload: --cpu-node %d: the node has "
			"no CPUs\n", node);
		ret = -EINVAL;
	}
out_free:
	numa_bitmask_free(cpus);
	return ret;
}

/* --cpus pins worker i to cpus[i % n]; --cpu-node lets every worker run on
 * any CPU of the node.  CPUs outside our allowed set are bad input. */
static int workload_place_workers(struct workload *wl)
{
	const struct workload_opts *opts = wl->opts;
	cpu_set_t allowed, node_set;
	unsigned int i;
	int ret;

	if (opts->nr_cpus) {
		if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
			return workload_err("sched_getaffinity", -errno);
		for (i = 0; i < opts->nr_cpus; i++) {
			if (opts->cpus[i] >= CPU_SETSIZE ||
			    !CPU_ISSET(opts->cpus[i], &allowed)) {
				fprintf(stderr, "memtop-workload: --cpus: CPU "
					"%u is not online or not allowed\n",
					opts->cpus[i]);
				return -EINVAL;
			}
		}
		for (i = 0; i < wl->nr_workers; i++) {
			struct workload_worker *w = &wl->workers[i];

			CPU_ZERO(&w->cpus);
			CPU_SET(opts->cpus[i % opts->nr_cpus], &w->cpus);
			w->pinned = true;
		}
	} else if (opts->cpu_node >= 0) {
		ret = workload_node_cpus(opts->cpu_node, &node_set);
		if (ret < 0)
			return ret;
		for (i = 0; i < wl->nr_workers; i++) {
			wl->workers[i].cpus = node_set;
			wl->workers[i].pinned = true;
		}
	}
	return 0;
}

/* SIGTERM, SIGINT and SIGHUP end the run; SIGUSR1 opens the start gate.
 * They are blocked before any thread exists, so only the signalfd sees
 * them, and reset to default first in case the parent ignored them. */
static int workload_signals_init(struct workload *wl)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1 };
	sigset_t set;
	unsigned int i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		signal(sigs[i], SIG_DFL);
		sigaddset(&set, sigs[i]);
	}
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
		return workload_err("pthread_sigmask", -EINVAL);
	wl->sig_fd = signalfd(-1, &set, SFD_CLOEXEC);
	if (wl->sig_fd < 0)
		return workload_err("signalfd", -errno);
	return 0;
}

static int workload_sync_init(struct workload *wl)
{
	pthread_condattr_t attr;
	int ret;

	ret = pthread_condattr_init(&attr);
	if (ret)
		return -ret;
	ret = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(&wl->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (ret)
		return -ret;
	ret = pthread_mutex_init(&wl->lock, NULL);
	if (ret) {
		pthread_cond_destroy(&wl->cond);
		return -ret;
	}
	wl->sync_inited = true;
	return 0;
}

static int workload_alloc(struct workload *wl)
{
	const struct workload_opts *opts = wl->opts;
	unsigned long j;
	unsigned int i;

	wl->hot = calloc(opts->hot, sizeof(*wl->hot));
	wl->touch_prob = calloc(opts->hot, sizeof(*wl->touch_prob));
	wl->workers = calloc(wl->nr_workers, sizeof(*wl->workers));
	if (!wl->hot || !wl->touch_prob || !wl->workers)
		return workload_err("allocating tables", -ENOMEM);
	for (j = 0; j < opts->hot; j++)
		wl->touch_prob[j] = pow((double)(j + 1), -opts->skew);
	for (i = 0; i < wl->nr_workers; i++) {
		struct workload_worker *w = &wl->workers[i];

		w->wl = wl;
		w->index = i;
		w->late = i >= opts->threads;
		w->rng = WORKLOAD_SEED ^ ((uint64_t)(i + 1) *
					  0x9e3779b97f4a7c15ULL);
	}
	return 0;
}

/* Returns 0, -EINVAL for a node or CPU that does not exist here (a usage
 * error), or another -errno.  Each failure is reported on stderr. */
int workload_init(struct workload *wl, const struct workload_opts *opts)
{
	void *addr;
	int ret;

	memset(wl, 0, sizeof(*wl));
	wl->opts = opts;
	wl->sig_fd = -1;
	wl->done_fd = -1;
	wl->region = MAP_FAILED;
	wl->nr_workers = opts->threads + opts->late_threads;
	wl->stride = opts->pages / opts->hot;
	atomic_init(&wl->stop, false);

	ret = workload_alloc(wl);
	if (ret < 0)
		goto out_fini;
	ret = workload_place_workers(wl);
	if (ret < 0)
		goto out_fini;

	wl->region_len = opts->pages * WORKLOAD_PAGE_SIZE;
	addr = mmap(NULL, wl->region_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (addr == MAP_FAILED) {
		ret = workload_err("mmap", -errno);
		goto out_fini;
	}
	wl->region = addr;
	/* A huge page would turn the faults of 512 small pages into one.
	 * EINVAL means a kernel without THP, where nothing needs turning
	 * off. */
	if (madvise(wl->region, wl->region_len, MADV_NOHUGEPAGE) < 0 &&
	    errno != EINVAL) {
		ret = workload_err("madvise(MADV_NOHUGEPAGE)", -errno);
		goto out_fini;
	}
	if (opts->node >= 0) {
		ret = workload_bind_region(wl, opts->node);
		if (ret < 0)
			goto out_fini;
	}

	ret = workload_sync_init(wl);
	if (ret < 0) {
		workload_err("pthread sync init", ret);
		goto out_fini;
	}
	ret = workload_signals_init(wl);
	if (ret < 0)
		goto out_fini;
	wl->done_fd = eventfd(0, EFD_CLOEXEC);
	if (wl->done_fd < 0) {
		ret = workload_err("eventfd", -errno);
		goto out_fini;
	}
	return 0;

out_fini:
	workload_fini(wl);
	return ret;
}

static void workload_stop_and_join(struct workload *wl)
{
	unsigned int i;

	if (wl->sync_inited) {
		pthread_mutex_lock(&wl->lock);
		atomic_store(&wl->stop, true);
		pthread_cond_broadcast(&wl->cond);
		pthread_mutex_unlock(&wl->lock);
	}
	for (i = 0; wl->workers && i < wl->nr_workers; i++) {
		struct workload_worker *w = &wl->workers[i];

		if (w->started && !w->joined) {
			pthread_join(w->thread, NULL);
			w->joined = true;
		}
	}
}

void workload_fini(struct workload *wl)
{
	if (!wl)
		return;
	workload_stop_and_join(wl);
	if (wl->sync_inited) {
		pthread_cond_destroy(&wl->cond);
		pthread_mutex_destroy(&wl->lock);
		wl->sync_inited = false;
	}
	if (wl->region != MAP_FAILED && wl->region) {
		munmap(wl->region, wl->region_len);
		wl->region = MAP_FAILED;
	}
	if (wl->sig_fd >= 0)
		close(wl->sig_fd);
	if (wl->done_fd >= 0)
		close(wl->done_fd);
	wl->sig_fd = wl->done_fd = -1;
	free(wl->hot);
	free(wl->touch_prob);
	free(wl->workers);
	wl->hot = NULL;
	wl->touch_prob = NULL;
	wl->workers = NULL;
}

/* Called when the signalfd is readable.  Returns the ending signal's
 * number (also kept in exit_signal), 0 for SIGUSR1, or -errno. */
static int workload_read_signal(struct workload *wl)
{
	struct signalfd_siginfo si;
	ssize_t n;

	n = read(wl->sig_fd, &si, sizeof(si));
	if (n < 0)
		return -errno;
	if (n != sizeof(si))
		return -EIO;
	if (si.ssi_signo == SIGUSR1)
		return 0;
	wl->exit_signal = (int)si.ssi_signo;
	return (int)si.ssi_signo;
}

/* The start gate: a byte on --start-fd or SIGUSR1 with --wait-signal.
 * SIGTERM, SIGINT or SIGHUP while waiting sets exit_signal and returns 0;
 * the caller then skips the run. */
int workload_wait_start(struct workload *wl)
{
	const struct workload_opts *opts = wl->opts;
	struct pollfd fds[2];
	int ret;

	if (opts->start_fd < 0 && !opts->wait_signal)
		return 0;
	fds[0].fd = wl->sig_fd;
	fds[0].events = POLLIN;
	fds[1].fd = opts->start_fd;
	fds[1].events = POLLIN;
	for (;;) {
		char byte;
		ssize_t n;

		if (poll(fds, opts->start_fd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return workload_err("poll", -errno);
		}
		if (fds[0].revents & POLLIN) {
			ret = workload_read_signal(wl);
			if (ret < 0)
				return workload_err("reading signalfd", ret);
			if (ret > 0)
				return 0;
			if (opts->wait_signal)
				return 0;
		}
		if (opts->start_fd >= 0 && fds[1].revents) {
			n = read(opts->start_fd, &byte, 1);
			if (n == 1)
				return 0;
			if (n == 0) {
				fprintf(stderr, "memtop-workload: --start-fd "
					"%d closed before a start byte\n",
					opts->start_fd);
				return -EPIPE;
			}
			if (errno != EINTR && errno != EAGAIN) {
				ret = -errno;
				return workload_err("reading --start-fd", ret);
			}
		}
	}
}

static double workload_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int workload_start_workers(struct workload *wl, unsigned int first,
				  unsigned int end)
{
	pthread_attr_t attr;
	unsigned int i;
	int ret;

	for (i = first; i < end; i++) {
		struct workload_worker *w = &wl->workers[i];

		ret = pthread_attr_init(&attr);
		if (ret)
			return workload_err("pthread_attr_init", -ret);
		if (w->pinned)
			ret = pthread_attr_setaffinity_np(&attr,
							  sizeof(w->cpus),
							  &w->cpus);
		if (!ret)
			ret = pthread_create(&w->thread, &attr,
					     workload_worker_main, w);
		pthread_attr_destroy(&attr);
		if (ret)
			return workload_err("starting a worker thread", -ret);
		w->started = true;
	}
	return 0;
}

/* Main loop.  It sleeps in ppoll() on the signalfd and the done eventfd
 * until the next deadline (late start or --duration), so it never
 * sleep-polls.  Every exit path stops and joins all started workers. */
int workload_run(struct workload *wl)
{
	const struct workload_opts *opts = wl->opts;
	double start = workload_now();
	double deadline = opts->duration_s > 0 ? start + opts->duration_s : 0;
	double late_at = start + opts->late_delay_s;
	bool late_pending = opts->late_threads > 0;
	bool idle_to_deadline = opts->mode == WORKLOAD_MODE_TOUCH && deadline;
	unsigned int started, finished = 0, i;
	int ret;

	ret = workload_start_workers(wl, 0, opts->threads);
	started = opts->threads;
	while (ret == 0) {
		struct pollfd fds[2] = {
			{ .fd = wl->sig_fd, .events = POLLIN },
			{ .fd = wl->done_fd, .events = POLLIN },
		};
		double now = workload_now(), next = 0;
		struct timespec ts;
		uint64_t count;

		if (deadline && now >= deadline)
			break;
		if (late_pending && now >= late_at) {
			late_pending = false;
			ret = workload_start_workers(wl, opts->threads,
						     wl->nr_workers);
			started = wl->nr_workers;
			continue;
		}
		if (!late_pending && finished >= started && !idle_to_deadline)
			break;
		if (late_pending)
			next = late_at;
		if (deadline && (!next || deadline < next))
			next = deadline;
		if (next) {
			double wait = next - now;

			ts.tv_sec = (time_t)wait;
			ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
		}
		if (ppoll(fds, 2, next ? &ts : NULL, NULL) < 0) {
			if (errno == EINTR)
				continue;
			ret = workload_err("ppoll", -errno);
			break;
		}
		if (fds[0].revents & POLLIN) {
			ret = workload_read_signal(wl);
			if (ret > 0) {
				ret = 0;
				break;
			}
		}
		if ((fds[1].revents & POLLIN) &&
		    read(wl->done_fd, &count, sizeof(count)) == sizeof(count))
			finished += (unsigned int)count;
	}
	workload_stop_and_join(wl);
	wl->run_s = workload_now() - start;
	for (i = 0; ret == 0 && i < wl->nr_workers; i++) {
		if (wl->workers[i].error < 0) {
			ret = wl->workers[i].error;
			workload_err("worker", ret);
		}
	}
	return ret;
}
