/*
 * The JSON of a -e damon entry (issue 19): a page's "damon", the region
 * it stands for (man/memtop.1, JSON FIELDS).  UI thread.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "frame.h"
#include "report_json_int.h"

void
report_json_page_damon(struct report_json *jw, const struct frame_page *p)
{
	const struct frame_damon *d = p->damon;
	bool any = false;

	if (!d)
		return;
	report_json_key(jw, "damon", false);
	report_json_putc(jw, '{');
	report_json_u64(jw, "accesses", d->accesses, true);
	report_json_u64(jw, "checks", d->checks, false);
	report_json_u64(jw, "age", d->age, false);
	report_json_key(jw, "age_s", false);
	report_json_fixed(jw, (double)d->age * (double)d->aggr_us / 1e6, 3);
	report_json_key(jw, "nodes", false);
	report_json_putc(jw, '[');
	for (unsigned n = 0; n < FRAME_DAMON_NODES; n++) {
		if (!(d->nodes >> n & 1))
			continue;
		if (any)
			report_json_putc(jw, ',');
		if (fprintf(jw->out, "%u", n) < 0 && !jw->err)
			jw->err = 1;
		any = true;
	}
	report_json_putc(jw, ']');
	report_json_u64(jw, "probed", d->probed, false);
	report_json_u64(jw, "unknown", d->unknown, false);
	report_json_putc(jw, '}');
}
