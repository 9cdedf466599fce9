/*
 * The side tables beside the page table: per-page code sites (exact
 * counts, Space-Saving replacement, set eviction, folding), cache-line
 * heat (slots, want, reset), samples per code address (epochs, unknown,
 * a full table) and the u64 map the name caches use.
 */
#include "config.h"

#include <stdlib.h>

#include "codetab.h"
#include "linetab.h"
#include "sitetab.h"
#include "testlib.h"
#include "u64map.h"

static void
stest_sites(void)
{
	struct sitetab *t = sitetab_new(64);
	struct sitetab_site s[SITETAB_SITES];
	size_t n;

	check_eq_u64(sitetab_capacity(t), 64);
	for (int i = 0; i < 5; i++)
		sitetab_add(t, 1, 10, 0x100);
	for (int i = 0; i < 3; i++)
		sitetab_add(t, 1, 10, 0x200);
	sitetab_add(t, 1, 10, 0x300);
	sitetab_add(t, 1, 10, 0x400);
	sitetab_add(t, 1, 10, 0);		/* no ip: not recorded */
	n = sitetab_get(t, 1, 10, s);
	check_eq_u64(n, 4);
	check_eq_u64(s[0].ip, 0x100);
	check_eq_u64(s[0].count, 5);
	check_eq_u64(s[1].ip, 0x200);
	check_eq_u64(s[1].count, 3);
	check_eq_u64(s[2].ip, 0x300);	/* ties: lower ip first */
	check_eq_u64(s[3].ip, 0x400);
	/* Full: a newcomer takes the weakest slot (0x300, rank 1) with a
	 * count of its own samples only. */
	sitetab_add(t, 1, 10, 0x500);
	n = sitetab_get(t, 1, 10, s);
	check_eq_u64(n, 4);
	check_eq_u64(s[2].ip, 0x400);
	check_eq_u64(s[3].ip, 0x500);
	check_eq_u64(s[3].count, 1);
	/* An ip with most of the samples always holds a slot. */
	for (int i = 0; i < 100; i++)
		sitetab_add(t, 1, 10, 0x600 + (uint64_t)(i % 7) * 0x10);
	for (int i = 0; i < 60; i++)
		sitetab_add(t, 1, 10, 0x900);
	n = sitetab_get(t, 1, 10, s);
	check(n == 4);
	check_eq_u64(s[0].ip, 0x900);
	check_eq_u64(s[0].count, 60);
	check_eq_u64(sitetab_get(t, 2, 10, s), 0);
	check_eq_u64(sitetab_get(t, 1, 11, s), 0);

	/* Fold 4 KiB pages 0x200..0x3ff into one 2 MiB page. */
	{
		struct sitetab *big = sitetab_new(64);

		sitetab_reset(t);
		sitetab_add(t, 7, 0x200, 0xa);
		sitetab_add(t, 7, 0x201, 0xa);
		sitetab_add(t, 7, 0x201, 0xb);
		sitetab_add(t, 7, 0x400, 0xc);
		sitetab_fold(big, t, 9);
		n = sitetab_get(big, 7, 1, s);
		check_eq_u64(n, 2);
		check_eq_u64(s[0].ip, 0xa);
		check_eq_u64(s[0].count, 2);
		check_eq_u64(s[1].ip, 0xb);
		n = sitetab_get(big, 7, 2, s);
		check_eq_u64(n, 1);
		check_eq_u64(s[0].ip, 0xc);
		sitetab_free(big);
	}

	/* A full set gives up its lightest page, counted. */
	sitetab_free(t);
	t = sitetab_new(1);		/* one set of SITETAB_WAYS pages */
	for (uint64_t p = 0; p < SITETAB_WAYS; p++)
		for (uint64_t k = 0; k <= p; k++)
			sitetab_add(t, 3, p, 0x10);
	sitetab_add(t, 3, 99, 0x20);
	check_eq_u64(sitetab_evicted(t), 1);
	check_eq_u64(sitetab_get(t, 3, 0, s), 0);	/* the lightest */
	check_eq_u64(sitetab_get(t, 3, 99, s), 1);
	check_eq_u64(sitetab_get(t, 3, SITETAB_WAYS - 1, s), 1);
	sitetab_free(t);
	sitetab_free(NULL);
}

static void
stest_lines(void)
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

static void
stest_code(void)
{
	struct codetab *t = codetab_new();
	struct codetab_counts in, cum;

	codetab_add(t, 1, 0x400);
	codetab_add(t, 1, 0x400);
	codetab_add(t, 2, 0x400);
	codetab_add(t, 1, 0);
	check_eq_u64(codetab_count(t), 2);
	codetab_counts(t, &in, &cum);
	check_eq_u64(in.unknown, 1);
	codetab_next_interval(t);
	codetab_add(t, 1, 0x400);
	codetab_counts(t, &in, &cum);
	check_eq_u64(in.unknown, 0);
	check_eq_u64(cum.unknown, 1);
	/* Fill the table: the rest count as untracked. */
	for (uint64_t ip = 1; codetab_count(t) < CODETAB_CAPACITY; ip++)
		codetab_add(t, 9, 0x100000 + ip);
	codetab_add(t, 9, 0x1);
	codetab_add(t, 1, 0x400);		/* known ips still count */
	codetab_counts(t, &in, &cum);
	check_eq_u64(in.untracked, 1);
	check_eq_u64(codetab_count(t), CODETAB_CAPACITY);
	codetab_reset(t);
	check_eq_u64(codetab_count(t), 0);
	codetab_counts(t, &in, &cum);
	check_eq_u64(cum.untracked, 0);
	codetab_free(t);
	codetab_free(NULL);
}

static void
stest_u64map(void)
{
	struct u64map m = { 0 };
	static int vals[3000];

	check(u64map_get(&m, 5) == NULL);
	for (int i = 0; i < 3000; i++)
		check(u64map_put(&m, (uint64_t)i * 4096, &vals[i]) == NULL);
	check_eq_u64(u64map_count(&m), 3000);
	check(u64map_get(&m, 4096 * 1234) == &vals[1234]);
	check(u64map_put(&m, 0, &vals[7]) == &vals[0]);
	check(u64map_get(&m, 0) == &vals[7]);
	check(u64map_get(&m, 1) == NULL);
	u64map_clear(&m, NULL);
	check_eq_u64(u64map_count(&m), 0);
	check(u64map_get(&m, 0) == NULL);
	u64map_clear(&m, NULL);
}

int
main(void)
{
	stest_sites();
	stest_lines();
	stest_code();
	stest_u64map();
	return test_result();
}
