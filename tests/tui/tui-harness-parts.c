/* See tui-harness-parts.h. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "frame.h"
#include "tui-harness-parts.h"

void *
harness_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p) {
		fputs("tui-harness: out of memory\n", stderr);
		abort();
	}
	return p;
}

/* CPU c's weight; a few CPUs stay idle so the grid shows empty cells. */
static uint64_t
harness_cpu_weight(unsigned c)
{
	return c % 13 == 5 ? 0 : 1 + (c * 7) % 11;
}

void
harness_cpus(unsigned n_cpus, struct frame *f)
{
	uint64_t wsum = 0, given = 0, s = f->totals.samples;

	f->n_cpus = n_cpus;
	f->cpus = harness_xcalloc(f->n_cpus, sizeof(*f->cpus));
	for (unsigned c = 0; c < n_cpus; c++)
		wsum += harness_cpu_weight(c);
	for (unsigned c = 0; c < n_cpus; c++) {
		struct frame_cpu *cpu = &f->cpus[c];

		cpu->cpu = (int32_t)c;
		cpu->node = c < (n_cpus + 1) / 2 ? 0 : 1;
		cpu->samples = s * harness_cpu_weight(c) / wsum;
		given += cpu->samples;
	}
	/* The rounding remainder goes one sample at a time to busy CPUs. */
	for (unsigned c = 0; given < s; c = (c + 1) % n_cpus) {
		if (harness_cpu_weight(c)) {
			f->cpus[c].samples++;
			given++;
		}
	}
	for (unsigned c = 0; c < n_cpus; c++)
		f->nodes[f->cpus[c].node].cpu_samples += f->cpus[c].samples;
}

/* matrix[i][j] ~ cpu_i * mem_j / samples; each row's rounding goes to
 * its diagonal so that row sums equal the node's CPU side exactly. */
void
harness_matrix(struct frame *f)
{
	uint64_t s = f->totals.samples;

	for (size_t i = 0; i < HARNESS_NODES; i++) {
		struct frame_node *n = &f->nodes[i];
		uint64_t row = 0;

		for (size_t j = 0; j < HARNESS_NODES; j++) {
			uint64_t v = s ? n->cpu_samples *
					 f->nodes[j].mem_samples / s : 0;

			f->matrix[i * HARNESS_NODES + j] = v;
			row += v;
		}
		f->matrix[i * HARNESS_NODES + i] += n->cpu_samples - row;
		n->local = f->matrix[i * HARNESS_NODES + i];
		n->remote = n->cpu_samples - n->local;
	}
}

void
harness_threads(struct frame *f)
{
	uint64_t s = f->totals.samples;

	if (s == 0)
		return;
	f->n_threads = HARNESS_THREADS;
	f->threads = harness_xcalloc(f->n_threads, sizeof(*f->threads));
	for (size_t i = 0; i < f->n_threads; i++) {
		f->threads[i].pid = HARNESS_PID;
		f->threads[i].tid = HARNESS_PID + (int32_t)i;
	}
	f->threads[0].samples = s / 2;
	f->threads[1].samples = s / 3;
	f->threads[2].samples = s - s / 2 - s / 3;
}
