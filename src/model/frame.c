/* Frame lifecycle and invariant checks.  Any thread. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "frame.h"

struct frame *
frame_new(void)
{
	struct frame *f = calloc(1, sizeof(*f));

	if (f) {
		f->exit_status = -1;
		f->imbalance = -1.0;	/* unknown until built */
	}
	return f;
}

void
frame_free(struct frame *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_events; i++)
		free(f->events[i]);
	free(f->events);
	free(f->source_note);
	free(f->targets);
	for (size_t i = 0; i < f->n_pages; i++) {
		free(f->pages[i].region);
		free(f->pages[i].symbol);
		free(f->pages[i].levels);
		for (size_t k = 0; k < f->pages[i].n_sites; k++) {
			free(f->pages[i].sites[k].symbol);
			free(f->pages[i].sites[k].caller_symbol);
		}
		free(f->pages[i].sites);
		free(f->pages[i].lines);
		frame_object_free(f->pages[i].object);
		free(f->pages[i].damon);
	}
	for (size_t i = 0; i < f->n_objects; i++) {
		free(f->objects[i].site);
		for (size_t k = 0; k < FRAME_OBJ_CALLERS; k++)
			free(f->objects[i].callers[k]);
		free(f->objects[i].nodes);
	}
	free(f->objects);
	for (size_t i = 0; i < f->n_code_sites; i++) {
		free(f->code_sites[i].function);
		free(f->code_sites[i].module);
	}
	free(f->code_sites);
	free(f->pages);
	free(f->nodes);
	free(f->matrix);
	free(f->matrix_unknown);
	free(f->cpus);
	free(f->threads);
	for (size_t i = 0; i < f->n_processes; i++)
		free(f->processes[i].cgroup);
	free(f->processes);
	free(f->process_nodes);
	free(f->error);
	free(f->scope);
	free(f->scope_cpus);
	free(f->scope_offline);
	free(f);
}

static int
check_fail(char *buf, size_t buflen, const char *what, uint64_t got,
	   uint64_t want)
{
	if (buf && buflen)
		snprintf(buf, buflen, "%s: %" PRIu64 " != %" PRIu64, what, got,
			 want);
	return -EINVAL;
}

/* The process rows against the totals and, when no process was left
 * out, against the per-node figures. */
static int
frame_check_processes(const struct frame *f, char *buf, size_t buflen)
{
	uint64_t sum = f->processes_untracked, local = 0, remote = 0;
	uint64_t nlocal = 0, nremote = 0;

	for (size_t i = 0; i < f->n_processes; i++) {
		const struct frame_process *p = &f->processes[i];

		if (p->loads + p->stores + p->other != p->samples)
			return check_fail(buf, buflen, "process loads+stores+"
					  "other", p->loads + p->stores +
					  p->other, p->samples);
		sum += p->samples;
		local += p->local;
		remote += p->remote;
	}
	if (sum != f->totals.samples)
		return check_fail(buf, buflen,
				  "sum(processes)+processes_untracked", sum,
				  f->totals.samples);
	if (f->processes_untracked)
		return 0;
	for (size_t j = 0; j < f->n_nodes; j++) {
		sum = 0;
		for (size_t i = 0; i < f->n_processes; i++)
			sum += f->processes[i].nodes ?
			       f->processes[i].nodes[j] : 0;
		if (sum != f->nodes[j].mem_samples)
			return check_fail(buf, buflen,
					  "sum(processes.nodes[j])", sum,
					  f->nodes[j].mem_samples);
		nlocal += f->nodes[j].local;
		nremote += f->nodes[j].remote;
	}
	if (local != nlocal)
		return check_fail(buf, buflen, "sum(processes.local)", local,
				  nlocal);
	if (remote != nremote)
		return check_fail(buf, buflen, "sum(processes.remote)", remote,
				  nremote);
	return 0;
}

void
frame_object_free(struct frame_object *o)
{
	if (!o)
		return;
	free(o->site);
	for (size_t k = 0; k < FRAME_OBJ_CALLERS; k++)
		free(o->callers[k]);
	free(o);
}

