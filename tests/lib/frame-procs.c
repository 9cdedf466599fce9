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

void
frame_one_objsite(struct frame *f, int32_t tid, size_t node)
{
	struct frame_objsite *o;

	f->objects_on = true;
	f->objects = calloc(1, sizeof(*f->objects));
	if (!f->objects)
		abort();
	f->n_objects = 1;
	o = &f->objects[0];
	o->site = strdup("make_table+0x1c");
	o->callers[0] = strdup("main+0x2a");
	o->nodes = calloc(f->n_nodes ? f->n_nodes : 1, sizeof(*o->nodes));
	if (!o->site || !o->callers[0] || !o->nodes)
		abort();
	o->objects = 1;
	o->bytes = 4u << 20;
	o->samples = f->totals.samples / 2;
	o->loads = o->samples;
	o->remote = o->samples;
	if (node < f->n_nodes)
		o->nodes[node] = o->samples;
	o->tids[0] = tid;
	o->n_tids = 1;
	o->requested = o->bytes / 2;	/* told apart from bytes */
	o->touch_tids[0] = tid + 1;
	o->n_touch_tids = 1;
	f->objects_samples = o->samples;
	f->objects_none = f->totals.samples - o->samples;
	f->objects_live = 1;
}

void
frame_page_object(struct frame_page *p, const char *site, uint64_t size)
{
	struct frame_object *o = calloc(1, sizeof(*o));

	if (!o || !(o->site = strdup(site)) ||
	    !(o->callers[0] = strdup("main+0x2a")))
		abort();
	o->size = size;
	o->base = p->addr;
	o->tid = p->pid;
	o->age = 1.5;
	p->object = o;
}
