/*
 * The fleet metrics' core (ui/metrics/metrics.h) against hand-built
 * frames and the contract in man/memtop.1 (METRICS): every family's
 * values after two frames, counters that keep growing across a reset of
 * the frames' cumulative counts (the TUI's r) and a period change, the
 * top-N processes and pid="other", label escaping, both formats' family
 * lines and OpenMetrics' "# EOF", Accept negotiation, and snapshots that
 * do not change once made.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "frame.h"
#include "metrics.h"
#include "testlib.h"

#define NO_SERIES UINT64_MAX

/*
 * Two nodes (ids 0 and 2, so that ids are not indexes), four CPUs (CPU 3
 * without a node), three processes.  scale multiplies every count, so a
 * second frame differs from the first.
 */
static struct frame *
make_frame(uint64_t seq, uint64_t scale, uint64_t period)
{
	struct frame *f = frame_new();
	static const int32_t pids[3] = { 100, 200, 300 };

	f->seq = seq;
	strcpy(f->source, "pebs");
	f->n_events = 2;
	f->events = calloc(2, sizeof(char *));
	f->events[0] = strdup("cpu/mem-loads,ldlat=30/P");
	f->events[1] = strdup("cpu/mem-stores/P");
	f->period = period;
	f->tracked_pages = 40 * scale;
	/* samples 60 = loads 30 + stores 20 + other 10 */
	f->totals = (struct counts){ .samples = 60 * scale,
		.loads = 30 * scale, .stores = 20 * scale, .other = 10 * scale,
		.lost = 1 * scale, .throttled = 2 * scale,
		.unattributed = 3 * scale, .untracked = 4 * scale };
	/* What the frame builder would put: irrelevant to the exporter,
	 * which must not read it (see test_reset). */
	f->cumulative = f->totals;

	f->n_nodes = 2;
	f->nodes = calloc(2, sizeof(*f->nodes));
	f->matrix = calloc(4, sizeof(*f->matrix));
	f->matrix_unknown = calloc(2, sizeof(*f->matrix_unknown));
	/* matrix: cpu node 0 -> 0: 20, 0 -> 2: 10, 0 -> ?: 5;
	 *         cpu node 2 -> 0: 4, 2 -> 2: 15, 2 -> ?: 1; cpu ?: 5 */
	f->matrix[0] = 20 * scale;
	f->matrix[1] = 10 * scale;
	f->matrix[2] = 4 * scale;
	f->matrix[3] = 15 * scale;
	f->matrix_unknown[0] = 5 * scale;
	f->matrix_unknown[1] = 1 * scale;
	f->cpu_unknown = 5 * scale;
	f->mem_unknown = 11 * scale;	/* 5 + 1 + the cpu-unknown 5 */
	f->nodes[0] = (struct frame_node){ .node = 0, .cpu_samples = 35 * scale,
		.mem_samples = 24 * scale, .local = 20 * scale,
		.remote = 10 * scale };
	f->nodes[1] = (struct frame_node){ .node = 2, .cpu_samples = 20 * scale,
		.mem_samples = 25 * scale, .local = 15 * scale,
		.remote = 4 * scale };
	f->imbalance = 25.0 * 2 / 49;

	f->n_cpus = 4;
	f->cpus = calloc(4, sizeof(*f->cpus));
	for (int c = 0; c < 4; c++) {
		f->cpus[c].cpu = c;
		f->cpus[c].node = c == 3 ? FRAME_NODE_UNKNOWN : (c < 2 ? 0 : 2);
	}
	f->cpus[0].samples = 30 * scale;
	f->cpus[1].samples = 5 * scale;
	f->cpus[2].samples = 20 * scale;	/* + cpu_unknown 5 = 60 */

	f->n_threads = 4;
	f->threads = calloc(4, sizeof(*f->threads));
	f->threads[0] = (struct frame_thread){ pids[0], 100, 25 * scale };
	f->threads[1] = (struct frame_thread){ pids[0], 101, 5 * scale };
	f->threads[2] = (struct frame_thread){ pids[1], 200, 20 * scale };
	f->threads[3] = (struct frame_thread){ pids[2], 300, 10 * scale };
	f->n_targets = 3;
	f->targets = calloc(3, sizeof(*f->targets));
	for (int i = 0; i < 3; i++)
		f->targets[i].pid = pids[i];
	strcpy(f->targets[0].comm, "db \"main\"");
	strcpy(f->targets[1].comm, "back\\slash");
	/* A comm the kernel cut inside a UTF-8 character. */
	strcpy(f->targets[2].comm, "caf\xc3");

	f->migrations = (struct frame_migrations){ .moved = 3 * scale,
		.busy = 1 * scale, .skipped = 2 };
	f->collector_cpu_ns = 1500000000ull * scale + 7;
	return f;
}

