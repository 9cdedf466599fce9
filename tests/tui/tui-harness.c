/*
 * tui-harness: plays the collector for tests/tui/tui-harness.sh.  The main
 * thread runs tui_run() exactly as memtop does; a producer thread stands
 * in for the collector and publishes synthetic frames whose content is a
 * function of the sequence number and of the commands received, so the
 * screens are deterministic and can be compared with golden files.
 *
 *   --frames N       publish N frames, then a final one (default: until q)
 *   --cpus N         CPUs in each frame (default 4), half on each node
 *   --interval-ms N  time between frames (default 200)
 *   --period N       period of the first frames (default 1000)
 *   --faults         act as the faults source (no load/store split)
 *   --names          frames carry every names count (maps failed 11,
 *                    maps skipped 12, mismatched 13, helper failed 14,
 *                    unwind fallbacks 15, pins dropped 16, stale
 *                    mmaps 17)
 *   --burst N        publish N frames at a time without waiting for the
 *                    UI to take the previous one (default: lock-step)
 *   --error MSG      the final frame carries this fatal error
 *   --stall-cmds     read commands only when a frame is due, so that
 *                    the command queue can fill up
 *   --iterations N   struct options.iterations for tui_run()
 *   --cmd-log FILE   one line per command received
 *   --pid-file FILE  write the process id
 *
 * Frame content (per interval, pages in rank order i = 0..29):
 *   page i: addr 0x7f0000000000 + i * 4096, samples 10 * (30 - i),
 *   loads 8 * (30 - i), stores 2 * (30 - i), node i % 2.
 *   Totals 4650 samples; 2 nodes; 3 threads; total = samples * frames
 *   since start or reset.  Paused frames carry no samples.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "cmd.h"
#include "frame-procs.h"
#include "tui-harness-parts.h"
#include "frame.h"
#include "queue.h"
#include "ui.h"

#define HARNESS_PAGES 30
#define HARNESS_BASE_ADDR 0x7f0000000000ULL
#define HARNESS_LOCKSTEP_RETRY_MS 10

struct harness {
	struct queue *frames;
	struct queue *cmds;
	unsigned n_frames;
	unsigned n_cpus;
	unsigned interval_ms;
	unsigned burst;		/* 0 = lock-step */
	bool faults;
	bool names;		/* --names */
	bool stall_cmds;
	const char *error;
	const char *note, *desc;	/* --note, --desc */
	FILE *cmd_log;

	/* Producer thread state. */
	uint64_t seq;
	uint64_t reset_seq;
	uint64_t period;
	enum sort_key sort;
	bool paused;
	bool final_sent;
	uint64_t dropped;
};

static char *
harness_xstrdup(const char *s)
{
	char *p = harness_xcalloc(strlen(s) + 1, 1);

	return memcpy(p, s, strlen(s) + 1);
}

static int64_t
harness_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Page in rank position r: latency sort shows the coolest pages first
 * (their synthetic latency is highest), every other key the hottest. */
static unsigned
harness_page_index(const struct harness *h, unsigned r)
{
	return h->sort == SORT_LATENCY ? HARNESS_PAGES - 1 - r : r;
}

static void
harness_pages(const struct harness *h, struct frame *f, uint64_t frames)
{
	uint64_t all = 0;

	for (unsigned i = 0; i < HARNESS_PAGES; i++)
		all += 10 * (HARNESS_PAGES - i);
	f->n_pages = HARNESS_PAGES;
	f->pages = harness_xcalloc(f->n_pages, sizeof(*f->pages));
	for (unsigned r = 0; r < HARNESS_PAGES; r++) {
		struct frame_page *p = &f->pages[r];
		unsigned i = harness_page_index(h, r);
		uint64_t w = HARNESS_PAGES - i;

		p->pid = HARNESS_PID;
		p->addr = HARNESS_BASE_ADDR + (uint64_t)i * 4096;
		p->size = 4096;
		p->samples = 10 * w;
		if (h->faults) {
			p->other = p->samples;
			p->latency = -1;
		} else {
			p->loads = 8 * w;
			p->stores = 2 * w;
			p->latency = 100 + 10.0 * i;
		}
		p->total = p->samples * frames;
		p->share = (double)p->samples / (double)all;
		p->node = i % HARNESS_NODES;
		p->remote = p->samples / 4;
		p->local = p->samples - p->remote;
		if (i < 10)
			p->region = harness_xstrdup("[heap]");
		else if (i < 20)
			p->region = harness_xstrdup("libsynth.so");
		if (i % 3 == 0)
			p->symbol = harness_xstrdup("hot_loop");
		if (i == 1) {	/* the detail view's page: a site and its
				 * caller, and an object */
			p->n_sites = 1;
			p->sites = harness_xcalloc(1, sizeof(*p->sites));
			p->sites[0].ip = 0x401136;
			p->sites[0].symbol = harness_xstrdup("fill+0x6");
			p->sites[0].samples = p->total;
			p->sites[0].caller = 0x401a20;
			p->sites[0].caller_symbol = harness_xstrdup("main+0x30");
			frame_page_object(p, "make_table+0x1c", 4u << 20);
		}
		f->totals.samples += p->samples;
		f->totals.loads += p->loads;
		f->totals.stores += p->stores;
		f->totals.other += p->other;
		f->nodes[p->node].mem_samples += p->samples;
	}
}

