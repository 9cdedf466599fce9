/*
 * The JSON of objects (issue 18): a page's "object" and the frame's
 * "objects" rows with their sums.  UI thread.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "frame.h"
#include "report_json_int.h"

static void
report_json_callers(struct report_json *jw, char *const *callers)
{
	bool any = false;

	report_json_key(jw, "callers", false);
	report_json_putc(jw, '[');
	for (size_t k = 0; k < FRAME_OBJ_CALLERS && callers[k]; k++) {
		if (any)
			report_json_putc(jw, ',');
		report_json_strn(jw, callers[k], SIZE_MAX);
		any = true;
	}
	report_json_putc(jw, ']');
}

static void
report_json_null(struct report_json *jw, const char *key)
{
	report_json_key(jw, key, false);
	report_json_puts(jw, "null");
}

/* "key":[tid,...] */
static void
report_json_tids(struct report_json *jw, const char *key, const int32_t *v,
		 size_t n)
{
	report_json_key(jw, key, false);
	report_json_putc(jw, '[');
	for (size_t k = 0; k < n; k++)
		if (fprintf(jw->out, "%s%" PRId32, k ? "," : "", v[k]) < 0 &&
		    !jw->err)
			jw->err = 1;
	report_json_putc(jw, ']');
}

void
report_json_page_object(struct report_json *jw, const struct frame_page *p)
{
	const struct frame_object *o = p->object;

	report_json_key(jw, "object", false);
	if (!o) {
		report_json_puts(jw, "null");
		return;
	}
	report_json_putc(jw, '{');
	report_json_str(jw, "site", o->site, true);
	report_json_callers(jw, o->callers);
	report_json_u64(jw, "size", o->size, false);
	report_json_key(jw, "base", false);
	if (fprintf(jw->out, "\"0x%" PRIx64 "\"", o->base) < 0 && !jw->err)
		jw->err = 1;
	report_json_i64(jw, "tid", o->tid, false);
	report_json_key(jw, "age", false);
	report_json_fixed(jw, o->age, 3);
	report_json_u64(jw, "requested", o->requested, false);
	if (o->first_touch)
		report_json_i64(jw, "first_touch", o->first_touch, false);
	else
		report_json_null(jw, "first_touch");
	report_json_putc(jw, '}');
}

static void
report_json_objsite(struct report_json *jw, const struct frame *f,
		    const struct frame_objsite *s)
{
	report_json_putc(jw, '{');
	report_json_str(jw, "site", s->site, true);
	report_json_callers(jw, s->callers);
	report_json_u64(jw, "objects", s->objects, false);
	report_json_u64(jw, "bytes", s->bytes, false);
	report_json_u64(jw, "samples", s->samples, false);
	report_json_u64(jw, "loads", s->loads, false);
	report_json_u64(jw, "stores", s->stores, false);
	report_json_u64(jw, "local", s->local, false);
	report_json_u64(jw, "remote", s->remote, false);
	report_json_key(jw, "local_pct", false);
	if (s->local + s->remote)
		report_json_fixed(jw, 100.0 * (double)s->local /
				  (double)(s->local + s->remote), 1);
	else
		report_json_puts(jw, "null");
	report_json_key(jw, "nodes", false);
	report_json_putc(jw, '[');
	for (size_t j = 0; j < f->n_nodes; j++) {
		if (j)
			report_json_putc(jw, ',');
		if (fprintf(jw->out, "%" PRIu64, s->nodes ? s->nodes[j] : 0) <
		    0 && !jw->err)
			jw->err = 1;
	}
	report_json_putc(jw, ']');
	report_json_tids(jw, "tids", s->tids, s->n_tids);
	report_json_u64(jw, "requested", s->requested, false);
	report_json_tids(jw, "first_touch", s->touch_tids, s->n_touch_tids);
	report_json_putc(jw, '}');
}

void
report_json_objects(struct report_json *jw, const struct frame *f)
{
	report_json_bool(jw, "objects_on", f->objects_on);
	report_json_key(jw, "objects", false);
	report_json_putc(jw, '[');
	for (size_t i = 0; i < f->n_objects; i++) {
		if (i)
			report_json_putc(jw, ',');
		report_json_objsite(jw, f, &f->objects[i]);
	}
	report_json_putc(jw, ']');
	report_json_u64(jw, "objects_samples", f->objects_samples, false);
	report_json_u64(jw, "objects_none", f->objects_none, false);
	report_json_u64(jw, "objects_more", f->objects_more, false);
	report_json_u64(jw, "objects_live", f->objects_live, false);
	report_json_u64(jw, "objects_untracked", f->objects_untracked, false);
	report_json_u64(jw, "objects_lost", f->objects_lost, false);
}
