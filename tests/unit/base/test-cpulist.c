/* cpulist (src/base/cpulist.c): perf's -C syntax and sysfs's online file
 * in, the same syntax back out; every malformed list refused. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cpulist.h"
#include "testlib.h"

static void
check_round(const char *in, const char *out, int count)
{
	struct cpulist l;
	char buf[64];

	check_eq_i64(cpulist_parse(in, &l), 0);
	check_eq_i64(cpulist_count(&l), count);
	cpulist_format(&l, buf, sizeof(buf));
	check_eq_str(buf, out);
}

static void
test_parse(void)
{
	static const char *const bad[] = {
		"", ",", "1,", ",1", "1-", "-1", "3-1", "a", "1 2", " 1",
		"1,,2", "1-2-3", "+1", "0x1", "1\n\n",
	};
	struct cpulist l;

	check_round("0", "0", 1);
	check_round("0-3,8", "0-3,8", 5);
	check_round("8,0-3", "0-3,8", 5);
	check_round("1,2,3,5", "1-3,5", 4);
	check_round("0-1\n", "0-1", 2);
	check_round("3,3,3", "3", 1);
	check_round("8191", "8191", 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!check(cpulist_parse(bad[i], &l) == -EINVAL))
			fprintf(stderr, "  accepted '%s'\n", bad[i]);
		check_eq_i64(cpulist_count(&l), 0);
	}
	check_eq_i64(cpulist_parse("8192", &l), -ERANGE);
	check_eq_i64(cpulist_parse("0-99999999999999999999", &l), -ERANGE);
}

static void
test_ops(void)
{
	struct cpulist l;
	char buf[8];

	check_eq_i64(cpulist_parse("2,64-65,4000", &l), 0);
	check(cpulist_has(&l, 2));
	check(!cpulist_has(&l, 3));
	check(!cpulist_has(&l, -1));
	check(!cpulist_has(&l, 9000));
	check_eq_i64(cpulist_next(&l, 0), 2);
	check_eq_i64(cpulist_next(&l, 3), 64);
	check_eq_i64(cpulist_next(&l, 65), 65);
	check_eq_i64(cpulist_next(&l, 66), 4000);
	check_eq_i64(cpulist_next(&l, 4001), -1);
	/* Truncated output stays a terminated prefix. */
	check_eq_u64(cpulist_format(&l, buf, sizeof(buf)),
		     strlen("2,64-65,4000"));
	check_eq_str(buf, "2,64-65");
	check_eq_u64(cpulist_format(&l, NULL, 0), strlen("2,64-65,4000"));
}

static void
test_read(void)
{
	struct cpulist l;

	/* The running system's own list parses and is not empty. */
	check_eq_i64(cpulist_read("/sys/devices/system/cpu/online", &l), 0);
	check(cpulist_count(&l) >= 1);
	check(cpulist_read("/nonexistent/online", &l) < 0);
}

int
main(void)
{
	test_parse();
	test_ops();
	test_read();
	return test_result();
}
