/*
 * memtop entry point.  Main thread: parses the command line, picks the
 * source, sets up the collector (attaching or launching the target),
 * starts the collector thread, runs the UI (TUI or batch) and tears down;
 * signals are blocked in every thread, read by the UI from a signalfd. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base.h"
#include "cli.h"
#include "cmd.h"
#include "collector.h"
#include "dryrun.h"
#include "frame.h"
#include "heapprobe.h"
#include "launch.h"
#include "log.h"
#include "metrics.h"
#include "perfdata_read.h"
#include "perfdata_write.h"
#include "producer.h"
#include "queue.h"
#include "recorder.h"
#include "replay.h"
#include "rlimits.h"
#include "source.h"
#include "topo.h"
#include "ui.h"

/* 1 MiB a thread: 45 ms of 88-byte samples at 250 K/s, a frame build or
 * the first frame's symbol loading (bench/bench-live.py measures losses;
 * README.md, Performance).  With the half-ring watermark (collector/
 * channels/channel.c) a larger ring also means fewer wakeups. */
#define MAIN_RING_PAGES		256
#define MAIN_TUI_TOP_K		500
#define MAIN_FRAME_QUEUE	64
#define MAIN_CMD_QUEUE		64

static const char *const main_demo_argv[] = {
	"--mode", "refault", "--threads", "2", "--hot", "64", "--pages",
	"4096", "--skew", "1.0", "--duration", "0", "--quiet", NULL,
};

/* The workload generator: $MEMTOP_WORKLOAD, beside the executable (build
 * tree: ../tools/), or the installed libexec path. */
static int
main_find_workload(char *buf, size_t len)
{
	const char *env = getenv("MEMTOP_WORKLOAD");
	char self[PATH_MAX - 64];
	const char *rel[] = { "/../tools/memtop-workload",
			      "/memtop-workload" };
	ssize_t n;

	if (env && access(env, X_OK) == 0) {
		snprintf(buf, len, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash)
			*slash = '\0';
		for (size_t i = 0; i < ARRAY_SIZE(rel); i++) {
			snprintf(buf, len, "%s%s", self, rel[i]);
			if (access(buf, X_OK) == 0)
				return 0;
		}
	}
	snprintf(buf, len, "%s/memtop-workload", MEMTOP_LIBEXECDIR);
	return access(buf, X_OK) == 0 ? 0 : -ENOENT;
}

struct main_state {
	struct options opt;
	struct source src;
	struct topo *topo;
	struct queue *frames;
	struct queue *cmds;
	struct collector *collector;
	/* -i FILE: the reader and the replay thread instead of a collector */
	struct perfdata_reader *reader;
	struct replay *replay;
	struct perfdata_writer *recorder;	/* --record FILE */
	struct metrics *metrics;		/* --listen, --metrics-file */
	struct launch launch;
	bool launched;
	struct collector_scope scope;	/* -a, -G, -C */
	sigset_t old_mask;
	int sigfd;
	FILE *out;
};

static int
main_setup_signals(struct main_state *st)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGWINCH);
	sigaddset(&mask, SIGTSTP);
	sigaddset(&mask, SIGCONT);
	if (sigprocmask(SIG_BLOCK, &mask, &st->old_mask) < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	st->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return st->sigfd < 0 ? -errno : 0;
}

static int
main_attach(struct main_state *st, char *err, size_t errlen)
{
	char workload[PATH_MAX];
	char **argv = st->opt.command;
	char *demo[32];
	int ret;

	if (st->opt.mode == MODE_SYSTEM)
		return collector_attach_system(st->collector, err, errlen);
	if (st->opt.mode == MODE_PIDS) {
		for (size_t i = 0; i < st->opt.n_pids; i++) {
			ret = collector_attach_pid(st->collector,
						   st->opt.pids[i], err,
						   errlen);
			if (ret < 0)
				return ret;
		}
		return 0;
	}
	if (st->opt.mode == MODE_DEMO) {
		size_t n = 0;

		if (main_find_workload(workload, sizeof(workload)) < 0) {
			snprintf(err, errlen, "--demo: memtop-workload not "
				 "found (looked beside memtop and in %s); set "
				 "MEMTOP_WORKLOAD", MEMTOP_LIBEXECDIR);
			return -ENOENT;
		}
		demo[n++] = workload;
		for (size_t i = 0; main_demo_argv[i]; i++)
			demo[n++] = (char *)main_demo_argv[i];
		demo[n] = NULL;
		argv = demo;
	}
	ret = launch_prepare(&st->launch, argv, &st->old_mask);
	if (ret < 0) {
		snprintf(err, errlen, "cannot start '%s' (pipe, fork): %s",
			 argv[0], strerror(-ret));
		return ret;
	}
	ret = collector_attach_child(st->collector, st->launch.pid, err,
				     errlen);
	if (ret < 0) {
		launch_abort(&st->launch);
		return ret;
	}
	ret = launch_go(&st->launch);
	if (ret < 0) {
		snprintf(err, errlen, "cannot execute '%s': %s", argv[0],
			 strerror(-ret));
		return ret;
	}
	st->launched = true;
	return 0;
}