/* --names: every count of memory or code left unnamed. */
static void
harness_names(struct frame *f)
{
	f->names_maps_failed = 11;
	f->names_maps_skipped = 12;
	f->names_mismatched = 13;
	f->names_helper_failed = 14;
	f->names_unwind_fallbacks = 15;
	f->names_pins_dropped = 16;
	f->names_stale_mmaps = 17;
}

static struct frame *
harness_frame(const struct harness *h, bool final)
{
	struct frame *f = frame_new();
	uint64_t frames = h->seq - h->reset_seq;
	char err[128];

	if (!f) {
		fputs("tui-harness: out of memory\n", stderr);
		abort();
	}
	f->seq = h->seq;
	f->interval = h->interval_ms / 1000.0;
	/* memtop's own cost as the header shows it: 2 % of one CPU. */
	f->collector_cpu_ns = (uint64_t)h->interval_ms * 20000;
	f->time = (double)h->seq * f->interval;
	f->final = final;
	f->paused = h->paused;
	if (final && h->error)
		f->error = harness_xstrdup(h->error);
	snprintf(f->source, sizeof(f->source), "%s",
		 h->faults ? "faults" : "pebs");
	f->n_events = h->faults ? 1 : 2;
	f->events = harness_xcalloc(f->n_events, sizeof(*f->events));
	f->events[0] = harness_xstrdup(h->faults ? "page-faults" : "mem-loads");
	if (!h->faults)
		f->events[1] = harness_xstrdup("mem-stores");
	if (h->note || !h->faults)
		f->source_note = harness_xstrdup(h->note ? h->note :
						 "synthetic frames");
	f->has_kinds = !h->faults;
	f->period = h->period;
	f->sort = h->sort;
	f->n_targets = 1;
	f->targets = harness_xcalloc(1, sizeof(*f->targets));
	f->targets[0].pid = HARNESS_PID;
	snprintf(f->targets[0].comm, sizeof(f->targets[0].comm), "synthetic");
	f->targets[0].threads = final ? 0 : HARNESS_THREADS;
	f->targets[0].alive = !final;
	f->n_nodes = HARNESS_NODES;
	f->nodes = harness_xcalloc(HARNESS_NODES, sizeof(*f->nodes));
	f->matrix = harness_xcalloc(HARNESS_NODES * HARNESS_NODES,
				    sizeof(*f->matrix));
	f->matrix_unknown = harness_xcalloc(HARNESS_NODES,
					    sizeof(*f->matrix_unknown));
	for (size_t i = 0; i < HARNESS_NODES; i++) {
		f->nodes[i].node = (int32_t)i;
		f->nodes[i].mem_total_kb = 4194304;
		f->nodes[i].mem_free_kb = 1048576 * (i + 1);
	}
	if (!h->paused) {
		harness_pages(h, f, frames);
		frame_one_objsite(f, HARNESS_PID, 1);
		f->totals.lost = 1;
		f->totals.throttled = 2;
		f->totals.unattributed = 3;
	}
	f->tracked_pages = HARNESS_PAGES;
	if (h->names)
		harness_names(f);
	harness_cpus(h->n_cpus, f);
	harness_matrix(f);
	f->imbalance = f->totals.samples ?
		       (double)f->nodes[0].mem_samples * HARNESS_NODES /
		       (double)f->totals.samples : -1;
	harness_threads(f);
	f->cumulative = f->totals;
	f->cumulative.samples *= frames;
	f->cumulative.loads *= frames;
	f->cumulative.stores *= frames;
	f->cumulative.other *= frames;
	f->cumulative.lost = frames;
	f->cumulative.throttled = 2 * frames;
	f->cumulative.unattributed = 3 * frames;
	frame_one_process(f, HARNESS_PID, "synthetic", "/synthetic.slice");
	if (frame_check(f, err, sizeof(err)) < 0) {
		fprintf(stderr, "tui-harness: bad synthetic frame: %s\n", err);
		abort();
	}
	return f;
}

