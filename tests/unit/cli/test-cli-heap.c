/*
 * --heap-objects[=N|SIZE] (src/cli/cli_heap.c): every allocation, every
 * Nth, those of SIZE or more; bad values and modes without a live target
 * are usage errors naming the option.
 */
#include "config.h"

#include <string.h>

#include "cli.h"
#include "testlib.h"

struct heap_case {
	const char *args[4];
	int rc;
	bool on;
	uint32_t every;
	uint64_t min_size;
	const char *err_has;
};

static const struct heap_case heap_cases[] = {
	{ { "--heap-objects", "-p", "1" }, 0, true, 0, 0, NULL },
	{ { "--heap-objects=8", "--", "ls" }, 0, true, 8, 0, NULL },
	{ { "--heap-objects=4k", "-p", "1" }, 0, true, 0, 4096, NULL },
	{ { "--heap-objects=64B", "-p", "1" }, 0, true, 0, 64, NULL },
	{ { "--heap-objects=1m", "-p", "1" }, 0, true, 0, 1 << 20, NULL },
	{ { "-p", "1" }, 0, false, 0, 0, NULL },
	{ { "--heap-objects=0", "-p", "1" }, 2, 0, 0, 0, "--heap-objects" },
	{ { "--heap-objects=0k", "-p", "1" }, 2, 0, 0, 0, "invalid size" },
	{ { "--heap-objects=x", "-p", "1" }, 2, 0, 0, 0, "--heap-objects" },
	{ { "--heap-objects=", "-p", "1" }, 2, 0, 0, 0, "invalid value" },
	{ { "--heap-objects=2000g", "-p", "1" }, 2, 0, 0, 0, "invalid size" },
	{ { "--heap-objects", "-a" }, 2, 0, 0, 0, "needs -p PID" },
	{ { "--heap-objects", "-i", "x.data" }, 2, 0, 0, 0, "needs -p PID" },
};

int
main(void)
{
	for (size_t i = 0; i < sizeof(heap_cases) / sizeof(heap_cases[0]);
	     i++) {
		const struct heap_case *c = &heap_cases[i];
		char *argv[6] = { (char *)"memtop" };
		struct options o;
		char err[256] = "";
		int argc = 1, rc;

		for (size_t k = 0; k < 4 && c->args[k]; k++)
			argv[argc++] = (char *)c->args[k];
		rc = cli_parse(argc, argv, &o, err, sizeof(err));
		check_eq_i64(rc, c->rc);
		if (rc == 0) {
			check(o.heap.on == c->on);
			check_eq_u64(o.heap.every, c->every);
			check_eq_u64(o.heap.min_size, c->min_size);
			cli_fini(&o);
		} else if (!strstr(err, c->err_has)) {
			test_fail_at(__FILE__, __LINE__, "case %zu: '%s'", i,
				     err);
		}
	}
	return test_result();
}
