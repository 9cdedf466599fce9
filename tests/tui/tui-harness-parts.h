/*
 * The TUI harness's synthetic frame parts (tests/tui/tui-harness.c): the
 * per-CPU counts, the node matrix and the thread rows, each consistent
 * with the frame's totals and nodes.
 */
#ifndef MEMTOP_TUI_HARNESS_PARTS_H
#define MEMTOP_TUI_HARNESS_PARTS_H

#include <stddef.h>

struct frame;

#define HARNESS_NODES 2
#define HARNESS_THREADS 3
#define HARNESS_PID 4242

/* calloc that aborts on failure (zero counts allocate one byte). */
void *harness_xcalloc(size_t n, size_t size);
/* n_cpus CPUs, the first half on node 0; adds to nodes' cpu_samples. */
void harness_cpus(unsigned n_cpus, struct frame *f);
void harness_matrix(struct frame *f);
void harness_threads(struct frame *f);

#endif