/* -i FILE: the reader, the recording's topology, the replay thread. */
static int
main_start_replay(struct main_state *st, char *err, size_t errlen)
{
	struct replay_config cfg = { 0 };
	const char *path = st->opt.input_path;
	char why[384];
	int ret;

	ret = perfdata_reader_open(&st->reader, path, why, sizeof(why));
	if (ret < 0) {
		snprintf(err, errlen, "-i %s: %s", path, why);
		return ret;
	}
	st->topo = perfdata_info_topo(perfdata_reader_info(st->reader), why,
				      sizeof(why));
	if (!st->topo) {
		snprintf(err, errlen, "-i %s: %s", path, why);
		return -EINVAL;
	}
	st->frames = queue_new(MAIN_FRAME_QUEUE, sizeof(struct frame *));
	st->cmds = queue_new(MAIN_CMD_QUEUE, sizeof(struct cmd));
	if (!st->frames || !st->cmds) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cfg.reader = st->reader;
	cfg.topo = st->topo;
	cfg.path = path;
	cfg.interval_s = st->opt.delay;
	cfg.top_k = st->opt.batch ? st->opt.top : MAIN_TUI_TOP_K;
	cfg.sort = st->opt.sort;
	cfg.max_pages = st->opt.max_pages;
	cfg.batch = st->opt.batch;
	cfg.frames = st->frames;
	cfg.cmds = st->cmds;
	ret = replay_new(&st->replay, &cfg, err, errlen);
	if (ret < 0)
		return ret;
	ret = producer_start(replay_producer(st->replay));
	if (ret < 0)
		snprintf(err, errlen, "pthread_create: %s", strerror(-ret));
	return ret;
}

/* --record FILE: created (or refused) before anything is launched. */
static int
main_open_record(struct main_state *st, uint64_t period, char *err,
		 size_t errlen)
{
	struct perfdata_writer_opts o = {
		.force = st->opt.force,
		.topo = st->topo,
		.sysfs_features = true,
		.cmdline = true,
	};
	char why[256];
	int ret;

	ret = perfdata_writer_open(&st->recorder, st->opt.record_path, &o,
				   why, sizeof(why));
	if (ret == 0) {
		ret = recorder_add_source(st->recorder, &st->src, period);
		if (ret < 0)
			snprintf(why, sizeof(why), "%s", strerror(-ret));
	}
	if (ret < 0)
		snprintf(err, errlen, "--record %s: %s", st->opt.record_path,
			 why);
	return ret;
}

/* After the collector is joined: features, attrs, header.  0 or -errno. */
static int
main_close_record(struct main_state *st)
{
	const struct perfdata_writer_stats *ws =
		perfdata_writer_stats(st->recorder);
	char why[256];
	int ret;

	ret = perfdata_writer_close(st->recorder, why, sizeof(why));
	if (ret < 0) {
		log_error("--record %s: %s", st->opt.record_path, why);
		return ret;
	}
	log_msg("--record %s: %llu records (%llu samples), %llu bytes; "
		"%llu records of other types not written",
		st->opt.record_path, (unsigned long long)ws->records,
		(unsigned long long)ws->samples,
		(unsigned long long)ws->bytes,
		(unsigned long long)ws->skipped);
	return 0;
}

