/*
 * Cache-line heat (src/tables/linetab.h): slots, the pages that get one
 * once all are taken (want), reset to another page size, and counts past
 * the 16-bit counters (carries) through a merge, a slot changing owner
 * and a reset, and without memory for a carry.
 */
#include "config.h"

#include <stdint.h>

#include "failalloc.h"
#include "linetab.h"
#include "testlib.h"

static void
test_lines(void)
{
	struct linetab *t = linetab_new(12);
	struct linetab_key keys[2];
	uint32_t l[LINETAB_LINES];

	linetab_add(t, 1, 0x5000);
	linetab_add(t, 1, 0x5040);
	linetab_add(t, 1, 0x507f);
	linetab_add(t, 1, 0x5fc0);
	check(linetab_get(t, 1, 5, l));
	check_eq_u64(l[0], 1);
	check_eq_u64(l[1], 2);
	check_eq_u64(l[63], 1);
	check(!linetab_get(t, 2, 5, l));
	/* Fill every slot; later pages get none until wanted. */
	for (uint64_t p = 0; linetab_count(t) < LINETAB_SLOTS; p++)
		linetab_add(t, 2, (0x100000 + p) << 12);
	linetab_add(t, 3, 0x7000);
	check(!linetab_get(t, 3, 7, l));
	/* Every page with a slot still counts with all slots taken (the
	 * filter that skips the others must know each of them). */
	for (uint64_t p = 0; p < LINETAB_SLOTS - 1; p++) {
		bool ok;

		linetab_add(t, 2, ((0x100000 + p) << 12) + 5 * 64);
		ok = check(linetab_get(t, 2, 0x100000 + p, l));
		ok = ok && check_eq_u64(l[5], 1) && check_eq_u64(l[0], 1);
		if (!ok)
			break;
	}
	keys[0].pid = 3;
	keys[0].page = 7;
	keys[1].pid = 1;
	keys[1].page = 5;
	linetab_want(t, keys, 2);
	check(linetab_get(t, 3, 7, l));
	check_eq_u64(l[0], 0);		/* counts from now on */
	linetab_add(t, 3, 0x7100);
	check(linetab_get(t, 3, 7, l));
	check_eq_u64(l[4], 1);
	check(linetab_get(t, 1, 5, l));	/* kept: it was wanted */
	check_eq_u64(l[1], 2);
	check_eq_u64(linetab_count(t), LINETAB_SLOTS);
	/* 2 MiB pages: 64 lines of 32 KiB. */
	linetab_reset(t, 21);
	check_eq_u64(linetab_count(t), 0);
	linetab_add(t, 1, 0x200000 + 0x48000);
	check(linetab_get(t, 1, 1, l));
	check_eq_u64(l[9], 1);
	linetab_free(t);
	linetab_free(NULL);
}

/* n samples on one address. */
static void
line_n(struct linetab *t, int32_t pid, uint64_t addr, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		linetab_add(t, pid, addr);
}

/* Counts past the 16-bit counters stay exact: the carries, through a
 * merge, a slot changing owner and a reset. */
static void
test_line_carry(void)
{
	struct linetab *t = linetab_new(12), *u = linetab_new(12);
	struct linetab_key keys[LINETAB_SLOTS / 2];
	uint32_t l[LINETAB_LINES];
	size_t bytes = linetab_bytes(t);

	line_n(t, 1, 0x5040, 2 * 65536 + 5);
	line_n(t, 1, 0x5080, 70000);
	check(linetab_get(t, 1, 5, l));
	check_eq_u64(l[1], 2 * 65536 + 5);
	check_eq_u64(l[2], 70000);
	check_eq_u64(l[0], 0);
	check(linetab_bytes(t) > bytes);
	/* A merge: a sum that wraps (5 + 65535) and src's own carries. */
	line_n(u, 1, 0x5040, 65535);
	line_n(u, 1, 0x50c0, 3 * 65536);
	line_n(u, 2, 0x9000, 65536 + 1);
	linetab_merge(t, u);
	check(linetab_get(t, 1, 5, l));
	check_eq_u64(l[1], 2 * 65536 + 5 + 65535);
	check_eq_u64(l[2], 70000);
	check_eq_u64(l[3], 3 * 65536);
	check(linetab_get(t, 2, 9, l));
	check_eq_u64(l[0], 65537);
	/* Page 5 holds slot 0; pages wanted that are not it take slots
	 * from those not wanted, slot 0 first: its new owner counts from
	 * 0, its carries gone with the old owner. */
	for (uint64_t p = 0; linetab_count(t) < LINETAB_SLOTS; p++)
		linetab_add(t, 3, (0x100000 + p) << 12);
	for (size_t k = 0; k < LINETAB_SLOTS / 2; k++) {
		keys[k].pid = 4;
		keys[k].page = 0x200000 + k;
	}
	linetab_want(t, keys, LINETAB_SLOTS / 2);
	check(!linetab_get(t, 1, 5, l));
	check(linetab_get(t, 4, 0x200000, l));
	check_eq_u64(l[1], 0);
	check_eq_u64(l[3], 0);
	linetab_add(t, 4, 0x200000ull << 12 | 0x40);
	check(linetab_get(t, 4, 0x200000, l));
	check_eq_u64(l[1], 1);
	/* A reset forgets the carries too: slot 1's, here. */
	line_n(t, 4, 0x200001ull << 12, 65536 + 1);
	check(linetab_get(t, 4, 0x200001, l));
	check_eq_u64(l[0], 65537);
	linetab_reset(t, 12);
	linetab_add(t, 1, 0x5040);
	linetab_add(t, 2, 0x9000);
	check(linetab_get(t, 1, 5, l));
	check_eq_u64(l[1], 1);
	check(linetab_get(t, 2, 9, l));
	check_eq_u64(l[0], 1);
	linetab_free(t);
	linetab_free(u);
}

/* Without memory for a carry, a line stops at 65535 (never a count that
 * wrapped to near 0), the wraps lost counted; no allocation is tried
 * again until a reset, after which carries work again. */
static void
test_line_nomem(void)
{
	struct linetab *t = linetab_new(12);
	uint32_t l[LINETAB_LINES];
	unsigned long refused;

	if (!check(t != NULL))
		return;
	failalloc_on = true;
	refused = failalloc_refused;
	line_n(t, 1, 0x5040, 3 * 65536);
	failalloc_on = false;
	check_eq_u64(failalloc_refused - refused, 1);
	check(linetab_get(t, 1, 5, l));
	check_eq_u64(l[1], 65535);
	check(t->saturated > 0);
	linetab_reset(t, 12);
	check_eq_u64(t->saturated, 0);
	line_n(t, 1, 0x5040, 65536 + 7);
	check(linetab_get(t, 1, 5, l));
	check_eq_u64(l[1], 65536 + 7);
	linetab_free(t);
}

int
main(void)
{
	test_lines();
	test_line_carry();
	test_line_nomem();
	return test_result();
}
