/*
 * JSON Lines writer, continued: the scope of a whole-machine view and the
 * process rows (man/memtop.1, JSON FIELDS).  UI thread.
 */
#include "config.h"

#include <inttypes.h>

#include "frame.h"
#include "report_json_int.h"

/* "scope": {name, cpus, offline, hotplug}, only for -a and -G. */
void
report_json_scope(struct report_json *jw, const struct frame *f)
{
	if (!f->scope)
		return;
	report_json_key(jw, "scope", false);
	report_json_putc(jw, '{');
	report_json_str(jw, "name", f->scope, true);
	report_json_str(jw, "cpus", f->scope_cpus, false);
	report_json_str(jw, "offline", f->scope_offline, false);
	report_json_u64(jw, "hotplug", f->scope_hotplug, false);
	report_json_putc(jw, '}');
}
