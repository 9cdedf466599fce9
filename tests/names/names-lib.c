/*
 * Shared library of the names test.  names_lib_array is exported (so even
 * a stripped copy of this library names it through .dynsym) and only
 * reached through names_lib_touch: an executable referring to it directly
 * would get a copy of it in its own .bss (copy relocation).
 */
#include "config.h"

#include <sys/mman.h>

#include "names-lib.h"

/* Initialised: lives in .data, a file-backed private mapping. */
__attribute__((aligned(4096), visibility("default")))
char names_lib_array[NAMES_LIB_ARRAY_BYTES] = { 1 };

__attribute__((noinline, visibility("default"))) void *
names_lib_touch(size_t off)
{
	char *p = names_lib_array + off;

	/* A fresh fault each time, whatever happened to the page before. */
	for (int i = 0; i < NAMES_LIB_REPEAT; i++) {
		madvise(p, 4096, MADV_DONTNEED);
		*(volatile char *)p = 2;
	}
	return p;
}