/* The value of the series written exactly as `series` ("name{labels}"),
 * NO_SERIES when text has none. */
static uint64_t
value_of(const char *text, const char *series)
{
	size_t n = strlen(series);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (strncmp(p, series, n) == 0 && p[n] == ' ')
			return strtoull(p + n + 1, NULL, 10);
	return NO_SERIES;
}

static bool
has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (strncmp(p, line, n) == 0 && p[n] == '\n')
			return true;
	return false;
}

static char *
render(const struct metrics_acc *a, enum metrics_format fmt)
{
	struct metrics_snap *s = metrics_acc_snapshot(a);
	size_t len = 0;
	char *text = s ? metrics_render(s, fmt, &len) : NULL;

	metrics_snap_free(s);
	check(text != NULL);
	if (text)
		check_eq_u64(strlen(text), len);
	return text ? text : strdup("");
}

#define check_series(text, series, want) \
	check_eq_u64(value_of(text, series), (uint64_t)(want))

/* Frame 1 (scale 1, period 100) then frame 2 (scale 2, period 7). */
static void
check_two_frames(const char *t)
{
	check_series(t, "memtop_frames_total", 2);
	check_series(t, "memtop_samples_total{kind=\"load\"}", 90);
	check_series(t, "memtop_samples_total{kind=\"store\"}", 60);
	check_series(t, "memtop_samples_total{kind=\"other\"}", 30);
	check_series(t, "memtop_lost_samples_total", 3);
	check_series(t, "memtop_throttled_samples_total", 6);
	check_series(t, "memtop_unattributed_samples_total", 9);
	check_series(t, "memtop_untracked_samples_total", 12);
	/* loads: 30 x 100 + 60 x 7 */
	check_series(t, "memtop_estimated_accesses_total{kind=\"load\"}", 3420);
	check_series(t, "memtop_estimated_accesses_total{kind=\"store\"}", 2280);
	check_series(t, "memtop_estimated_accesses_total{kind=\"other\"}", 1140);
	check_series(t, "memtop_node_samples_total{node=\"0\",side=\"cpu\"}", 105);
	check_series(t, "memtop_node_samples_total{node=\"0\",side=\"memory\"}", 72);
	check_series(t, "memtop_node_samples_total{node=\"2\",side=\"cpu\"}", 60);
	check_series(t, "memtop_node_samples_total{node=\"2\",side=\"memory\"}", 75);
	check_series(t, "memtop_node_samples_total{node=\"unknown\",side=\"cpu\"}", 15);
	check_series(t, "memtop_node_samples_total{node=\"unknown\",side=\"memory\"}", 33);
	check_series(t, "memtop_node_samples_total{node=\"1\",side=\"cpu\"}", NO_SERIES);
	check_series(t, "memtop_node_local_samples_total{node=\"0\"}", 60);
	check_series(t, "memtop_node_local_samples_total{node=\"2\"}", 45);
	check_series(t, "memtop_node_remote_samples_total{node=\"0\"}", 30);
	check_series(t, "memtop_node_remote_samples_total{node=\"2\"}", 12);
	check_series(t, "memtop_matrix_samples_total{cpu_node=\"0\",mem_node=\"0\"}", 60);
	check_series(t, "memtop_matrix_samples_total{cpu_node=\"0\",mem_node=\"2\"}", 30);
	check_series(t, "memtop_matrix_samples_total{cpu_node=\"0\",mem_node=\"unknown\"}", 15);
	check_series(t, "memtop_matrix_samples_total{cpu_node=\"2\",mem_node=\"0\"}", 12);
	check_series(t, "memtop_matrix_samples_total{cpu_node=\"2\",mem_node=\"2\"}", 45);
	check_series(t, "memtop_matrix_samples_total{cpu_node=\"2\",mem_node=\"unknown\"}", 3);
	check_series(t, "memtop_matrix_samples_total{cpu_node=\"unknown\",mem_node=\"unknown\"}", 15);
	check_series(t, "memtop_cpu_samples_total{cpu=\"0\",node=\"0\"}", 90);
	check_series(t, "memtop_cpu_samples_total{cpu=\"1\",node=\"0\"}", 15);
	check_series(t, "memtop_cpu_samples_total{cpu=\"2\",node=\"2\"}", 60);
	check_series(t, "memtop_cpu_samples_total{cpu=\"3\",node=\"unknown\"}", 0);
	check_series(t, "memtop_cpu_samples_total{cpu=\"unknown\",node=\"unknown\"}", 15);
	check_series(t, "memtop_page_migrations_total{result=\"moved\"}", 9);
	check_series(t, "memtop_page_migrations_total{result=\"busy\"}", 3);
	check_series(t, "memtop_page_migrations_total{result=\"denied\"}", 0);
	check_series(t, "memtop_page_migrations_total{result=\"failed\"}", 0);
	check_series(t, "memtop_page_migrations_total{result=\"skipped\"}", 4);
	check_series(t, "memtop_sampling_period", 7);
	check_series(t, "memtop_tracked_pages", 80);
	check(has_line(t, "memtop_collector_cpu_seconds_total 4.500000014"));
	check(has_line(t, "memtop_node_imbalance_ratio 1.0204081632653061"));
	check(has_line(t, "memtop_build_info{version=\"9.9.9\",source=\"pebs\","
		       "events=\"cpu/mem-loads,ldlat=30/P,cpu/mem-stores/P\"} 1"));
}

