/* See textbuf.h. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "textbuf.h"

void
textbuf_vappendf(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t used = strnlen(buf, size);

	if (used + 1 >= size)
		return;
	vsnprintf(buf + used, size - used, fmt, ap);
}

void
textbuf_appendf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	textbuf_vappendf(buf, size, fmt, ap);
	va_end(ap);
}
