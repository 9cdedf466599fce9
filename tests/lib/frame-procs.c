#include "config.h"

/* See frame-procs.h. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame-procs.h"
#include "frame.h"

static void *
frame_procs_alloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		fputs("frame_one_process: out of memory\n", stderr);
		abort();
	}
	return p;
}

void
frame_one_process(struct frame *f, int32_t pid, const char *comm,
		  const char *cgroup)
{
	struct frame_process *p;

	if (f->totals.samples == 0)
		return;
	f->n_processes = 1;
	f->processes = frame_procs_alloc(1, sizeof(*f->processes));
	f->process_nodes = frame_procs_alloc(f->n_nodes,
					     sizeof(*f->process_nodes));
	p = &f->processes[0];
	p->pid = pid;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->cgroup = cgroup ? strdup(cgroup) : NULL;
	p->samples = f->totals.samples;
	p->loads = f->totals.loads;
	p->stores = f->totals.stores;
	p->other = f->totals.other;
	p->total = f->cumulative.samples;
	p->share = 1.0;
	p->nodes = f->process_nodes;
	for (size_t i = 0; i < f->n_nodes; i++) {
		p->nodes[i] = f->nodes[i].mem_samples;
		p->local += f->nodes[i].local;
		p->remote += f->nodes[i].remote;
	}
	for (size_t i = 0; i < f->n_threads; i++)
		p->threads += f->threads[i].pid == pid;
	p->alive = true;
}
