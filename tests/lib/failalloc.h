/*
 * Allocations that fail on demand, for tests of what code does when memory
 * runs out.  A test linking failalloc.c is linked with
 * -Wl,--wrap=malloc,--wrap=realloc,--wrap=calloc (tests/unit/meson.build,
 * FAILALLOC_LINK): every malloc, realloc and calloc of the test and of the
 * rooms' static libraries goes through the wrappers (those made inside the
 * C library, strdup's, do not).  While failalloc_on is set each one fails
 * with ENOMEM and counts in failalloc_refused.  Both are atomic: the
 * drain threads of tests/unit/collector/test-dpool-drops.c allocate
 * while the test's thread does.
 */
#ifndef MEMTOP_FAILALLOC_H
#define MEMTOP_FAILALLOC_H

#include <stdbool.h>

extern _Atomic bool failalloc_on;
extern _Atomic unsigned long failalloc_refused;

#endif
