/*
 * Text built in a fixed buffer: a header note or a reason grown a clause
 * at a time.  The text is cut, never overrun, when the buffer is full.
 */
#ifndef MEMTOP_TEXTBUF_H
#define MEMTOP_TEXTBUF_H

#include <stdarg.h>
#include <stddef.h>

/* Appends printf(fmt, ...) to the NUL-terminated text in buf[size]. */
void textbuf_appendf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void textbuf_vappendf(char *buf, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