/* Every family in both formats, and the counters of two frames. */
static void
test_families(void)
{
	struct metrics_acc *a = metrics_acc_new(20, "9.9.9");
	struct frame *f1 = make_frame(1, 1, 100), *f2 = make_frame(2, 2, 7);
	char *text, *om;

	check_eq_i64(metrics_acc_add(a, f1), 0);
	check_eq_i64(metrics_acc_add(a, f2), 0);
	text = render(a, METRICS_TEXT);
	om = render(a, METRICS_OPENMETRICS);
	check_two_frames(text);
	check_two_frames(om);

	check(has_line(text, "# TYPE memtop_samples_total counter"));
	check(has_line(text, "# TYPE memtop_build_info gauge"));
	check(has_line(text, "# TYPE memtop_tracked_pages gauge"));
	check(strstr(text, "# EOF") == NULL);
	check(strstr(text, "# UNIT") == NULL);
	check(has_line(om, "# TYPE memtop_samples counter"));
	check(has_line(om, "# TYPE memtop_build info"));
	check(has_line(om, "# TYPE memtop_collector_cpu_seconds counter"));
	check(has_line(om, "# UNIT memtop_collector_cpu_seconds seconds"));
	check(strstr(om, "# TYPE memtop_samples_total") == NULL);
	/* OpenMetrics ends with "# EOF" and a newline, text does not. */
	check(strlen(om) > 6 && strcmp(om + strlen(om) - 6, "# EOF\n") == 0);
	check(strstr(om, "# EOF") == om + strlen(om) - 6);
	/* No latency histogram: frames carry no latency distribution. */
	check(strstr(text, "latency") == NULL);
	free(text);
	free(om);
	frame_free(f1);
	frame_free(f2);
	metrics_acc_free(a);
}

