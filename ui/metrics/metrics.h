/*
 * Fleet metrics: memtop's figures for Prometheus (--listen) and for
 * node_exporter's textfile collector (--metrics-file).
 *
 * Threads (docs/design.md, "Threads"): the UI thread shows the exporter
 * every frame it takes (ui_io.frame_taken = metrics_frame_taken).  The
 * exporter adds the frame's interval counts to totals of its own, so the
 * exported counters only grow (the TUI's r resets the frames' cumulative
 * counts, not these), copies what it exports into an immutable snapshot
 * and swaps it in under a mutex.  libmicrohttpd's thread renders each
 * scrape from the latest snapshot; the collector thread never sees the
 * exporter, so a scrape cannot make it wait.
 *
 * The accumulator, snapshot and renderer below are also the exporter's
 * pure core, used by tests/unit/metrics/ and bench/bench-metrics.c.
 */
#ifndef MEMTOP_METRICS_H
#define MEMTOP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"

struct frame;
struct metrics;
struct metrics_acc;
struct metrics_snap;

enum metrics_format {
	METRICS_TEXT,		/* Prometheus text format 0.0.4 */
	METRICS_OPENMETRICS,	/* OpenMetrics 1.0.0, ends in "# EOF" */
};

struct metrics_config {
	const struct cli_listen *listen;	/* family 0: no endpoint */
	const char *file;			/* NULL: no --metrics-file */
	unsigned top;				/* --metrics-top */
	const char *version;			/* memtop's, for build_info */
};

/*
 * Main thread, after signals are blocked (libmicrohttpd's thread must
 * inherit the mask) and before a command is launched: binds the endpoint
 * and checks that the metrics file's folder takes a file.  0, or -errno
 * with one line in err ("--listen 127.0.0.1:9464: Address already in
 * use").
 */
int metrics_open(struct metrics **out, const struct metrics_config *cfg,
		 char *err, size_t errlen);

/* UI thread: the ui_io.frame_taken hook; ctx is the struct metrics. */
void metrics_frame_taken(void *ctx, const struct frame *f);

/*
 * Main thread, after the UI returned: stops the endpoint (waiting for the
 * scrape in progress) and frees everything.  0, or -errno with one line
 * in err when a --metrics-file write failed during the run (each failure
 * is also in the log).  NULL-safe.
 */
int metrics_close(struct metrics *m, char *err, size_t errlen);

/* --- the pure core (any thread, each object used by one at a time) --- */

/* Totals since the accumulator was made, top: processes with a series of
 * their own.  NULL on ENOMEM. */
struct metrics_acc *metrics_acc_new(unsigned top, const char *version);
void metrics_acc_free(struct metrics_acc *a);
/* Adds one frame's interval counts.  0, or -ENOMEM (the frame's per-node,
 * per-CPU or per-process counts are then partly missing). */
int metrics_acc_add(struct metrics_acc *a, const struct frame *f);
/* An immutable copy of what is exported, holding one reference; NULL on
 * ENOMEM. */
struct metrics_snap *metrics_acc_snapshot(const struct metrics_acc *a);
/* Drops the snapshot (the caller synchronises the reference count). */
void metrics_snap_free(struct metrics_snap *s);

/* The exposition in fmt: a NUL-terminated heap string, its length in
 * *len.  NULL on ENOMEM. */
char *metrics_render(const struct metrics_snap *s, enum metrics_format fmt,
		     size_t *len);
/* The Content-Type header value of fmt. */
const char *metrics_content_type(enum metrics_format fmt);
/* The format an Accept header asks for (NULL: no header): OpenMetrics
 * when application/openmetrics-text is acceptable at least as much as
 * text/plain. */
enum metrics_format metrics_negotiate(const char *accept);

#endif