size_t
frame_object_label(const struct frame_object *o, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)o->size;
	unsigned u = 0;

	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	if (v == (double)(uint64_t)v)
		return (size_t)snprintf(buf, len, "%s (%.0f %s)",
					o->site ? o->site : "?", v, unit[u]);
	return (size_t)snprintf(buf, len, "%s (%.1f %s)",
				o->site ? o->site : "?", v, unit[u]);
}

size_t
frame_names_counts(const struct frame *f,
		   struct frame_names_count out[FRAME_NAMES_COUNTS])
{
	const struct frame_names_count all[FRAME_NAMES_COUNTS] = {
		{ "maps failed", f->names_maps_failed },
		{ "maps skipped", f->names_maps_skipped },
		{ "mismatched", f->names_mismatched },
		{ "helper failed", f->names_helper_failed },
		{ "unwind fallbacks", f->names_unwind_fallbacks },
		{ "pins dropped", f->names_pins_dropped },
		{ "stale mmaps", f->names_stale_mmaps },
	};
	size_t n = 0;

	for (size_t i = 0; i < FRAME_NAMES_COUNTS; i++)
		if (all[i].n)
			out[n++] = all[i];
	return n;
}

size_t
frame_names_facts(const struct frame *f, char *buf, size_t len)
{
	struct frame_names_count c[FRAME_NAMES_COUNTS];
	size_t n = frame_names_counts(f, c), used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		used += (size_t)snprintf(buf + (used < len ? used : len),
					 used < len ? len - used : 0,
					 "%s%s %" PRIu64, i ? ", " : "names: ",
					 c[i].what, c[i].n);
	return used;
}

/* Samples with an object + without == attributed; the sites' add up. */
static int
frame_check_objects(const struct frame *f, char *buf, size_t buflen)
{
	uint64_t sum = f->objects_more;

	if (!f->objects_on)
		return 0;
	if (f->objects_samples + f->objects_none != f->totals.samples)
		return check_fail(buf, buflen, "objects_samples+objects_none",
				  f->objects_samples + f->objects_none,
				  f->totals.samples);
	for (size_t i = 0; i < f->n_objects; i++)
		sum += f->objects[i].samples;
	if (sum != f->objects_samples)
		return check_fail(buf, buflen, "sum(objects)+objects_more",
				  sum, f->objects_samples);
	return 0;
}

int
frame_check(const struct frame *f, char *buf, size_t buflen)
{
	const struct counts *t = &f->totals;
	uint64_t sum;

	sum = t->loads + t->stores + t->other;
	if (sum != t->samples)
		return check_fail(buf, buflen, "loads+stores+other", sum,
				  t->samples);
	sum = f->cumulative.loads + f->cumulative.stores + f->cumulative.other;
	if (sum != f->cumulative.samples)
		return check_fail(buf, buflen,
				  "cumulative loads+stores+other", sum,
				  f->cumulative.samples);

	sum = f->cpu_unknown;
	for (size_t i = 0; i < f->n_cpus; i++)
		sum += f->cpus[i].samples;
	if (sum != t->samples)
		return check_fail(buf, buflen, "sum(cpus)+cpu_unknown", sum,
				  t->samples);

	sum = 0;
	for (size_t i = 0; i < f->n_threads; i++)
		sum += f->threads[i].samples;
	if (sum != t->samples)
		return check_fail(buf, buflen, "sum(threads)", sum, t->samples);

	sum = f->cpu_unknown;
	for (size_t i = 0; i < f->n_nodes * f->n_nodes; i++)
		sum += f->matrix[i];
	for (size_t i = 0; i < f->n_nodes; i++)
		sum += f->matrix_unknown[i];
	if (sum != t->samples)
		return check_fail(buf, buflen,
				  "sum(matrix)+sum(matrix_unknown)+cpu_unknown",
				  sum, t->samples);

	sum = f->mem_unknown;
	for (size_t i = 0; i < f->n_nodes; i++)
		sum += f->nodes[i].mem_samples;
	if (sum != t->samples)
		return check_fail(buf, buflen, "sum(nodes.mem)+mem_unknown",
				  sum, t->samples);
	if (frame_check_objects(f, buf, buflen) < 0)
		return -EINVAL;
	return frame_check_processes(f, buf, buflen);
}