static void
harness_publish(struct harness *h, bool final)
{
	struct frame *f;

	h->seq++;
	f = harness_frame(h, final);
	if (queue_push(h->frames, &f) < 0) {
		frame_free(f);
		h->dropped++;
		return;
	}
	h->final_sent = final;
}

static const char *
harness_cmd_name(enum cmd_type type)
{
	static const char *const names[] = {
		[CMD_SET_PERIOD] = "SET_PERIOD", [CMD_PAUSE] = "PAUSE",
		[CMD_RESUME] = "RESUME", [CMD_TOGGLE_PAUSE] = "TOGGLE_PAUSE",
		[CMD_RESET] = "RESET", [CMD_SORT] = "SORT",
		[CMD_SET_TOP] = "SET_TOP", [CMD_QUIT] = "QUIT",
		[CMD_SET_GRANULARITY] = "SET_GRANULARITY",
		[CMD_PAGES_OF] = "PAGES_OF",
	};

	if ((unsigned)type < ARRAY_SIZE(names) && names[type])
		return names[type];
	return "?";
}

/* Returns true on CMD_QUIT. */
static bool
harness_commands(struct harness *h)
{
	struct cmd cmd;
	bool quit = false;

	while (queue_pop(h->cmds, &cmd) == 0) {
		if (h->cmd_log) {
			fprintf(h->cmd_log, "%s %" PRIu64 "\n",
				harness_cmd_name(cmd.type), cmd.value);
			fflush(h->cmd_log);
		}
		switch (cmd.type) {
		case CMD_SET_PERIOD:
			h->period = cmd.value;
			break;
		case CMD_SORT:
			if (cmd.value < SORT__COUNT)
				h->sort = (enum sort_key)cmd.value;
			break;
		case CMD_PAUSE:
		case CMD_RESUME:
		case CMD_TOGGLE_PAUSE:
			h->paused = cmd.type == CMD_PAUSE ? true :
				    cmd.type == CMD_RESUME ? false :
				    !h->paused;
			break;
		case CMD_RESET:
			h->reset_seq = h->seq;
			break;
		case CMD_SET_TOP:
		case CMD_SET_GRANULARITY:
			break;
		case CMD_QUIT:
			quit = true;
			break;
		case CMD_MIGRATE:
			break;
		case CMD_REPLAY_FASTER:
		case CMD_REPLAY_SLOWER:
		case CMD_REPLAY_END:
		case CMD_PAGES_OF:	/* every page is the target's */
			break;
		}
	}
	return quit;
}

static void *
harness_producer(void *arg)
{
	struct harness *h = arg;
	struct pollfd pfd = { .fd = queue_fd(h->cmds), .events = POLLIN };
	int64_t next = harness_now_ms() + h->interval_ms;

	/* poll() ignores a negative fd: commands wait for the next frame. */
	if (h->stall_cmds)
		pfd.fd = -1;

	for (;;) {
		int64_t wait = next - harness_now_ms();

		if (h->final_sent)
			wait = h->stall_cmds ? (int64_t)h->interval_ms : -1;
		else if (wait < 0)
			wait = 0;
		poll(&pfd, 1, (int)wait);
		if (harness_commands(h)) {
			if (!h->final_sent)
				harness_publish(h, true);
			break;
		}
		if (h->final_sent || harness_now_ms() < next)
			continue;
		/* Lock-step: the next frame waits until the UI has taken
		 * the previous one, so no frame is ever skipped. */
		if (!h->burst && queue_len(h->frames) > 0) {
			next = harness_now_ms() + HARNESS_LOCKSTEP_RETRY_MS;
			continue;
		}
		for (unsigned b = 0; b < (h->burst ? h->burst : 1); b++) {
			bool final = h->n_frames && h->seq + 1 > h->n_frames;

			harness_publish(h, final);
			if (final)
				break;
		}
		next += h->interval_ms;
	}
	return NULL;
}

static int
harness_usage(void)
{
	fputs("usage: tui-harness [--frames N] [--cpus N] [--interval-ms N] "
	      "[--period N] [--faults] [--names] [--burst N] [--error MSG] "
	      "[--stall-cmds] [--iterations N] [--note TEXT] [--desc TEXT] "
	      "[--cmd-log FILE] [--pid-file FILE]\n", stderr);
	return 2;
}

