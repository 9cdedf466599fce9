/*
 * JSON Lines writer: one frame becomes one line holding one object, keys in
 * the order man/memtop.1 lists them (JSON FIELDS), which scripts rely on.
 * UI thread.  The writer keeps no state between frames.
 *
 * Output is valid JSON whatever the frame holds: strings are escaped, bytes
 * that are not well-formed UTF-8 become U+FFFD, and non-finite doubles are
 * written as 0 (or null where null is documented).  Fractional numbers are
 * formatted from scaled integers, so LC_NUMERIC cannot turn "1.000" into
 * "1,000".
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "datasrc.h"
#include "frame.h"
#include "report.h"
#include "report_json_int.h"
#include "sortkey.h"

static void
report_json_note(struct report_json *jw, int rc)
{
	if (rc < 0 && jw->err == 0)
		jw->err = errno ? errno : EIO;
}

void
report_json_puts(struct report_json *jw, const char *s)
{
	report_json_note(jw, fputs(s, jw->out));
}

void
report_json_putc(struct report_json *jw, char c)
{
	report_json_note(jw, fputc(c, jw->out) == EOF ? -1 : 0);
}

/* `"key":` preceded by a comma unless it opens an object. */
void
report_json_key(struct report_json *jw, const char *key, bool first)
{
	report_json_note(jw, fprintf(jw->out, "%s\"%s\":", first ? "" : ",",
				     key));
}

void
report_json_u64(struct report_json *jw, const char *key, uint64_t v,
		bool first)
{
	report_json_key(jw, key, first);
	report_json_note(jw, fprintf(jw->out, "%" PRIu64, v));
}

void
report_json_i64(struct report_json *jw, const char *key, int64_t v,
		bool first)
{
	report_json_key(jw, key, first);
	report_json_note(jw, fprintf(jw->out, "%" PRId64, v));
}

void
report_json_bool(struct report_json *jw, const char *key, bool v)
{
	report_json_key(jw, key, false);
	report_json_puts(jw, v ? "true" : "false");
}

/* A node number, or null for FRAME_NODE_UNKNOWN (any negative value). */
static void
report_json_node(struct report_json *jw, const char *key, int32_t node,
		 bool first)
{
	if (node < 0) {
		report_json_key(jw, key, first);
		report_json_puts(jw, "null");
	} else {
		report_json_i64(jw, key, node, first);
	}
}

/*
 * Fixed-point with `decimals` digits (0..6) without printf's %f, which
 * follows LC_NUMERIC.  Non-finite input is written as 0.  Magnitudes past
 * 1e12 (far beyond any time, share or latency memtop produces) are written
 * as integers so the scaled value never overflows int64_t.
 */
void
report_json_fixed(struct report_json *jw, double v, unsigned decimals)
{
	static const int64_t scales[] = { 1, 10, 100, 1000, 10000, 100000,
					  1000000 };
	int64_t scale, scaled, ipart, fpart;
	const char *sign = "";

	if (decimals > 6)
		decimals = 6;
	scale = scales[decimals];
	if (!isfinite(v))
		v = 0.0;
	if (v < 0) {
		sign = "-";
		v = -v;
	}
	if (v >= 1e12) {
		report_json_note(jw, fprintf(jw->out, "%s%" PRId64, sign,
					     (int64_t)v));
		return;
	}
	scaled = (int64_t)(v * (double)scale + 0.5);
	ipart = scaled / scale;
	fpart = scaled % scale;
	if (scaled == 0)
		sign = "";
	if (decimals == 0)
		report_json_note(jw, fprintf(jw->out, "%s%" PRId64, sign,
					     ipart));
	else
		report_json_note(jw, fprintf(jw->out, "%s%" PRId64 ".%0*" PRId64,
					     sign, ipart, (int)decimals,
					     fpart));
}

/*
 * Length of the well-formed UTF-8 sequence at s (at most n bytes), or 0
 * when it is not one: overlong forms, surrogates, code points past
 * U+10FFFF and truncated sequences are all rejected (RFC 3629, table 3-7
 * of the Unicode standard).
 */
