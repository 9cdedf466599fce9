#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testlib.h"

static unsigned test_failures;
static unsigned test_checks;

void
test_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	test_failures++;
	fprintf(stderr, "%s:%d: FAIL: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool
test_eq_u64(const char *file, int line, const char *a_expr,
	    const char *b_expr, uint64_t a, uint64_t b)
{
	test_checks++;
	if (a == b)
		return true;
	test_fail_at(file, line, "%s == %s: %" PRIu64 " (0x%" PRIx64
		     ") vs %" PRIu64 " (0x%" PRIx64 ")", a_expr, b_expr, a, a,
		     b, b);
	return false;
}

bool
test_eq_i64(const char *file, int line, const char *a_expr,
	    const char *b_expr, int64_t a, int64_t b)
{
	test_checks++;
	if (a == b)
		return true;
	test_fail_at(file, line, "%s == %s: %" PRId64 " vs %" PRId64, a_expr,
		     b_expr, a, b);
	return false;
}

bool
test_eq_str(const char *file, int line, const char *a_expr,
	    const char *b_expr, const char *a, const char *b)
{
	test_checks++;
	if (a && b && strcmp(a, b) == 0)
		return true;
	if (!a && !b)
		return true;
	test_fail_at(file, line, "%s == %s: \"%s\" vs \"%s\"", a_expr, b_expr,
		     a ? a : "(null)", b ? b : "(null)");
	return false;
}

bool
test_true(const char *file, int line, const char *expr, bool v)
{
	test_checks++;
	if (v)
		return true;
	test_fail_at(file, line, "%s", expr);
	return false;
}

int
test_result(void)
{
	fprintf(stderr, "%u checks, %u failed\n", test_checks, test_failures);
	return test_failures ? 1 : 0;
}

void
test_skip(const char *fmt, ...)
{
	va_list ap;

	printf("SKIP: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	exit(TEST_SKIP);
}

void
test_touch_pages(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, n * page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return;
	madvise(m, n * page, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < n; i++)
		((volatile unsigned char *)m)[i * page] = 1;
	munmap(m, n * page);
}
