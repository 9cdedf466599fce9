/*
 * Batch output: the JSON Lines writer against the contract in
 * man/memtop.1, JSON FIELDS (exact text for a small frame, key order,
 * escapes, nulls, non-finite numbers), every produced line run through a
 * strict JSON syntax checker (jsoncheck.c), and both writers' write
 * errors.  The text writer and batch_run() are in test-report-batch.c.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "datasrc.h"
#include "frame-procs.h"
#include "frame.h"
#include "jsoncheck.h"
#include "report-frame.h"
#include "report.h"
#include "testlib.h"

static char *
render_json_checked(const struct frame *f, struct json_check *jc)
{
	char *s = render(f, true, 0);

	if (s && !check(json_line_valid(s, jc)))
		fprintf(stderr, "invalid JSON near offset %td: %s\n",
			jc->p - s, s);
	return s;
}

/* ---- the checker itself ---- */

/*
 * Every other test trusts json_line_valid(), so it must refuse what RFC
 * 8259 refuses, not only accept what the writer makes.
 */
static void
test_json_checker(void)
{
	static const char *const good[] = {
		"{}\n",
		"{\"a\":[1,-0,0.5,1e3,-2.5E-7,true,false,null,{}],\"b\":\"\"}\n",
		"{ \"s\" : \"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uABCD\" }\n",
		"{\"u\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}\n",
	};
	static const char *const bad[] = {
		"", "\n", "[]\n", "{}", "{}\n\n", "{} \n", "{}\nx",
		"{\"a\":1,}\n", "{\"a\" 1}\n", "{\"a\":}\n", "{a:1}\n",
		"{\"a\":[1,]}\n", "{\"a\":01}\n", "{\"a\":1.}\n",
		"{\"a\":.5}\n", "{\"a\":1e}\n", "{\"a\":+1}\n",
		"{\"a\":NaN}\n", "{\"a\":-Infinity}\n", "{\"a\":tru}\n",
		"{\"a\":\"x\ty\"}\n", "{\"a\":\"\\x\"}\n",
		"{\"a\":\"\\u12g4\"}\n", "{\"a\":\"\\u12\"}\n",
		"{\"a\":\"open}\n", "{\"a\":\"\xc0\xaf\"}\n",
		"{\"a\":\"\xc3\"}\n", "{\"a\":\"\xf5\x80\x80\x80\"}\n",
		"{\"a\":\"\x80\"}\n", "{\"a\":1}{}\n",
		"{\"a\":\"\xe0\x80\xaf\"}\n", "{\"a\":\"\xed\xa0\x80\"}\n",
		"{\"a\":\"\xf0\x80\x80\xaf\"}\n",
		"{\"a\":\"\xf4\x90\x80\x80\"}\n",
	};
	struct json_check jc;
	char deep[160];
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(good); i++)
		if (!check(json_line_valid(good[i], &jc)))
			fprintf(stderr, "refused: %s", good[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (!check(!json_line_valid(bad[i], &jc)))
			fprintf(stderr, "accepted: %s\n", bad[i]);

	/* Outer keys in order, nested ones not. */
	check(json_line_valid("{\"z\":{\"in\":1},\"a\":[{\"x\":2}],\"m\":0}\n",
			      &jc));
	check_eq_u64(jc.n_keys, 3);
	if (jc.n_keys == 3) {
		check_eq_str(jc.keys[0], "z");
		check_eq_str(jc.keys[1], "a");
		check_eq_str(jc.keys[2], "m");
	}

	/* Nesting: 63 arrays inside the object pass, 64 do not. */
	for (int depth = 63; depth <= 64; depth++) {
		n = 0;
		n += (size_t)snprintf(deep + n, sizeof(deep) - n, "{\"d\":");
		for (int k = 0; k < depth; k++)
			deep[n++] = '[';
		for (int k = 0; k < depth; k++)
			deep[n++] = ']';
		snprintf(deep + n, sizeof(deep) - n, "}\n");
		check_eq_i64(json_line_valid(deep, &jc), depth == 63);
	}
}

/* ---- JSON writer ---- */

static void
test_exact(void)
{
	struct frame *f = make_frame(1);
	struct json_check jc;
	char why[128];
	char *s;

	check_eq_i64(frame_check(f, why, sizeof(why)), 0);
	s = render_json_checked(f, &jc);
	check_eq_str(s,
		"{\"memtop\":1,\"seq\":3,\"time\":3.001,\"interval\":1.000,"
		"\"final\":false,\"source\":\"faults\","
		"\"events\":[\"page-faults\"],\"period\":1,"
		"\"targets\":[{\"pid\":4242,\"comm\":\"bench\",\"threads\":4,"
		"\"alive\":true}],"
		"\"totals\":{\"samples\":3,\"loads\":1,\"stores\":1,"
		"\"other\":1,\"lost\":2,\"throttled\":0,\"unattributed\":5,"
		"\"untracked\":0},"
		"\"cumulative\":{\"samples\":10,\"loads\":4,\"stores\":5,"
		"\"other\":1,\"lost\":2,\"throttled\":1,\"unattributed\":6,"
		"\"untracked\":8},"
		"\"pages\":[{\"pid\":4242,\"addr\":\"0x7f3a1c000000\","
		"\"size\":4096,\"samples\":3,\"loads\":1,\"stores\":1,"
		"\"total\":10,\"share\":1.0000,\"node\":0,"
		"\"region\":\"[heap]\",\"symbol\":null,\"other\":1,"
		"\"latency\":null,\"local\":3,\"remote\":0,"
		"\"sites\":[],\"sites_other\":0,\"object\":null}],"
		"\"nodes\":[{\"node\":0,\"cpu_samples\":3,\"mem_samples\":3,"
		"\"local\":3,\"remote\":0,\"mem_total_kb\":1000,"
		"\"mem_free_kb\":500}],"
		"\"cpus\":[{\"cpu\":0,\"node\":0,\"samples\":1},"
		"{\"cpu\":1,\"node\":0,\"samples\":2}],"
		"\"threads\":[{\"pid\":4242,\"tid\":4243,\"samples\":3}],"
		"\"matrix\":[[3]],"
		"\"paused\":false,\"sort\":\"samples\",\"tracked_pages\":7,"
		"\"skipped\":0,\"source_note\":null,\"has_kinds\":true,"
		"\"mem_unknown\":0,\"cpu_unknown\":0,\"matrix_unknown\":[0],"
		"\"imbalance\":null,\"migrations\":{\"moved\":0,\"busy\":0,"
		"\"denied\":0,\"failed\":0,\"skipped\":0},"
		"\"node_resolution\":{\"queried\":0,\"resolved\":0,"
		"\"revalidated\":0,\"changed\":0,\"phys\":0,"
		"\"query_us\":0},\"collector_cpu_us\":0,\"levels\":{},"
		"\"granularity\":0,\"code_sites\":[],\"code_unknown\":0,"
		"\"code_untracked\":0,\"sites_evicted\":0,"
		"\"levels_evicted\":0,"
		"\"names\":{\"mismatched\":0,\"maps_failed\":0,"
		"\"helper_failed\":0,\"maps_skipped\":0,"
		"\"unwind_fallbacks\":0,\"pins_dropped\":0,"
		"\"stale_mmaps\":0},"
		"\"processes\":[{\"pid\":4242,\"comm\":\"bench\","
		"\"cgroup\":\"/user.slice\",\"samples\":3,\"loads\":1,"
		"\"stores\":1,\"other\":1,\"local\":3,\"remote\":0,"
		"\"share\":1.0000,\"nodes\":[3],\"threads\":1,"
		"\"alive\":true,\"total\":10}],\"processes_untracked\":0,"
		"\"processes_unknown\":0,\"objects_on\":false,"
		"\"objects\":[],\"objects_samples\":0,\"objects_none\":0,"
		"\"objects_more\":0,\"objects_live\":0,"
		"\"objects_untracked\":0,\"objects_lost\":0}\n");
	free(s);
	frame_free(f);
}

static void
test_key_order(void)
{
	static const char *const want[] = {
		"memtop", "seq", "time", "interval", "final", "source",
		"events", "period", "targets", "totals", "cumulative",
		"pages", "nodes", "cpus", "threads", "matrix",
		"paused", "sort", "tracked_pages", "skipped", "source_note",
		"has_kinds", "mem_unknown", "cpu_unknown", "matrix_unknown",
		"imbalance", "migrations", "node_resolution",
		"collector_cpu_us", "levels", "granularity", "code_sites",
		"code_unknown", "code_untracked", "sites_evicted",
		"levels_evicted", "names",
		"scope", "processes", "processes_untracked",
		"processes_unknown", "objects_on", "objects",
		"objects_samples", "objects_none", "objects_more",
		"objects_live", "objects_untracked", "objects_lost",
		"exit_status", "error",
	};
	size_t n_want = ARRAY_SIZE(want);
	struct frame *f = make_frame(2);
	struct json_check jc;
	char *s;

	f->final = true;
	f->exit_status = 0;
	f->error = dup_str("collector: boom");
	f->scope = dup_str("cgroup /a");
	f->scope_cpus = dup_str("0-3");
	f->scope_offline = dup_str("");
	f->scope_hotplug = 2;
	s = render_json_checked(f, &jc);
	contains(s, "\"scope\":{\"name\":\"cgroup /a\",\"cpus\":\"0-3\","
		 "\"offline\":\"\",\"hotplug\":2},\"processes\":[{");
	check_eq_u64(jc.n_keys, n_want);
	for (size_t i = 0; i < n_want && i < jc.n_keys; i++)
		check_eq_str(jc.keys[i], want[i]);
	contains(s, "\"final\":true");
	contains(s, "\"exit_status\":0,\"error\":\"collector: boom\"}\n");
	free(s);

	/* exit_status < 0, error and scope NULL leave their keys out */
	free(f->error);
	f->error = NULL;
	f->exit_status = -1;
	free(f->scope);
	f->scope = NULL;
	s = render_json_checked(f, &jc);
	check_eq_u64(jc.n_keys, n_want - 3);
	check(s && !strstr(s, "exit_status") && !strstr(s, "\"error\""));
	free(s);
	frame_free(f);
}

static void
test_escapes(void)
{
	struct frame *f = make_frame(1);
	struct json_check jc;
	char *s;

	memcpy(f->targets[0].comm, "a\"b\\c\n\x01", 8);
	free(f->pages[0].region);
	/* é, €, U+1F600, then invalid: lone 0xff, overlong "/", a
	 * surrogate, and a truncated € at the end */
	f->pages[0].region = dup_str("q\"\t\x1f\x7f \xc3\xa9\xe2\x82\xac"
				     "\xf0\x9f\x98\x80|\xff|\xc0\xaf|"
				     "\xed\xa0\x80|\xe2\x82");
	f->pages[0].symbol = dup_str("sym/\\");
	f->source_note = dup_str("first touch\r\n");
	s = render_json_checked(f, &jc);
	contains(s, "\"comm\":\"a\\\"b\\\\c\\u000a\\u0001\"");
	contains(s, "\"region\":\"q\\\"\\u0009\\u001f\\u007f "
		 "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\\ufffd|"
		 "\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\"");
	contains(s, "\"symbol\":\"sym/\\\\\"");
	contains(s, "\"source_note\":\"first touch\\u000d\\u000a\"");
	free(s);

	/* comm fills all 16 bytes without a NUL: exactly 16 are written */
	memcpy(f->targets[0].comm, "0123456789abcdefXYZ", 16);
	s = render_json_checked(f, &jc);
	contains(s, "\"comm\":\"0123456789abcdef\",");
	free(s);
	frame_free(f);
}

static void
test_nulls_and_numbers(void)
{
	struct frame *f = make_frame(2);
	struct json_check jc;
	char *s;

	/* an interval without samples: share = 0/0 must not print NaN */
	memset(&f->totals, 0, sizeof(f->totals));
	f->pages[0].share = NAN;
	f->pages[0].node = FRAME_NODE_UNKNOWN;
	free(f->pages[0].region);
	f->pages[0].region = NULL;
	f->pages[0].latency = 123.26;
	f->pages[1].share = INFINITY;
	f->pages[1].latency = NAN;
	f->cpus[1].node = FRAME_NODE_UNKNOWN;
	f->time = NAN;
	f->interval = 0.9996;
	f->paused = true;
	f->sort = SORT_LATENCY;
	f->has_kinds = false;
	s = render_json_checked(f, &jc);
	contains(s, "\"time\":0.000,\"interval\":1.000,");
	contains(s, "\"share\":0.0000,\"node\":null,\"region\":null,"
		 "\"symbol\":null,\"other\":1,\"latency\":123.3,");
	contains(s, "\"share\":0.0000,\"node\":0,\"region\":\"[heap]\","
		 "\"symbol\":null,\"other\":0,\"latency\":null,");
	contains(s, "{\"cpu\":1,\"node\":null,\"samples\":2}");
	contains(s, "\"paused\":true,\"sort\":\"latency\",");
	contains(s, "\"has_kinds\":false,");
	check(s && !strstr(s, "nan") && !strstr(s, "inf"));
	free(s);

	f->pages[0].share = 0.123456;
	f->time = 12345.6789;
	s = render_json_checked(f, &jc);
	contains(s, "\"time\":12345.679,");
	contains(s, "\"share\":0.1235,");
	free(s);
	frame_free(f);
}

/* Nodes 0 and 2 (sparse numbering): rows and columns follow nodes[]. */
static void
test_two_nodes(void)
{
	struct frame *f = make_frame(1);
	struct json_check jc;
	char *s;

	free(f->nodes);
	free(f->matrix);
	free(f->matrix_unknown);
	f->n_nodes = 2;
	f->nodes = calloc(2, sizeof(*f->nodes));
	f->nodes[0] = (struct frame_node){ .node = 0, .cpu_samples = 3,
					   .mem_samples = 4, .local = 1,
					   .remote = 2 };
	f->nodes[1] = (struct frame_node){ .node = 2, .cpu_samples = 7,
					   .mem_samples = 6, .local = 4,
					   .remote = 3 };
	f->matrix = calloc(4, sizeof(uint64_t));
	f->matrix[0] = 1;
	f->matrix[1] = 2;
	f->matrix[2] = 3;
	f->matrix[3] = 4;
	f->matrix_unknown = calloc(2, sizeof(uint64_t));
	f->matrix_unknown[0] = 5;
	f->matrix_unknown[1] = 6;
	f->exit_status = 3;
	f->imbalance = 1.2;	/* 6 of 10 memory-side samples on 2 nodes */
	/* The process row, again, with a count per node. */
	free(f->processes[0].cgroup);
	free(f->processes);
	free(f->process_nodes);
	frame_one_process(f, 4242, "bench", NULL);
	s = render_json_checked(f, &jc);
	contains(s, "\"nodes\":[4,6],");
	contains(s, "\"nodes\":[{\"node\":0,\"cpu_samples\":3,"
		 "\"mem_samples\":4,\"local\":1,\"remote\":2,");
	contains(s, "{\"node\":2,\"cpu_samples\":7,\"mem_samples\":6,"
		 "\"local\":4,\"remote\":3,");
	contains(s, "\"matrix\":[[1,2],[3,4]],");
	contains(s, "\"matrix_unknown\":[5,6],\"imbalance\":1.200,");
	contains(s, ",\"exit_status\":3}\n");
	free(s);

	/* no nodes at all: empty arrays, still valid */
	f->n_nodes = 0;
	s = render_json_checked(f, &jc);
	contains(s, "\"nodes\":[],");
	contains(s, "\"matrix\":[],");
	contains(s, "\"matrix_unknown\":[]");
	free(s);
	f->n_nodes = 2;
	frame_free(f);
}

/* 1000 pages with arbitrary bytes in their strings: every line valid. */
static void
test_large(void)
{
	struct frame *f = make_frame(1000);
	uint32_t rng = 12345;
	struct json_check jc;
	size_t addrs = 0;
	char *s;

	for (size_t i = 0; i < 1000; i++) {
		char name[40];
		size_t len = 1 + i % 39;

		for (size_t j = 0; j < len; j++) {
			rng = rng * 1103515245u + 12345u;
			name[j] = (char)(1 + (rng >> 16) % 255);
		}
		name[len] = '\0';
		free(f->pages[i].region);
		f->pages[i].region = dup_str(name);
		f->pages[i].symbol = i % 3 ? dup_str(name + len / 2) : NULL;
		f->pages[i].node = i % 5 ? (int32_t)(i % 4) :
			FRAME_NODE_UNKNOWN;
		f->pages[i].share = (double)i / 1000.0;
		f->pages[i].latency = i % 2 ? (double)i * 1.5 : -1.0;
	}
	s = render_json_checked(f, &jc);
	for (const char *p = s; p && (p = strstr(p, "\"addr\":\"0x")); p++)
		addrs++;
	check_eq_u64(addrs, 1000);
	check(s && strchr(s, '\n') == s + strlen(s) - 1);
	contains(s, "\"addr\":\"0x7f3a1c3e7000\"");
	free(s);
	frame_free(f);
}

static void
test_write_error(void)
{
	struct frame *f = make_frame(3);
	FILE *full = fopen("/dev/full", "w");

	if (!full) {
		fprintf(stderr, "no /dev/full, write errors untested\n");
		frame_free(f);
		return;
	}
	setvbuf(full, NULL, _IONBF, 0);
	check_eq_i64(report_json_write(full, f), -ENOSPC);
	clearerr(full);
	check_eq_i64(report_text_write(full, f, 3), -ENOSPC);
	fclose(full);
	frame_free(f);
}

/* data_src level mixes: only non-zero classes, perf's names. */
static void
test_levels(void)
{
	struct frame *f = make_frame(1);
	char *s;

	f->pages[0].levels = calloc(FRAME_LEVELS, sizeof(uint64_t));
	f->pages[0].levels[DATASRC_LVL_L1] = 2;
	f->pages[0].levels[DATASRC_LVL_REMOTE_RAM] = 1;
	f->levels[DATASRC_LVL_L3] = 5;
	s = render(f, true, 0);
	check(s && strstr(s, "\"levels\":{\"L1\":2,\"remote RAM\":1}"));
	check(s && strstr(s, "\"collector_cpu_us\":0,\"levels\":{\"L3\":5}"));
	free(s);
	frame_free(f);
}

/* A -e damon entry's region: its counts, age (in seconds too) and the
 * nodes of the mask in order; a page of any other source has no key. */
static void
test_damon(void)
{
	struct frame *f = make_frame(1);
	char *s;

	s = render(f, true, 0);
	check(s && !strstr(s, "\"damon\""));
	free(s);
	f->pages[0].damon = calloc(1, sizeof(*f->pages[0].damon));
	*f->pages[0].damon = (struct frame_damon){ .accesses = 17,
		.checks = 20, .age = 12, .aggr_us = 100000,
		.nodes = (1u << 1) | (1u << 3), .probed = 8, .unknown = 2 };
	s = render(f, true, 0);
	contains(s, "\"object\":null,\"damon\":{\"accesses\":17,"
		 "\"checks\":20,\"age\":12,\"age_s\":1.200,"
		 "\"nodes\":[1,3],\"probed\":8,\"unknown\":2}}");
	free(s);
	frame_free(f);
}

/*
 * Every count of the totals and of a page different from the others, so
 * that a field written from its neighbour shows (the fixture of
 * test_exact() has loads == stores); the text writer's counts line too.
 */
static void
test_distinct_counts(void)
{
	struct frame *f = make_frame(1);
	struct frame_page *p = &f->pages[0];
	char *s;

	f->totals = (struct counts){ .samples = 9, .loads = 2, .stores = 3,
				     .other = 4, .lost = 5, .throttled = 6,
				     .unattributed = 7, .untracked = 8 };
	p->samples = 9;
	p->loads = 2;
	p->stores = 3;
	p->other = 4;
	p->total = 11;
	p->local = 5;
	p->remote = 4;
	s = render(f, true, 0);
	contains(s, "\"totals\":{\"samples\":9,\"loads\":2,\"stores\":3,"
		 "\"other\":4,\"lost\":5,\"throttled\":6,"
		 "\"unattributed\":7,\"untracked\":8},");
	contains(s, "\"samples\":9,\"loads\":2,\"stores\":3,\"total\":11,");
	contains(s, "\"other\":4,\"latency\":null,\"local\":5,"
		 "\"remote\":4,");
	free(s);
	s = render(f, false, 10);
	contains(s, "samples 9: loads 2, stores 3, other 4;  lost 5, "
		 "throttled 6, unattributed 7, untracked 8\n");
	free(s);
	frame_free(f);
}

/*
 * A page's object and the objects rows (issue 18), exactly as the man
 * page's JSON FIELDS list them: the size asked and the first toucher
 * (null without one), the rows' allocating and first-touching threads.
 */
static void
test_objects(void)
{
	struct frame *f = make_frame(2);
	struct frame_objsite *o;
	char *s;

	frame_one_objsite(f, 7, 0);
	o = &f->objects[0];
	o->requested = 4198400;
	o->touch_tids[0] = 9;
	o->touch_tids[1] = 11;
	o->n_touch_tids = 2;
	frame_page_object(&f->pages[0], "make_table+0x1c", 4198400);
	f->pages[0].object->requested = 4194320;
	f->pages[0].object->first_touch = 9;
	frame_page_object(&f->pages[1], "make_grid+0x8", 8192);
	s = render(f, true, 0);
	contains(s, "\"size\":4198400,\"base\":\"0x");
	contains(s, "\"age\":1.500,\"requested\":4194320,"
		 "\"first_touch\":9}");
	contains(s, "\"age\":1.500,\"requested\":0,\"first_touch\":null}");
	contains(s, "\"tids\":[7],\"requested\":4198400,"
		 "\"first_touch\":[9,11]}");
	free(s);
	frame_free(f);
}

int
main(void)
{
	test_json_checker();
	test_exact();
	test_key_order();
	test_levels();
	test_damon();
	test_distinct_counts();
	test_objects();
	test_escapes();
	test_nulls_and_numbers();
	test_two_nodes();
	test_large();
	test_write_error();
	return test_result();
}