static bool
harness_number(const char *s, unsigned long *out)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return *end == '\0' && errno == 0;
}

/* The command line into h, opt and the two file names; 0, or the usage's
 * exit status. */
static int
harness_args(int argc, char **argv, struct harness *h, struct options *opt,
	     const char **pid_file, const char **cmd_log)
{
	for (int i = 1; i < argc; i++) {
		unsigned long v = 0;
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--faults") == 0) {
			h->faults = true;
			continue;
		}
		if (strcmp(a, "--names") == 0) {
			h->names = true;
			continue;
		}
		if (strcmp(a, "--stall-cmds") == 0) {
			h->stall_cmds = true;
			continue;
		}
		if (strcmp(a, "--error") == 0 && val) {
			h->error = val;
		} else if (strcmp(a, "--note") == 0 && val) {
			h->note = val;
		} else if (strcmp(a, "--desc") == 0 && val) {
			h->desc = val;
		} else if (strcmp(a, "--cmd-log") == 0 && val) {
			*cmd_log = val;
		} else if (strcmp(a, "--pid-file") == 0 && val) {
			*pid_file = val;
		} else if (!harness_number(val, &v)) {
			return harness_usage();
		} else if (strcmp(a, "--frames") == 0) {
			h->n_frames = (unsigned)v;
		} else if (strcmp(a, "--cpus") == 0 && v > 0 && v <= 4096) {
			h->n_cpus = (unsigned)v;
		} else if (strcmp(a, "--interval-ms") == 0 && v > 0) {
			h->interval_ms = (unsigned)v;
		} else if (strcmp(a, "--period") == 0 && v > 0) {
			h->period = v;
		} else if (strcmp(a, "--burst") == 0) {
			h->burst = (unsigned)v;
		} else if (strcmp(a, "--iterations") == 0) {
			opt->iterations = (long)v;
		} else {
			return harness_usage();
		}
		i++;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct harness h = {
		.n_cpus = 4, .interval_ms = 200, .period = 1000,
	};
	struct options opt = { .delay = 0.2, .top = 30 };
	struct ui_io io = { .opt = &opt,
			    .target_desc = "synthetic target (pid 4242)" };
	const char *pid_file = NULL, *cmd_log = NULL;
	struct cmd quit = { .type = CMD_QUIT };
	pthread_t producer;
	struct frame *f;
	sigset_t set;
	int ret = 1;

	ret = harness_args(argc, argv, &h, &opt, &pid_file, &cmd_log);
	if (ret != 0)
		return ret;
	ret = 1;
	opt.delay = h.interval_ms / 1000.0;
	io.target_desc = h.desc ? h.desc : io.target_desc;

	if (pid_file) {
		FILE *pf = fopen(pid_file, "w");

		if (!pf || fprintf(pf, "%d\n", (int)getpid()) < 0 ||
		    fclose(pf) != 0) {
			perror("tui-harness: pid file");
			return 1;
		}
	}
	if (cmd_log) {
		h.cmd_log = fopen(cmd_log, "w");
		if (!h.cmd_log) {
			perror("tui-harness: command log");
			return 1;
		}
	}

	/* As in memtop: the signals are blocked before any thread starts
	 * and arrive only on the signalfd the UI polls. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGWINCH);
	sigaddset(&set, SIGTSTP);
	sigaddset(&set, SIGCONT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	io.sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	h.frames = queue_new(16, sizeof(struct frame *));
	h.cmds = queue_new(16, sizeof(struct cmd));
	if (io.sigfd < 0 || !h.frames || !h.cmds) {
		perror("tui-harness: setup");
		goto out;
	}
	io.frames = h.frames;
	io.cmds = h.cmds;
	if (pthread_create(&producer, NULL, harness_producer, &h) != 0) {
		fputs("tui-harness: pthread_create failed\n", stderr);
		goto out;
	}

	ret = tui_run(&io);

	/* tui_run() sends CMD_QUIT itself unless the terminal never
	 * started; a second one is ignored. */
	while (queue_push(h.cmds, &quit) == -EAGAIN)
		usleep(1000);
	pthread_join(producer, NULL);
	while (queue_pop(h.frames, &f) == 0)
		frame_free(f);
out:
	queue_free(h.frames);
	queue_free(h.cmds);
	if (io.sigfd >= 0)
		close(io.sigfd);
	if (h.cmd_log)
		fclose(h.cmd_log);
	return ret;
}