static int
main_start(struct main_state *st, char *err, size_t errlen)
{
	struct collector_config cfg = { 0 };
	int ret;

	if (st->opt.mode == MODE_REPLAY)
		return main_start_replay(st, err, errlen);
	ret = source_select_opts(&(struct source_opts){
		.choice = st->opt.source, .period = st->opt.period,
		.ldlat = st->opt.ldlat, .system = st->opt.mode == MODE_SYSTEM,
		.cgroups = st->opt.n_cgroups || st->opt.cpus,
		.record = st->opt.record_path != NULL,
		.objects = st->opt.mode != MODE_SYSTEM }, &st->src, err, errlen);
	if (ret < 0)
		return ret;
	st->topo = topo_new_system();
	if (!st->topo) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	st->frames = queue_new(MAIN_FRAME_QUEUE, sizeof(struct frame *));
	st->cmds = st->frames ? queue_new(MAIN_CMD_QUEUE, sizeof(struct cmd)) :
				NULL;
	if (!st->cmds) {
		/* eventfd (EMFILE ...) or calloc (ENOMEM) set errno. */
		ret = errno ? -errno : -ENOMEM;
		snprintf(err, errlen, "frame and command queues: %s",
			 strerror(-ret));
		return ret;
	}
	cfg.src = &st->src;
	cfg.topo = st->topo;
	cfg.period = source_period(&st->src, st->opt.period);
	cfg.interval_s = st->opt.delay;
	cfg.top_k = st->opt.batch ? st->opt.top : MAIN_TUI_TOP_K;
	cfg.sort = st->opt.sort;
	cfg.max_pages = st->opt.max_pages;
	cfg.page_shift = st->opt.page_shift;
	cfg.migrate_hot = st->opt.migrate_hot;
	cfg.ring_pages = MAIN_RING_PAGES;
	cfg.batch = st->opt.batch;
	cfg.resolve_nodes = true;
	cfg.heap = st->opt.heap;	/* --heap-objects: probes added here */
	(void)heapprobe_prepare(&st->src, &st->opt.heap, st->opt.n_pids ?
				st->opt.pids[0] : 0, &cfg.heap_cost);
	cfg.inherit_launched = collector_inherit_ok(&st->src);
	cfg.frames = st->frames;
	cfg.cmds = st->cmds;
	cfg.scope = st->opt.mode == MODE_SYSTEM ? &st->scope : NULL;
	cfg.max_processes = st->opt.max_processes;
	cfg.rearm_s = st->opt.rearm_s;
	if (st->opt.record_path) {
		ret = main_open_record(st, cfg.period, err, errlen);
		if (ret < 0)
			return ret;
		cfg.recorder = st->recorder;
	}
	ret = collector_new(&st->collector, &cfg, err, errlen);
	if (ret < 0)
		return ret;
	ret = main_attach(st, err, errlen);
	if (ret < 0)
		return ret;
	ret = producer_start(collector_producer(st->collector));
	if (ret < 0)
		snprintf(err, errlen, "pthread_create: %s", strerror(-ret));
	return ret;
}

/*
 * A launched command shares memtop's fate: SIGTERM, then reap.  Returns
 * the command's exit status when it ended on its own, -1 when memtop ended
 * it (q, a signal, -n) or it was never launched.
 */
static int
main_finish_child(struct main_state *st)
{
	int wstatus;

	if (!st->launched)
		return -1;
	wstatus = collector_child_wstatus(st->collector);
	if (wstatus == -1) {
		kill(st->launch.pid, SIGTERM);
		waitpid(st->launch.pid, &wstatus, 0);
		return -1;
	}
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return -1;
}

/* --listen, --metrics-file: after signals are blocked (the HTTP server's
 * thread inherits the mask), before a command is launched, so a port in
 * use ends memtop before anything runs. */
