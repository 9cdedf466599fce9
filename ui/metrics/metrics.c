/*
 * The exporter: the accumulator on the UI thread, the latest snapshot
 * shared with libmicrohttpd's thread, and --metrics-file.
 *
 * Hand-off (docs/design.md, "Fleet metrics"): with each frame the UI
 * thread adds the frame to the accumulator, makes a snapshot and swaps it
 * in under the lock.  A scrape takes a reference to the snapshot under
 * the lock and renders it after releasing the lock; whoever drops the
 * last reference frees it.  The lock is held only for a pointer swap or a
 * reference count, so neither thread waits for the other's work, and the
 * collector thread, which only queues frames, never waits for either.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "log.h"
#include "metrics_int.h"

struct metrics_snap *
metrics_get(struct metrics *m)
{
	struct metrics_snap *s;

	pthread_mutex_lock(&m->lock);
	s = m->cur;
	s->refs++;
	pthread_mutex_unlock(&m->lock);
	return s;
}

void
metrics_put(struct metrics *m, struct metrics_snap *s)
{
	bool last;

	pthread_mutex_lock(&m->lock);
	last = --s->refs == 0;
	pthread_mutex_unlock(&m->lock);
	if (last)
		metrics_snap_free(s);
}

/* Makes s the latest snapshot (taking over its reference). */
static void
metrics_swap(struct metrics *m, struct metrics_snap *s)
{
	struct metrics_snap *old;

	pthread_mutex_lock(&m->lock);
	old = m->cur;
	m->cur = s;
	pthread_mutex_unlock(&m->lock);
	if (old)
		metrics_put(m, old);
}

static void
metrics_free(struct metrics *m)
{
	if (m->cur)
		metrics_put(m, m->cur);
	metrics_acc_free(m->acc);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

int
metrics_open(struct metrics **out, const struct metrics_config *cfg,
	     char *err, size_t errlen)
{
	struct metrics *m = calloc(1, sizeof(*m));
	char why[256];
	int ret;

	*out = NULL;
	if (!m || pthread_mutex_init(&m->lock, NULL) != 0) {
		free(m);
		snprintf(err, errlen, "metrics: out of memory");
		return -ENOMEM;
	}
	m->file = cfg->file;
	m->acc = metrics_acc_new(cfg->top, cfg->version);
	m->cur = m->acc ? metrics_acc_snapshot(m->acc) : NULL;
	if (!m->cur) {
		metrics_free(m);
		snprintf(err, errlen, "metrics: out of memory");
		return -ENOMEM;
	}
	if (m->file) {
		ret = metrics_file_check(m->file, why, sizeof(why));
		if (ret < 0) {
			snprintf(err, errlen, "--metrics-file %s: %s", m->file,
				 why);
			metrics_free(m);
			return ret;
		}
	}
	if (cfg->listen && cfg->listen->family) {
		ret = metrics_http_start(m, cfg->listen, err, errlen);
		if (ret < 0) {
			metrics_free(m);
			return ret;
		}
	}
	*out = m;
	return 0;
}

/* The file after a frame.  Failures are logged when they start and
 * end; the first is kept for metrics_close. */
static void
metrics_write_file(struct metrics *m, const struct metrics_snap *s)
{
	char why[200];
	size_t len;
	char *text = metrics_render(s, METRICS_TEXT, &len);
	int ret = -ENOMEM;

	snprintf(why, sizeof(why), "%s", strerror(ENOMEM));
	if (text)
		ret = metrics_file_write(m->file, text, len, why, sizeof(why));
	free(text);
	if (ret < 0 && !m->file_failing)
		log_msg("--metrics-file %s: %s", m->file, why);
	else if (ret == 0 && m->file_failing)
		log_msg("--metrics-file %s: written again", m->file);
	m->file_failing = ret < 0;
	if (ret < 0 && !m->file_err) {
		m->file_err = ret;
		snprintf(m->file_why, sizeof(m->file_why), "%s", why);
	}
}

void
metrics_frame_taken(void *ctx, const struct frame *f)
{
	struct metrics *m = ctx;
	struct metrics_snap *s;
	int ret = metrics_acc_add(m->acc, f);

	if (ret < 0)
		log_msg("metrics: frame %llu: %s",
			(unsigned long long)f->seq, strerror(-ret));
	s = metrics_acc_snapshot(m->acc);
	if (!s) {
		/* Scrapes keep the previous snapshot; the next frame's
		 * brings every total up to date. */
		log_msg("metrics: frame %llu: snapshot: %s",
			(unsigned long long)f->seq, strerror(ENOMEM));
		return;
	}
	if (m->file)
		metrics_write_file(m, s);
	metrics_swap(m, s);
}

int
metrics_close(struct metrics *m, char *err, size_t errlen)
{
	int ret;

	if (!m)
		return 0;
	metrics_http_stop(m);
	ret = m->file_err;
	if (ret < 0)
		snprintf(err, errlen, "--metrics-file %s: %s", m->file,
			 m->file_why);
	metrics_free(m);
	return ret;
}