/*
 * The TUI's r resets frame.cumulative (and the next frame's cumulative
 * is smaller than the last one's): exported counters keep adding the
 * intervals and never go down.
 */
static void
test_reset(void)
{
	struct metrics_acc *a = metrics_acc_new(20, "");
	struct frame *f1 = make_frame(1, 3, 1), *f2 = make_frame(2, 1, 1);
	char *text;

	f1->cumulative.samples = f1->cumulative.other = 1000;
	f2->cumulative = f2->totals;	/* after r */
	metrics_acc_add(a, f1);
	metrics_acc_add(a, f2);
	text = render(a, METRICS_TEXT);
	check_series(text, "memtop_samples_total{kind=\"other\"}", 40);
	check_series(text, "memtop_samples_total{kind=\"load\"}", 120);
	check_series(text, "memtop_lost_samples_total", 4);
	free(text);
	frame_free(f1);
	frame_free(f2);
	metrics_acc_free(a);
}

/* Processes: the top N by samples, the rest as pid="other"; names
 * escaped; "other" never goes down when a process climbs in. */
static void
test_processes(void)
{
	struct metrics_acc *a = metrics_acc_new(2, "");
	struct frame *f1 = make_frame(1, 1, 1), *f2 = make_frame(2, 1, 1);
	char *text;

	metrics_acc_add(a, f1);
	text = render(a, METRICS_TEXT);
	/* 100: 30, 200: 20, 300: 10 -> 300 is "other" */
	check_series(text, "memtop_process_samples_total{pid=\"100\","
		     "comm=\"db \\\"main\\\"\"}", 30);
	check_series(text, "memtop_process_samples_total{pid=\"200\","
		     "comm=\"back\\\\slash\"}", 20);
	check_series(text, "memtop_process_samples_total{pid=\"other\"}", 10);
	free(text);

	/* Frame 2: pid 300 takes 100 samples and climbs past 200. */
	f2->threads[3].samples = 100;
	metrics_acc_add(a, f2);
	text = render(a, METRICS_TEXT);
	check_series(text, "memtop_process_samples_total{pid=\"300\","
		     "comm=\"caf\xef\xbf\xbd\"}", 110);
	check_series(text, "memtop_process_samples_total{pid=\"100\","
		     "comm=\"db \\\"main\\\"\"}", 60);
	check_series(text, "memtop_process_samples_total{pid=\"200\","
		     "comm=\"back\\\\slash\"}", NO_SERIES);
	/* 10 before, + pid 200's 20 of frame 2 */
	check_series(text, "memtop_process_samples_total{pid=\"other\"}", 30);
	free(text);
	frame_free(f1);
	frame_free(f2);

	/* --metrics-top 0: one series, all samples in it. */
	metrics_acc_free(a);
	a = metrics_acc_new(0, "");
	f1 = make_frame(1, 1, 1);
	metrics_acc_add(a, f1);
	text = render(a, METRICS_TEXT);
	check_series(text, "memtop_process_samples_total{pid=\"other\"}", 60);
	check(strstr(text, "pid=\"100\"") == NULL);
	free(text);
	frame_free(f1);
	metrics_acc_free(a);
}

/* Before the first frame: counters at 0, no per-node or build series;
 * no imbalance gauge when the frame has none; a snapshot never changes. */
