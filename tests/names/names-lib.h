/* The shared library of the names test: one exported, page-aligned data
 * object and the function that touches it. */
#ifndef MEMTOP_NAMES_LIB_H
#define MEMTOP_NAMES_LIB_H

#include <stddef.h>

#define NAMES_LIB_ARRAY_BYTES (4 * 4096)
/* Faults per touch: enough for the code view's top 20 at exit, when the
 * dynamic loader's and libc's one-off faults add up. */
#define NAMES_LIB_REPEAT 8

/* Faults the page at offset off of names_lib_array NAMES_LIB_REPEAT
 * times; returns its address. */
void *names_lib_touch(size_t off);

#endif
