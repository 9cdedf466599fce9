/*
 * Plain-text batch report, the `top -b` of memtop: per frame a two-line
 * header, the hot-pages table, one line for NUMA nodes and one for CPUs,
 * then a blank line.  Columns have fixed widths so successive frames line
 * up and awk can pick fields.  UI thread; no state between frames.
 *
 * Strings from the target (comm, region, symbol) may hold any byte; control
 * characters are shown as '?' so a report never drives the terminal.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "report.h"
#include "sortkey.h"

/* The first failing stdio call's errno sticks in err. */
struct report_text {
	FILE *out;
	int err;
};

static void
report_text_printf(struct report_text *tw, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
report_text_printf(struct report_text *tw, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfprintf(tw->out, fmt, ap);
	va_end(ap);
	if (rc < 0 && tw->err == 0)
		tw->err = errno ? errno : EIO;
}

/* Copies at most n bytes of s into buf (size len), control bytes as '?'. */
static const char *
report_text_clean(char *buf, size_t len, const char *s, size_t n)
{
	size_t i;

	if (!s)
		s = "-";
	for (i = 0; i + 1 < len && i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		buf[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	buf[i] = '\0';
	return buf;
}

static double
report_text_percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void
report_text_header(struct report_text *tw, const struct frame *f)
{
	const struct counts *t = &f->totals;
	uint64_t threads = 0;
	char comm[sizeof(f->targets[0].comm) + 1];
	char src[sizeof(f->source) + 1];
	char msg[256];

	for (size_t i = 0; i < f->n_targets; i++)
		threads += f->targets[i].threads;

	report_text_printf(tw, "memtop frame %" PRIu64 "  time %.3fs  "
			   "interval %.3fs  source %s", f->seq, f->time,
			   f->interval,
			   report_text_clean(src, sizeof(src), f->source,
					     sizeof(f->source)));
	if (f->n_events) {
		for (size_t i = 0; i < f->n_events; i++) {
			char ev[64];

			report_text_printf(tw, "%s%s", i ? "," : " (",
					   report_text_clean(ev, sizeof(ev),
							     f->events[i],
							     SIZE_MAX));
		}
		report_text_printf(tw, ")");
	}
	report_text_printf(tw, "  period %" PRIu64 "  sort %s  threads %"
			   PRIu64 "%s%s\n", f->period, sortkey_name(f->sort),
			   threads, f->paused ? "  PAUSED" : "",
			   f->final ? "  FINAL" : "");

	report_text_printf(tw, "samples %" PRIu64 ": loads %" PRIu64
			   ", stores %" PRIu64 ", other %" PRIu64 "%s;"
			   "  lost %" PRIu64 ", throttled %" PRIu64
			   ", unattributed %" PRIu64 ", untracked %" PRIu64
			   "\n", t->samples, t->loads, t->stores, t->other,
			   f->has_kinds ? "" : " (kinds unknown)", t->lost,
			   t->throttled, t->unattributed, t->untracked);
	if (frame_names_facts(f, msg, sizeof(msg)))
		report_text_printf(tw, "%s\n", msg);

	if (f->scope)
		report_text_printf(tw, "scope %s  cpus %s  offline %s  "
				   "hotplug %" PRIu64 "\n",
				   report_text_clean(msg, sizeof(msg), f->scope,
						     SIZE_MAX),
				   f->scope_cpus ? f->scope_cpus : "-",
				   f->scope_offline && f->scope_offline[0] ?
				   f->scope_offline : "-", f->scope_hotplug);
	for (size_t i = 0; i < f->n_targets; i++) {
		const struct frame_target *tg = &f->targets[i];

		report_text_printf(tw, "target %" PRId32 " %s  threads %"
				   PRIu32 "%s\n", tg->pid,
				   report_text_clean(comm, sizeof(comm),
						     tg->comm,
						     sizeof(tg->comm)),
				   tg->threads, tg->alive ? "" : "  exited");
		if (tg->unwatched)
			report_text_printf(tw, "target %" PRId32 " unwatched "
					   "threads %" PRIu32 " (see --log)\n",
					   tg->pid, tg->unwatched);
	}
	if (f->skipped)
		report_text_printf(tw, "skipped %" PRIu64 " frames\n",
				   f->skipped);
}

static void
report_text_pages(struct report_text *tw, const struct frame *f,
		  unsigned top)
{
	size_t rows = f->n_pages < top ? f->n_pages : top;

	report_text_printf(tw, "%18s %7s %8s %8s %8s %10s %7s %4s  %s\n",
			   "ADDR", "PID", "SAMPLES", "LOADS", "STORES",
			   "TOTAL", "SHARE", "NODE", "REGION");
	for (size_t i = 0; i < rows; i++) {
		const struct frame_page *p = &f->pages[i];
		char addr[24], node[12], region[80], symbol[160], obj[160];
		const char *sym = p->symbol;
		double share = p->share;

		if (!(share >= 0.0 && share <= 1.0))
			share = 0.0;
		snprintf(addr, sizeof(addr), "0x%" PRIx64, p->addr);
		if (p->node < 0)
			snprintf(node, sizeof(node), "-");
		else
			snprintf(node, sizeof(node), "%" PRId32, p->node);
		report_text_clean(region, sizeof(region), p->region, SIZE_MAX);
		/* Heap and anonymous memory: the object's site. */
		if (p->object) {
			frame_object_label(p->object, obj, sizeof(obj));
			sym = obj;
		}
		report_text_clean(symbol, sizeof(symbol), sym, SIZE_MAX);
		report_text_printf(tw, "%18s %7" PRId32 " %8" PRIu64
				   " %8" PRIu64 " %8" PRIu64 " %10" PRIu64
				   " %6.2f%% %4s  %s%s%s\n", addr, p->pid,
				   p->samples, p->loads, p->stores, p->total,
				   100.0 * share, node, region,
				   sym ? " " : "", sym ? symbol : "");
	}
}

/* With more than one process sampled: a row each, at most top, then how
 * many rows were left out. */
static void
report_text_processes(struct report_text *tw, const struct frame *f,
		      unsigned top)
{
	size_t rows = f->n_processes < top ? f->n_processes : top;

	if (f->n_processes < 2)
		return;
	report_text_printf(tw, "%7s %-16s %8s %8s %8s %8s %8s %7s %5s  %s\n",
			   "PID", "COMM", "SAMPLES", "LOADS", "STORES",
			   "LOCAL", "REMOTE", "SHARE", "THR", "CGROUP");
	for (size_t i = 0; i < rows; i++) {
		const struct frame_process *p = &f->processes[i];
		char comm[sizeof(p->comm) + 1], cg[128];
		double share = p->share >= 0.0 && p->share <= 1.0 ? p->share :
			       0.0;

		report_text_printf(tw, "%7" PRId32 " %-16s %8" PRIu64 " %8"
				   PRIu64 " %8" PRIu64 " %8" PRIu64 " %8"
				   PRIu64 " %6.2f%% %5" PRIu32 "  %s%s\n",
				   p->pid, report_text_clean(comm, sizeof(comm),
				   p->comm, sizeof(p->comm)), p->samples,
				   p->loads, p->stores, p->local, p->remote,
				   100.0 * share, p->threads,
				   report_text_clean(cg, sizeof(cg), p->cgroup,
						     SIZE_MAX),
				   p->alive ? "" : "  exited");
	}
	if (f->n_processes > rows || f->processes_untracked)
		report_text_printf(tw, "processes: %zu more; untracked samples "
				   "%" PRIu64 "\n", f->n_processes - rows,
				   f->processes_untracked);
}

static void
report_text_nodes(struct report_text *tw, const struct frame *f)
{
	report_text_printf(tw, "nodes:");
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct frame_node *n = &f->nodes[i];

		report_text_printf(tw, "%s %" PRId32 ": cpu %" PRIu64 " mem %"
				   PRIu64 " local %.1f%%", i ? " |" : "",
				   n->node, n->cpu_samples, n->mem_samples,
				   report_text_percent(n->local,
						       n->local + n->remote));
	}
	if (f->mem_unknown)
		report_text_printf(tw, " | unknown mem %" PRIu64,
				   f->mem_unknown);
	report_text_printf(tw, "\n");
}

static void
report_text_cpus(struct report_text *tw, const struct frame *f)
{
	report_text_printf(tw, "cpus:");
	for (size_t i = 0; i < f->n_cpus; i++)
		report_text_printf(tw, " %" PRId32 ":%" PRIu64, f->cpus[i].cpu,
				   f->cpus[i].samples);
	if (f->cpu_unknown)
		report_text_printf(tw, " ?:%" PRIu64, f->cpu_unknown);
	report_text_printf(tw, "\n");
}

int
report_text_write(FILE *out, const struct frame *f, unsigned top)
{
	struct report_text tw = { .out = out, .err = 0 };
	char msg[512];

	report_text_header(&tw, f);
	if (f->seq == 1 && f->source_note)
		report_text_printf(&tw, "note: %s\n",
				   report_text_clean(msg, sizeof(msg),
						     f->source_note, SIZE_MAX));
	report_text_pages(&tw, f, top);
	report_text_processes(&tw, f, top);
	report_text_nodes(&tw, f);
	report_text_cpus(&tw, f);
	if (f->exit_status >= 0)
		report_text_printf(&tw, "command exited with status %d\n",
				   f->exit_status);
	if (f->error)
		report_text_printf(&tw, "error: %s\n",
				   report_text_clean(msg, sizeof(msg), f->error,
						     SIZE_MAX));
	report_text_printf(&tw, "\n");

	if (tw.err == 0 && ferror(out))
		tw.err = EIO;
	return -tw.err;
}