static size_t
report_json_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* A JSON string from the first n bytes of s (stopping early at a NUL). */
void
report_json_strn(struct report_json *jw, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len;

	n = strnlen(s, n);
	report_json_putc(jw, '"');
	for (size_t i = 0; i < n; i += len) {
		unsigned char c = p[i];

		len = report_json_utf8_len(p + i, n - i);
		if (len == 0) {
			report_json_puts(jw, "\\ufffd");
			len = 1;
		} else if (c == '"' || c == '\\') {
			report_json_putc(jw, '\\');
			report_json_putc(jw, (char)c);
		} else if (c < 0x20 || c == 0x7f) {
			report_json_note(jw, fprintf(jw->out, "\\u%04x", c));
		} else {
			report_json_note(jw, fwrite(p + i, 1, len, jw->out) ==
					     len ? 0 : -1);
		}
	}
	report_json_putc(jw, '"');
}

/* A string, or null for NULL. */
void
report_json_str(struct report_json *jw, const char *key, const char *s,
		bool first)
{
	report_json_key(jw, key, first);
	if (s)
		report_json_strn(jw, s, SIZE_MAX);
	else
		report_json_puts(jw, "null");
}

static void
report_json_counts(struct report_json *jw, const char *key,
		   const struct counts *c)
{
	report_json_key(jw, key, false);
	report_json_putc(jw, '{');
	report_json_u64(jw, "samples", c->samples, true);
	report_json_u64(jw, "loads", c->loads, false);
	report_json_u64(jw, "stores", c->stores, false);
	report_json_u64(jw, "other", c->other, false);
	report_json_u64(jw, "lost", c->lost, false);
	report_json_u64(jw, "throttled", c->throttled, false);
	report_json_u64(jw, "unattributed", c->unattributed, false);
	report_json_u64(jw, "untracked", c->untracked, false);
	report_json_putc(jw, '}');
}

static void
report_json_targets(struct report_json *jw, const struct frame *f)
{
	report_json_key(jw, "targets", false);
	report_json_putc(jw, '[');
	for (size_t i = 0; i < f->n_targets; i++) {
		const struct frame_target *t = &f->targets[i];

		report_json_puts(jw, i ? ",{" : "{");
		report_json_i64(jw, "pid", t->pid, true);
		report_json_key(jw, "comm", false);
		report_json_strn(jw, t->comm, sizeof(t->comm));
		report_json_u64(jw, "threads", t->threads, false);
		/* Only when some threads could not be watched (memtop(1)). */
		if (t->unwatched)
			report_json_u64(jw, "unwatched", t->unwatched, false);
		report_json_bool(jw, "alive", t->alive);
		report_json_putc(jw, '}');
	}
	report_json_putc(jw, ']');
}

/* Code sites, and line heat for the pages that carry it (memtop(1)). */
/* "levels": {"L1": n, ...}: non-zero data_src level classes only. */
static void
report_json_levels(struct report_json *jw, const uint64_t *levels)
{
	bool first = true;

	report_json_key(jw, "levels", false);
	report_json_putc(jw, '{');
	for (int i = 0; i < FRAME_LEVELS; i++) {
		if (!levels[i])
			continue;
		report_json_u64(jw, datasrc_level_name((enum datasrc_level)i),
				levels[i], first);
		first = false;
	}
	report_json_putc(jw, '}');
}

static void
report_json_page_names(struct report_json *jw, const struct frame_page *p)
{
	report_json_key(jw, "sites", false);
	report_json_putc(jw, '[');
	for (size_t i = 0; i < p->n_sites; i++) {
		const struct frame_site *s = &p->sites[i];

		report_json_puts(jw, i ? ",{" : "{");
		report_json_note(jw, fprintf(jw->out, "\"ip\":\"0x%" PRIx64
					     "\"", s->ip));
		report_json_str(jw, "symbol", s->symbol, false);
		report_json_u64(jw, "samples", s->samples, false);
		if (s->caller)
			report_json_note(jw, fprintf(jw->out, ",\"caller\":"
						     "\"0x%" PRIx64 "\"",
						     s->caller));
		else
			report_json_puts(jw, ",\"caller\":null");
		report_json_str(jw, "called_from", s->caller_symbol, false);
		report_json_putc(jw, '}');
	}
	report_json_putc(jw, ']');
	report_json_u64(jw, "sites_other", p->sites_other, false);
	if (p->levels)
		report_json_levels(jw, p->levels);
	if (!p->lines)
		return;
	report_json_key(jw, "lines", false);
	report_json_putc(jw, '[');
	for (size_t i = 0; i < FRAME_LINES; i++)
		report_json_note(jw, fprintf(jw->out, "%s%" PRIu32,
					     i ? "," : "", p->lines[i]));
	report_json_putc(jw, ']');
}

