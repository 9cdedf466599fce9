/*
 * Inside the report room: the JSON writer's state and the helpers that
 * report_json.c and report_json_procs.c share.  UI thread.
 */
#ifndef MEMTOP_REPORT_JSON_INT_H
#define MEMTOP_REPORT_JSON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct frame;

/* The first failing stdio call's errno sticks in err; later writes still
 * happen (and fail quietly) so the callers stay simple. */
struct report_json {
	FILE *out;
	int err;
};

void report_json_puts(struct report_json *jw, const char *s);
void report_json_putc(struct report_json *jw, char c);
/* `"key":` preceded by a comma unless it opens an object. */
void report_json_key(struct report_json *jw, const char *key, bool first);
void report_json_u64(struct report_json *jw, const char *key, uint64_t v,
		     bool first);
void report_json_i64(struct report_json *jw, const char *key, int64_t v,
		     bool first);
void report_json_bool(struct report_json *jw, const char *key, bool v);
/* Fixed-point with `decimals` digits, whatever LC_NUMERIC says. */
void report_json_fixed(struct report_json *jw, double v, unsigned decimals);
/* A JSON string from the first n bytes of s (stopping at a NUL). */
void report_json_strn(struct report_json *jw, const char *s, size_t n);
/* A string, or null for NULL. */
void report_json_str(struct report_json *jw, const char *key, const char *s,
		     bool first);

/* report_json_procs.c: "scope" (whole-machine views only) and the
 * process rows. */
void report_json_scope(struct report_json *jw, const struct frame *f);
void report_json_processes(struct report_json *jw, const struct frame *f);
/* report_json_objects.c: a page's "object", the frame's "objects". */
void report_json_page_object(struct report_json *jw,
			     const struct frame_page *p);
void report_json_objects(struct report_json *jw, const struct frame *f);
/* report_json_damon.c: a -e damon entry's "damon" (nothing otherwise). */
void report_json_page_damon(struct report_json *jw,
			    const struct frame_page *p);

#endif
