/* Batch writers: one frame to a FILE.  UI thread. */
#ifndef MEMTOP_REPORT_H
#define MEMTOP_REPORT_H

#include <stdio.h>

struct frame;

/* JSON Lines: exactly one line holding the fields of man/memtop.1, JSON
 * FIELDS, in that order.
 * 0 or -errno on a write error. */
int report_json_write(FILE *out, const struct frame *f);
/* Human-readable text block for -b without --json; `top` = rows shown. */
int report_text_write(FILE *out, const struct frame *f, unsigned top);

#endif
