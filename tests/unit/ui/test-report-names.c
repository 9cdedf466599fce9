/*
 * The JSON writer's naming fields: per-page sites (ip as hex, symbol
 * escaped or null, caller as hex or null, called_from), sites_other, lines (only when the page has them), and
 * the frame's granularity and code view; the frame owns and frees them.
 * The names counts in JSON, and in the text header only when not zero.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "report.h"
#include "testlib.h"

static char *
rtest_render_as(const struct frame *f, bool json)
{
	/* Static: open_memstream keeps their addresses until fclose. */
	static char *buf;
	static size_t len;
	FILE *out;

	buf = NULL;
	len = 0;
	out = open_memstream(&buf, &len);

	if (!out)
		test_skip("open_memstream failed");
	check_eq_i64(json ? report_json_write(out, f) :
		     report_text_write(out, f, 10), 0);
	fclose(out);
	return buf;
}

static char *
rtest_render(const struct frame *f)
{
	return rtest_render_as(f, true);
}

static bool
rtest_has(const char *s, const char *needle)
{
	if (s && strstr(s, needle))
		return true;
	test_fail_at(__FILE__, __LINE__, "missing %s in %s", needle,
		     s ? s : "(null)");
	return false;
}

/* The text header's names line: the counts that are not zero. */
static void
rtest_text_names(struct frame *f)
{
	char *s = rtest_render_as(f, false);

	rtest_has(s, "\nnames: maps failed 5, maps skipped 7, mismatched 2, "
		  "helper failed 1, unwind fallbacks 8, pins dropped 9, "
		  "stale mmaps 11\n");
	free(s);
	f->names_maps_failed = f->names_mismatched = 0;
	f->names_helper_failed = f->names_unwind_fallbacks = 0;
	f->names_pins_dropped = f->names_stale_mmaps = 0;
	s = rtest_render_as(f, false);
	rtest_has(s, "\nnames: maps skipped 7\n");
	free(s);
	f->names_maps_skipped = 0;
	s = rtest_render_as(f, false);
	check(s && !strstr(s, "names:"));
	free(s);
}

int
main(void)
{
	struct frame *f = frame_new();
	struct frame_page *p;
	char *s;

	f->n_pages = 2;
	f->pages = calloc(2, sizeof(*f->pages));
	p = &f->pages[0];
	p->pid = 7;
	p->addr = 0x7f0000001000;
	p->size = 4096;
	p->total = 9;
	p->region = strdup("/opt/my \"app\"+0x3000");
	p->symbol = strdup("table+0x1000");
	p->n_sites = 2;
	p->sites = calloc(2, sizeof(*p->sites));
	p->sites[0].ip = 0x401136;
	p->sites[0].symbol = strdup("fill\n+0x6");
	p->sites[0].samples = 5;
	p->sites[0].caller = 0x401999;
	p->sites[0].caller_symbol = strdup("main+0x19");
	p->sites[1].ip = 0x7f00dead0000;
	p->sites[1].samples = 3;
	p->sites_other = 1;
	p->lines = calloc(FRAME_LINES, sizeof(*p->lines));
	p->lines[0] = 4;
	p->lines[63] = 5;
	f->pages[1].addr = 0x2000;
	f->pages[1].size = 4096;
	f->granularity = 4096;
	f->n_code_sites = 2;
	f->code_sites = calloc(2, sizeof(*f->code_sites));
	f->code_sites[0].pid = 7;
	f->code_sites[0].function = strdup("fill");
	f->code_sites[0].module = strdup("/opt/app");
	f->code_sites[0].samples = 2;
	f->code_sites[0].total = 5;
	f->code_sites[1].pid = 7;
	f->code_sites[1].module = strdup("[anon]");
	f->code_unknown = 3;
	f->code_untracked = 4;
	f->sites_evicted = 6;
	f->levels_evicted = 10;
	f->names_mismatched = 2;
	f->names_maps_failed = 5;
	f->names_helper_failed = 1;
	f->names_maps_skipped = 7;
	f->names_unwind_fallbacks = 8;
	f->names_pins_dropped = 9;
	f->names_stale_mmaps = 11;

	s = rtest_render(f);
	rtest_has(s, "\"region\":\"/opt/my \\\"app\\\"+0x3000\","
		  "\"symbol\":\"table+0x1000\"");
	rtest_has(s, "\"sites\":[{\"ip\":\"0x401136\",\"symbol\":"
		  "\"fill\\u000a+0x6\",\"samples\":5,\"caller\":\"0x401999\","
		  "\"called_from\":\"main+0x19\"},{\"ip\":\"0x7f00dead0000\","
		  "\"symbol\":null,\"samples\":3,\"caller\":null,"
		  "\"called_from\":null}],\"sites_other\":1,\"lines\":[4,0,0,");
	rtest_has(s, ",0,5],\"object\":null}");
	/* The second page has neither sites nor lines. */
	rtest_has(s, "\"sites\":[],\"sites_other\":0,\"object\":null}]");
	check(s && strstr(strstr(s, "\"lines\"") + 1, "\"lines\"") == NULL);
	rtest_has(s, "\"granularity\":4096,\"code_sites\":[{\"pid\":7,"
		  "\"function\":\"fill\",\"module\":\"/opt/app\",\"samples\":2,"
		  "\"total\":5},{\"pid\":7,\"function\":null,\"module\":"
		  "\"[anon]\",\"samples\":0,\"total\":0}],\"code_unknown\":3,"
		  "\"code_untracked\":4,\"sites_evicted\":6,"
		  "\"levels_evicted\":10,"
		  "\"names\":{\"mismatched\":2,\"maps_failed\":5,"
		  "\"helper_failed\":1,\"maps_skipped\":7,"
		  "\"unwind_fallbacks\":8,\"pins_dropped\":9,"
		  "\"stale_mmaps\":11}");
	check(s && s[strlen(s) - 1] == '\n' && strchr(s, '\n') ==
	      s + strlen(s) - 1);
	free(s);
	rtest_text_names(f);
	frame_free(f);
	return test_result();
}