/* The code view: functions causing most samples. */
static void
report_json_code_sites(struct report_json *jw, const struct frame *f)
{
	report_json_u64(jw, "granularity", f->granularity, false);
	report_json_key(jw, "code_sites", false);
	report_json_putc(jw, '[');
	for (size_t i = 0; i < f->n_code_sites; i++) {
		const struct frame_code_site *c = &f->code_sites[i];

		report_json_puts(jw, i ? ",{" : "{");
		report_json_i64(jw, "pid", c->pid, true);
		report_json_str(jw, "function", c->function, false);
		report_json_str(jw, "module", c->module, false);
		report_json_u64(jw, "samples", c->samples, false);
		report_json_u64(jw, "total", c->total, false);
		report_json_putc(jw, '}');
	}
	report_json_putc(jw, ']');
	report_json_u64(jw, "code_unknown", f->code_unknown, false);
	report_json_u64(jw, "code_untracked", f->code_untracked, false);
	report_json_u64(jw, "sites_evicted", f->sites_evicted, false);
	report_json_u64(jw, "levels_evicted", f->levels_evicted, false);
	report_json_key(jw, "names", false);
	report_json_putc(jw, '{');
	report_json_u64(jw, "mismatched", f->names_mismatched, true);
	report_json_u64(jw, "maps_failed", f->names_maps_failed, false);
	report_json_u64(jw, "helper_failed", f->names_helper_failed, false);
	report_json_u64(jw, "maps_skipped", f->names_maps_skipped, false);
	report_json_u64(jw, "unwind_fallbacks", f->names_unwind_fallbacks,
			false);
	report_json_u64(jw, "pins_dropped", f->names_pins_dropped, false);
	report_json_u64(jw, "stale_mmaps", f->names_stale_mmaps, false);
	report_json_putc(jw, '}');
}


static void
report_json_page(struct report_json *jw, const struct frame_page *p)
{
	report_json_putc(jw, '{');
	report_json_i64(jw, "pid", p->pid, true);
	report_json_note(jw, fprintf(jw->out, ",\"addr\":\"0x%" PRIx64 "\"",
				     p->addr));
	report_json_u64(jw, "size", p->size, false);
	report_json_u64(jw, "samples", p->samples, false);
	report_json_u64(jw, "loads", p->loads, false);
	report_json_u64(jw, "stores", p->stores, false);
	report_json_u64(jw, "total", p->total, false);
	report_json_key(jw, "share", false);
	report_json_fixed(jw, p->share, 4);
	report_json_node(jw, "node", p->node, false);
	report_json_str(jw, "region", p->region, false);
	report_json_str(jw, "symbol", p->symbol, false);
	report_json_u64(jw, "other", p->other, false);
	report_json_key(jw, "latency", false);
	if (p->latency >= 0 && isfinite(p->latency))
		report_json_fixed(jw, p->latency, 1);
	else
		report_json_puts(jw, "null");
	report_json_u64(jw, "local", p->local, false);
	report_json_u64(jw, "remote", p->remote, false);
	report_json_page_names(jw, p);
	report_json_page_object(jw, p);
	report_json_page_damon(jw, p);
	report_json_putc(jw, '}');
}

static void
report_json_pages(struct report_json *jw, const struct frame *f)
{
	report_json_key(jw, "pages", false);
	report_json_putc(jw, '[');
	for (size_t i = 0; i < f->n_pages; i++) {
		if (i)
			report_json_putc(jw, ',');
		report_json_page(jw, &f->pages[i]);
	}
	report_json_putc(jw, ']');
}

