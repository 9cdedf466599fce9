/*
 * Allocation wrappers for the UI thread only.  Out of memory there has no
 * sensible recovery, so they restore the terminal, print one line and
 * abort.  The collector and core never use them: they return -ENOMEM.
 */
#ifndef MEMTOP_XALLOC_H
#define MEMTOP_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xreallocarray(void *ptr, size_t nmemb, size_t size);
char *xstrdup(const char *s);

#endif
