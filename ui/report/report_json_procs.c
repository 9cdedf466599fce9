/*
 * JSON Lines writer, continued: the scope of a whole-machine view and the
 * process rows (man/memtop.1, JSON FIELDS).  UI thread.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "frame.h"
#include "report_json_int.h"

/* "scope": {name, cpus, offline, hotplug}, only for -a and -G. */
void
report_json_scope(struct report_json *jw, const struct frame *f)
{
	if (!f->scope)
		return;
	report_json_key(jw, "scope", false);
	report_json_putc(jw, '{');
	report_json_str(jw, "name", f->scope, true);
	report_json_str(jw, "cpus", f->scope_cpus, false);
	report_json_str(jw, "offline", f->scope_offline, false);
	report_json_u64(jw, "hotplug", f->scope_hotplug, false);
	report_json_putc(jw, '}');
}

static void
report_json_process(struct report_json *jw, const struct frame *f,
		    const struct frame_process *p)
{
	report_json_putc(jw, '{');
	report_json_i64(jw, "pid", p->pid, true);
	report_json_key(jw, "comm", false);
	report_json_strn(jw, p->comm, sizeof(p->comm));
	report_json_str(jw, "cgroup", p->cgroup, false);
	report_json_u64(jw, "samples", p->samples, false);
	report_json_u64(jw, "loads", p->loads, false);
	report_json_u64(jw, "stores", p->stores, false);
	report_json_u64(jw, "other", p->other, false);
	report_json_u64(jw, "local", p->local, false);
	report_json_u64(jw, "remote", p->remote, false);
	report_json_key(jw, "share", false);
	report_json_fixed(jw, p->share, 4);
	report_json_key(jw, "nodes", false);
	report_json_putc(jw, '[');
	for (size_t j = 0; j < f->n_nodes; j++) {
		char num[24];

		snprintf(num, sizeof(num), "%s%" PRIu64, j ? "," : "",
			 p->nodes ? p->nodes[j] : 0);
		report_json_puts(jw, num);
	}
	report_json_putc(jw, ']');
	report_json_u64(jw, "threads", p->threads, false);
	report_json_bool(jw, "alive", p->alive);
	report_json_u64(jw, "total", p->total, false);
	report_json_putc(jw, '}');
}

/* "processes": every row, then what no row holds and the unnamed. */
void
report_json_processes(struct report_json *jw, const struct frame *f)
{
	report_json_key(jw, "processes", false);
	report_json_putc(jw, '[');
	for (size_t i = 0; i < f->n_processes; i++) {
		if (i)
			report_json_putc(jw, ',');
		report_json_process(jw, f, &f->processes[i]);
	}
	report_json_putc(jw, ']');
	report_json_u64(jw, "processes_untracked", f->processes_untracked,
			false);
	report_json_u64(jw, "processes_unknown", f->processes_unknown, false);
}