static void
report_json_nodes(struct report_json *jw, const struct frame *f)
{
	report_json_key(jw, "nodes", false);
	report_json_putc(jw, '[');
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct frame_node *n = &f->nodes[i];

		report_json_puts(jw, i ? ",{" : "{");
		report_json_node(jw, "node", n->node, true);
		report_json_u64(jw, "cpu_samples", n->cpu_samples, false);
		report_json_u64(jw, "mem_samples", n->mem_samples, false);
		report_json_u64(jw, "local", n->local, false);
		report_json_u64(jw, "remote", n->remote, false);
		report_json_u64(jw, "mem_total_kb", n->mem_total_kb, false);
		report_json_u64(jw, "mem_free_kb", n->mem_free_kb, false);
		report_json_putc(jw, '}');
	}
	report_json_putc(jw, ']');
}

static void
report_json_cpus(struct report_json *jw, const struct frame *f)
{
	report_json_key(jw, "cpus", false);
	report_json_putc(jw, '[');
	for (size_t i = 0; i < f->n_cpus; i++) {
		const struct frame_cpu *c = &f->cpus[i];

		report_json_puts(jw, i ? ",{" : "{");
		report_json_i64(jw, "cpu", c->cpu, true);
		report_json_node(jw, "node", c->node, false);
		report_json_u64(jw, "samples", c->samples, false);
		report_json_putc(jw, '}');
	}
	report_json_putc(jw, ']');
}

static void
report_json_threads(struct report_json *jw, const struct frame *f)
{
	report_json_key(jw, "threads", false);
	report_json_putc(jw, '[');
	for (size_t i = 0; i < f->n_threads; i++) {
		const struct frame_thread *t = &f->threads[i];

		report_json_puts(jw, i ? ",{" : "{");
		report_json_i64(jw, "pid", t->pid, true);
		report_json_i64(jw, "tid", t->tid, false);
		report_json_u64(jw, "samples", t->samples, false);
		report_json_putc(jw, '}');
	}
	report_json_putc(jw, ']');
}

/* Row i = CPU node nodes[i], column j = memory node nodes[j].  A frame
 * without a matrix array (none built) reads as all zeros. */
static void
report_json_matrix(struct report_json *jw, const struct frame *f)
{
	report_json_key(jw, "matrix", false);
	report_json_putc(jw, '[');
	for (size_t i = 0; i < f->n_nodes; i++) {
		report_json_puts(jw, i ? ",[" : "[");
		for (size_t j = 0; j < f->n_nodes; j++) {
			uint64_t v = f->matrix ?
				f->matrix[i * f->n_nodes + j] : 0;

			report_json_note(jw, fprintf(jw->out, "%s%" PRIu64,
						     j ? "," : "", v));
		}
		report_json_putc(jw, ']');
	}
	report_json_putc(jw, ']');
}

/* Entry i: samples from CPUs of node nodes[i] to pages of unknown node. */
static void
report_json_matrix_unknown(struct report_json *jw, const struct frame *f)
{
	report_json_key(jw, "matrix_unknown", false);
	report_json_putc(jw, '[');
	for (size_t i = 0; i < f->n_nodes; i++) {
		uint64_t v = f->matrix_unknown ? f->matrix_unknown[i] : 0;

		report_json_note(jw, fprintf(jw->out, "%s%" PRIu64,
					     i ? "," : "", v));
	}
	report_json_putc(jw, ']');
}

static void
report_json_migrations(struct report_json *jw,
		       const struct frame_migrations *m)
{
	report_json_key(jw, "migrations", false);
	report_json_putc(jw, '{');
	report_json_u64(jw, "moved", m->moved, true);
	report_json_u64(jw, "busy", m->busy, false);
	report_json_u64(jw, "denied", m->denied, false);
	report_json_u64(jw, "failed", m->failed, false);
	report_json_u64(jw, "skipped", m->skipped, false);
	report_json_putc(jw, '}');
}