static int
main_open_metrics(struct main_state *st)
{
	struct metrics_config cfg = {
		.listen = &st->opt.listen,
		.file = st->opt.metrics_file,
		.top = st->opt.metrics_top,
		.version = MEMTOP_VERSION,
	};
	char err[512];

	if (!st->opt.listen.family && !st->opt.metrics_file)
		return 0;
	if (metrics_open(&st->metrics, &cfg, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	return 0;
}

static void
main_drain_frames(struct main_state *st)
{
	struct frame *f;

	while (st->frames && queue_pop(st->frames, &f) == 0)
		frame_free(f);
}

/* -a, -G, -C: 0; or an exit status: a missing cgroup is not found (1),
 * overlapping cgroups or a CPU the machine lacks are the user's to
 * change (2). */
static int
main_resolve_scope(struct main_state *st)
{
	const char *const *cgroups = (const char *const *)st->opt.cgroups;
	char err[512];
	int ret = st->opt.mode != MODE_SYSTEM ? 0 :
		  collector_scope_resolve(&st->scope, cgroups,
					  st->opt.n_cgroups, st->opt.cpus,
					  err, sizeof(err));

	if (ret < 0)
		log_error("%s", err);
	return ret == 0 ? 0 : ret == -EINVAL ? 2 : 1;
}

/* After the UI: the collector, --record, the metrics, a launched command
 * and -o are finished, in that order.  Returns the exit status. */
static int
main_stop(struct main_state *st, int status)
{
	struct cmd quit = { .type = CMD_QUIT };
	char err[512];
	int ret, child_status;

	/* The UI may have left before the final frame (error paths). */
	queue_push(st->cmds, &quit);
	ret = producer_join(st->replay ? replay_producer(st->replay) :
			    collector_producer(st->collector));
	main_drain_frames(st);
	if (ret < 0) {
		log_error("collector: %s", strerror(-ret));
		status = 1;
	}
	if (st->recorder && main_close_record(st) < 0)
		status = 1;
	if (metrics_close(st->metrics, err, sizeof(err)) < 0) {
		log_error("%s", err);
		status = 1;
	}
	st->metrics = NULL;
	child_status = main_finish_child(st);
	if (st->opt.batch && st->opt.mode == MODE_COMMAND &&
	    child_status >= 0 && status == 0)
		status = child_status;
	/* After a write error batch_run has said so: one line. */
	if (st->out && fclose(st->out) != 0 && status == 0) {
		log_error("-o %s: %s", st->opt.output_path,
			strerror(errno));
		status = 1;
	}
	st->out = NULL;
	return status;
}

static int
main_run(struct main_state *st)
{
	char err[512] = "";
	char desc[256], hint[96];
	struct ui_io io = { 0 };
	int ret, status;

	if (!st->opt.batch && (!isatty(STDIN_FILENO) ||
			       !isatty(STDOUT_FILENO))) {
		log_error("standard input/output is not a terminal; use -b "
			  "for batch output");
		return 1;
	}
	/* Before a command is launched: it must not run for nothing. */
	if (!st->opt.batch && tui_check_terminal(err, sizeof(err)) < 0) {
		log_error("%s", err);
		return 1;
	}
	ret = main_resolve_scope(st);
	if (ret)
		return ret;
	if (st->opt.batch && st->opt.output_path) {
		st->out = fopen(st->opt.output_path, "we");
		if (!st->out) {
			log_error("-o %s: %s",
				st->opt.output_path, strerror(errno));
			return 1;
		}
	}
	ret = main_setup_signals(st);
	if (ret < 0) {
		log_error("signalfd: %s%s", strerror(-ret),
			rlimits_hint(ret, NULL, hint, sizeof(hint)));
		return 1;
	}
	if (main_open_metrics(st) < 0)
		return 1;
	ret = main_start(st, err, sizeof(err));
	if (ret < 0) {
		log_error("%s%s", err,
			rlimits_hint(ret, err, hint, sizeof(hint)));
		if (st->collector && st->launched)
			main_finish_child(st);
		return 1;
	}
	cli_describe_target(&st->opt, st->scope.name, desc, sizeof(desc));
	io.frames = st->frames;
	io.cmds = st->cmds;
	io.sigfd = st->sigfd;
	io.opt = &st->opt;
	io.target_desc = desc;
	io.frame_taken = st->metrics ? metrics_frame_taken : NULL;
	io.frame_taken_ctx = st->metrics;
	if (st->opt.batch)
		status = batch_run(&io, st->out ? st->out : stdout);
	else
		status = tui_run(&io);

	return main_stop(st, status);
}

static void
main_cleanup(struct main_state *st)
{
	if (st->collector)
		producer_free(collector_producer(st->collector));
	if (st->replay)
		producer_free(replay_producer(st->replay));
	/* A run that failed before its UI: nothing more to say. */
	metrics_close(st->metrics, (char[1]){ 0 }, 1);
	perfdata_reader_free(st->reader);
	perfdata_writer_free(st->recorder);
	main_drain_frames(st);
	queue_free(st->frames);
	queue_free(st->cmds);
	topo_free(st->topo);
	collector_scope_fini(&st->scope);
	if (st->sigfd > 0)
		close(st->sigfd);
	cli_fini(&st->opt);
	log_close();
}

int
main(int argc, char **argv)
{
	struct main_state st = { .sigfd = -1 };
	char err[512];
	int ret;

	ret = cli_parse(argc, argv, &st.opt, err, sizeof(err));
	if (ret != 0) {
		fprintf(stderr, "memtop: %s\nTry 'memtop --help'.\n", err);
		cli_fini(&st.opt);
		return 2;
	}
	switch (st.opt.mode) {
	case MODE_HELP:
		cli_usage(stdout);
		cli_fini(&st.opt);
		return 0;
	case MODE_VERSION:
		printf("memtop %s\n", MEMTOP_VERSION);
		cli_fini(&st.opt);
		return 0;
	case MODE_LIST_EVENTS:
		ret = dryrun_list_events(stdout);
		cli_fini(&st.opt);
		return ret;
	case MODE_DRY_RUN:
		ret = dryrun_print(&(struct source_opts){
			.choice = st.opt.source, .period = st.opt.period,
			.ldlat = st.opt.ldlat, .system = st.opt.dry_run_system },
			st.opt.json, st.opt.dry_run_system, st.opt.cpus, stdout);
		cli_fini(&st.opt);
		return ret;
	default:
		break;
	}
	if (st.opt.log_path) {
		ret = log_open(st.opt.log_path);
		if (ret < 0) {
			log_error("--log %s: %s",
				st.opt.log_path, strerror(-ret));
			cli_fini(&st.opt);
			return 1;
		}
	}
	ret = main_run(&st);
	main_cleanup(&st);
	return ret;
}
