/*
 * Minimal test helpers.  Assertions print both expressions and values and
 * record the failure; they never return or jump, so cleanup still runs.
 * A test's main() ends with `return test_result();`.
 * Exit 77 (TEST_SKIP) means "cannot run here" and meson reports SKIP.
 */
#ifndef MEMTOP_TESTLIB_H
#define MEMTOP_TESTLIB_H

#include <stdbool.h>
#include <stdint.h>

#define TEST_SKIP 77

void test_fail_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool test_eq_u64(const char *file, int line, const char *a_expr,
		 const char *b_expr, uint64_t a, uint64_t b);
bool test_eq_i64(const char *file, int line, const char *a_expr,
		 const char *b_expr, int64_t a, int64_t b);
bool test_eq_str(const char *file, int line, const char *a_expr,
		 const char *b_expr, const char *a, const char *b);
bool test_true(const char *file, int line, const char *expr, bool v);
int test_result(void);
/* Prints "SKIP: why" and exits 77. */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#define check_eq_u64(a, b) test_eq_u64(__FILE__, __LINE__, #a, #b, (a), (b))
#define check_eq_i64(a, b) test_eq_i64(__FILE__, __LINE__, #a, #b, (a), (b))
#define check_eq_str(a, b) test_eq_str(__FILE__, __LINE__, #a, #b, (a), (b))
#define check(expr) test_true(__FILE__, __LINE__, #expr, (expr))

/* Faults n fresh pages of the calling thread (mapped, touched once each,
 * unmapped): n page faults for the event tests to count. */
void test_touch_pages(size_t n);

#endif