static void
report_json_noderes(struct report_json *jw, const struct frame_noderes *r)
{
	report_json_key(jw, "node_resolution", false);
	report_json_putc(jw, '{');
	report_json_u64(jw, "queried", r->queried, true);
	report_json_u64(jw, "resolved", r->resolved, false);
	report_json_u64(jw, "revalidated", r->revalidated, false);
	report_json_u64(jw, "changed", r->changed, false);
	report_json_u64(jw, "phys", r->phys, false);
	report_json_u64(jw, "query_us", r->query_us, false);
	report_json_putc(jw, '}');
}

int
report_json_write(FILE *out, const struct frame *f)
{
	struct report_json jw = { .out = out, .err = 0 };

	report_json_putc(&jw, '{');
	report_json_u64(&jw, "memtop", 1, true);
	report_json_u64(&jw, "seq", f->seq, false);
	report_json_key(&jw, "time", false);
	report_json_fixed(&jw, f->time, 3);
	report_json_key(&jw, "interval", false);
	report_json_fixed(&jw, f->interval, 3);
	report_json_bool(&jw, "final", f->final);
	report_json_key(&jw, "source", false);
	report_json_strn(&jw, f->source, sizeof(f->source));
	report_json_key(&jw, "events", false);
	report_json_putc(&jw, '[');
	for (size_t i = 0; i < f->n_events; i++) {
		if (i)
			report_json_putc(&jw, ',');
		if (f->events[i])
			report_json_strn(&jw, f->events[i], SIZE_MAX);
		else
			report_json_puts(&jw, "null");
	}
	report_json_putc(&jw, ']');
	report_json_u64(&jw, "period", f->period, false);
	report_json_targets(&jw, f);
	report_json_counts(&jw, "totals", &f->totals);
	report_json_counts(&jw, "cumulative", &f->cumulative);
	report_json_pages(&jw, f);
	report_json_nodes(&jw, f);
	report_json_cpus(&jw, f);
	report_json_threads(&jw, f);
	report_json_matrix(&jw, f);

	/* Extras, documented in memtop(1) under JSON FIELDS. */
	report_json_bool(&jw, "paused", f->paused);
	report_json_str(&jw, "sort", sortkey_name(f->sort), false);
	report_json_u64(&jw, "tracked_pages", f->tracked_pages, false);
	report_json_u64(&jw, "skipped", f->skipped, false);
	report_json_str(&jw, "source_note", f->source_note, false);
	report_json_bool(&jw, "has_kinds", f->has_kinds);
	report_json_u64(&jw, "mem_unknown", f->mem_unknown, false);
	report_json_u64(&jw, "cpu_unknown", f->cpu_unknown, false);
	report_json_matrix_unknown(&jw, f);
	report_json_key(&jw, "imbalance", false);
	if (f->imbalance >= 0 && isfinite(f->imbalance))
		report_json_fixed(&jw, f->imbalance, 3);
	else
		report_json_puts(&jw, "null");
	report_json_migrations(&jw, &f->migrations);
	report_json_noderes(&jw, &f->noderes);
	if (f->follow_mode[0]) {
		report_json_key(&jw, "follow", false);
		report_json_putc(&jw, '{');
		report_json_str(&jw, "mode", f->follow_mode, true);
		report_json_u64(&jw, "threads", f->follow_threads, false);
		report_json_u64(&jw, "gap_max_us", f->follow_gap_max_us,
				false);
		report_json_u64(&jw, "gap_mean_us", f->follow_gap_mean_us,
				false);
		report_json_u64(&jw, "lost_task_records",
				f->follow_task_lost, false);
		report_json_putc(&jw, '}');
	}
	report_json_u64(&jw, "collector_cpu_us", f->collector_cpu_ns / 1000,
			false);
	report_json_levels(&jw, f->levels);
	report_json_code_sites(&jw, f);
	report_json_scope(&jw, f);
	report_json_processes(&jw, f);
	report_json_objects(&jw, f);
	if (f->exit_status >= 0)
		report_json_i64(&jw, "exit_status", f->exit_status, false);
	if (f->error)
		report_json_str(&jw, "error", f->error, false);
	report_json_puts(&jw, "}\n");

	if (jw.err == 0 && ferror(out))
		jw.err = EIO;
	return -jw.err;
}
