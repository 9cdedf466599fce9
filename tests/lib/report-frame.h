/*
 * Frames built by hand for the batch writers' tests (test-report-json,
 * test-report-batch), rendered to strings.
 */
#ifndef MEMTOP_REPORT_FRAME_H
#define MEMTOP_REPORT_FRAME_H

#include <stdbool.h>
#include <stddef.h>

#include "frame.h"

/* strdup, NULL for NULL. */
char *dup_str(const char *s);
/* One target, n_pages pages, one node, two CPUs, one thread: the frame
 * whose exact JSON text is spelled out in test-report-json's
 * test_exact(). */
struct frame *make_frame(size_t n_pages);
/* The frame as JSON, or as text with top rows, in a heap string; NULL
 * (and a failed check) if the writer failed. */
char *render(const struct frame *f, bool json, unsigned top);
/* Whether needle is in hay; a failure, naming both, if not. */
bool contains(const char *hay, const char *needle);

#endif