static void
test_empty_and_snapshots(void)
{
	struct metrics_acc *a = metrics_acc_new(20, "1");
	struct frame *f = make_frame(1, 1, 1);
	struct metrics_snap *s;
	size_t len;
	char *text = render(a, METRICS_TEXT), *again;

	check_series(text, "memtop_frames_total", 0);
	check_series(text, "memtop_samples_total{kind=\"load\"}", 0);
	check(strstr(text, "memtop_build_info") == NULL);
	check(strstr(text, "memtop_node_samples_total") == NULL);
	check(strstr(text, "memtop_sampling_period") == NULL);
	free(text);

	s = metrics_acc_snapshot(a);
	f->imbalance = -1;
	metrics_acc_add(a, f);
	again = metrics_render(s, METRICS_TEXT, &len);
	check_series(again, "memtop_frames_total", 0);
	free(again);
	metrics_snap_free(s);
	text = render(a, METRICS_TEXT);
	check_series(text, "memtop_frames_total", 1);
	check(strstr(text, "memtop_node_imbalance_ratio") == NULL);
	free(text);
	frame_free(f);
	metrics_acc_free(a);
}

static void
test_negotiate(void)
{
	static const struct {
		const char *accept;
		enum metrics_format want;
	} cases[] = {
		{ NULL, METRICS_TEXT },
		{ "", METRICS_TEXT },
		{ "*/*", METRICS_TEXT },
		{ "text/plain", METRICS_TEXT },
		{ "application/openmetrics-text", METRICS_OPENMETRICS },
		{ "Application/OpenMetrics-Text; version=1.0.0",
		  METRICS_OPENMETRICS },
		/* Prometheus 2.42's scrape header */
		{ "application/openmetrics-text;version=1.0.0,application/"
		  "openmetrics-text;version=0.0.1;q=0.75,text/plain;version="
		  "0.0.4;q=0.5,*/*;q=0.1", METRICS_OPENMETRICS },
		/* Prometheus 3's, with escaping */
		{ "application/openmetrics-text;version=1.0.0;escaping="
		  "allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1"
		  ";q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
		  METRICS_OPENMETRICS },
		{ "text/plain;version=0.0.4;q=0.9, application/openmetrics-text"
		  ";q=0.5", METRICS_TEXT },
		{ "application/openmetrics-text;q=0", METRICS_TEXT },
		{ "application/openmetrics-text; version=2.0.0", METRICS_TEXT },
		{ "application/json, text/html", METRICS_TEXT },
		{ ";;;,,,==", METRICS_TEXT },
		{ "application/openmetrics-text;q=0.5, */*;q=0.5",
		  METRICS_OPENMETRICS },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (!check_eq_u64(metrics_negotiate(cases[i].accept),
				  cases[i].want))
			fprintf(stderr, "  Accept: %s\n", cases[i].accept ?
				cases[i].accept : "(none)");
	check(strstr(metrics_content_type(METRICS_OPENMETRICS),
		     "application/openmetrics-text; version=1.0.0") != NULL);
	check(strstr(metrics_content_type(METRICS_TEXT),
		     "text/plain; version=0.0.4") != NULL);
}

/* A node id no machine has (a crafted recording) is counted as unknown,
 * so each family still sums to the samples. */
static void
test_odd_node(void)
{
	struct metrics_acc *a = metrics_acc_new(20, "");
	struct frame *f = make_frame(1, 1, 1);
	char *text;

	f->nodes[1].node = 5000;
	metrics_acc_add(a, f);
	text = render(a, METRICS_TEXT);
	check_series(text, "memtop_node_samples_total{node=\"unknown\",side=\"cpu\"}", 25);
	check_series(text, "memtop_node_samples_total{node=\"unknown\",side=\"memory\"}", 36);
	check_series(text, "memtop_matrix_samples_total{cpu_node=\"0\",mem_node=\"unknown\"}", 15);
	check_series(text, "memtop_matrix_samples_total{cpu_node=\"unknown\",mem_node=\"unknown\"}", 25);
	check(strstr(text, "node=\"5000\"") == NULL);
	free(text);
	frame_free(f);
	metrics_acc_free(a);
}

int
main(void)
{
	test_families();
	test_reset();
	test_processes();
	test_empty_and_snapshots();
	test_negotiate();
	test_odd_node();
	return test_result();
}
