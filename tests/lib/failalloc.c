/* See failalloc.h. */
#include "config.h"

#include <errno.h>
#include <stddef.h>

#include "failalloc.h"

_Atomic bool failalloc_on;
_Atomic unsigned long failalloc_refused;

void *__real_malloc(size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_calloc(size_t k, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_calloc(size_t k, size_t n);

static bool
failalloc_now(void)
{
	if (!failalloc_on)
		return false;
	failalloc_refused++;
	errno = ENOMEM;
	return true;
}

void *
__wrap_malloc(size_t n)
{
	return failalloc_now() ? NULL : __real_malloc(n);
}

void *
__wrap_realloc(void *p, size_t n)
{
	return failalloc_now() ? NULL : __real_realloc(p, n);
}

void *
__wrap_calloc(size_t k, size_t n)
{
	return failalloc_now() ? NULL : __real_calloc(k, n);
}
