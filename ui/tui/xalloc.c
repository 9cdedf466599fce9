/*
 * UI thread only.  endwin() is safe before curses starts and after it
 * ends (it returns ERR then), so every failure path may call it.
 */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static void __attribute__((noreturn))
xalloc_fail(void)
{
	endwin();
	fputs("memtop: out of memory\n", stderr);
	abort();
}

void *
xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		xalloc_fail();
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p;

	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	p = calloc(nmemb, size);
	if (!p)
		xalloc_fail();
	return p;
}

void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void *p;

	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	p = reallocarray(ptr, nmemb, size);
	if (!p)
		xalloc_fail();
	return p;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		xalloc_fail();
	return p;
}
