#include "config.h"

/* See report-frame.h. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame-procs.h"
#include "report-frame.h"
#include "report.h"
#include "testlib.h"

char *
dup_str(const char *s)
{
	return s ? strdup(s) : NULL;
}

struct frame *
make_frame(size_t n_pages)
{
	struct frame *f = frame_new();

	f->seq = 3;
	f->time = 3.0014;
	f->interval = 1.0;
	strcpy(f->source, "faults");
	f->n_events = 1;
	f->events = calloc(1, sizeof(char *));
	f->events[0] = dup_str("page-faults");
	f->period = 1;
	f->has_kinds = true;
	f->sort = SORT_SAMPLES;
	f->tracked_pages = 7;

	f->n_targets = 1;
	f->targets = calloc(1, sizeof(*f->targets));
	f->targets[0] = (struct frame_target){ .pid = 4242, .threads = 4,
					       .alive = true };
	strcpy(f->targets[0].comm, "bench");

	f->totals = (struct counts){ .samples = 3, .loads = 1, .stores = 1,
				     .other = 1, .lost = 2,
				     .unattributed = 5 };
	f->cumulative = (struct counts){ .samples = 10, .loads = 4,
					 .stores = 5, .other = 1, .lost = 2,
					 .throttled = 1, .unattributed = 6,
					 .untracked = 8 };

	f->n_pages = n_pages;
	f->pages = calloc(n_pages ? n_pages : 1, sizeof(*f->pages));
	for (size_t i = 0; i < n_pages; i++) {
		struct frame_page *p = &f->pages[i];

		p->pid = 4242;
		p->addr = 0x7f3a1c000000 + 4096 * i;
		p->size = 4096;
		p->node = 0;
		p->latency = -1;
		p->region = dup_str("[heap]");
	}
	if (n_pages) {
		struct frame_page *p = &f->pages[0];

		p->samples = 3;
		p->loads = 1;
		p->stores = 1;
		p->other = 1;
		p->total = 10;
		p->share = 1.0;
		p->local = 3;
	}

	f->n_nodes = 1;
	f->nodes = calloc(1, sizeof(*f->nodes));
	f->nodes[0] = (struct frame_node){ .node = 0, .cpu_samples = 3,
					   .mem_samples = 3, .local = 3,
					   .mem_total_kb = 1000,
					   .mem_free_kb = 500 };
	f->matrix = calloc(1, sizeof(uint64_t));
	f->matrix[0] = 3;
	f->matrix_unknown = calloc(1, sizeof(uint64_t));

	f->n_cpus = 2;
	f->cpus = calloc(2, sizeof(*f->cpus));
	f->cpus[0] = (struct frame_cpu){ .cpu = 0, .node = 0, .samples = 1 };
	f->cpus[1] = (struct frame_cpu){ .cpu = 1, .node = 0, .samples = 2 };

	f->n_threads = 1;
	f->threads = calloc(1, sizeof(*f->threads));
	f->threads[0] = (struct frame_thread){ .pid = 4242, .tid = 4243,
					       .samples = 3 };

	frame_one_process(f, 4242, "bench", "/user.slice");
	return f;
}

char *
render(const struct frame *f, bool json, unsigned top)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int ret;

	if (!m)
		return NULL;
	ret = json ? report_json_write(m, f) : report_text_write(m, f, top);
	fclose(m);
	check_eq_i64(ret, 0);
	if (ret) {
		free(buf);
		return NULL;
	}
	return buf;
}

bool
contains(const char *hay, const char *needle)
{
	if (hay && strstr(hay, needle))
		return true;
	test_fail_at(__FILE__, __LINE__, "missing %s in %s", needle,
		     hay ? hay : "(null)");
	return false;
}
