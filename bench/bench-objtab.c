/*
 * The object table's cost per allocation and per free (issue 18: the
 * small objects of --heap-objects), with N objects live in one process
 * (N = 1 Ki, 16 Ki, 256 Ki; --quick: 1 Ki, 4 Ki): a malloc-like churn
 * of 64-byte objects, where each step frees a random live object and
 * allocates one at an address malloc would hand out (the freed chunk
 * again, half the time; a fresh address above the others, or a random
 * free gap, otherwise); then lookups of random live addresses.  Prints
 * CPU ns per step (free plus alloc; one lookup) and the machine; the table is checked against
 * the benchmark's own list of live objects at the end.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "benchlib.h"
#include "objtab.h"

#define OBJ_BYTES 64u
#define HEAP_BASE 0x10000000ull

struct churn {
	uint64_t *live;		/* bases of the live objects, unordered */
	size_t n_live;
	uint64_t *gaps;		/* freed bases not reused yet */
	size_t n_gaps;
	uint64_t top;		/* the next fresh base */
};

static int
churn_alloc(struct objtab *t, struct churn *c, uint64_t base)
{
	struct obj o = { .base = base, .size = OBJ_BYTES, .site = 0,
			 .tid = 1, .birth = base, .alloc_size = OBJ_BYTES };

	if (objtab_map(t, 1, &o) < 0)
		return -1;
	c->live[c->n_live++] = base;
	return 0;
}

static int
bench_one(size_t n, size_t steps, struct benchlib_rng *rng)
{
	struct objtab *t = objtab_new(0);
	struct churn c = { 0 };
	uint64_t t0, t_churn, t_find, found = 0;
	int bad = 0;

	c.live = malloc((n + 1) * sizeof(*c.live));
	c.gaps = malloc((steps + 1) * sizeof(*c.gaps));
	if (!t || !c.live || !c.gaps)
		return -1;
	c.top = HEAP_BASE;
	for (size_t i = 0; i < n; i++, c.top += OBJ_BYTES)
		if (churn_alloc(t, &c, c.top) < 0)
			return -1;
	t0 = benchlib_thread_cpu_ns();
	for (size_t s = 0; s < steps; s++) {
		size_t k = benchlib_rand(rng) % c.n_live;
		uint64_t base = c.live[k], r = benchlib_rand(rng);

		c.live[k] = c.live[--c.n_live];
		objtab_unmap(t, 1, base, OBJ_BYTES);
		c.gaps[c.n_gaps++] = base;
		/* Half the time the chunk just freed, else a fresh one or
		 * an older gap. */
		if (r & 1) {
			base = c.gaps[--c.n_gaps];
		} else if ((r & 2) || !c.n_gaps) {
			base = c.top;
			c.top += OBJ_BYTES;
		} else {
			size_t g = (r >> 8) % c.n_gaps;

			base = c.gaps[g];
			c.gaps[g] = c.gaps[--c.n_gaps];
		}
		bad |= churn_alloc(t, &c, base);
	}
	t_churn = benchlib_thread_cpu_ns() - t0;
	t0 = benchlib_thread_cpu_ns();
	for (size_t s = 0; s < steps; s++) {
		uint64_t r = benchlib_rand(rng);

		found += objtab_find(t, 1, c.live[r % c.n_live] +
				     (r >> 40) % OBJ_BYTES) != NULL;
	}
	t_find = benchlib_thread_cpu_ns() - t0;
	/* The table holds exactly the live list. */
	bad |= objtab_count(t) != c.n_live || found != steps;
	for (size_t i = 0; i < c.n_live && !bad; i++) {
		const struct obj *o = objtab_find(t, 1, c.live[i]);

		bad |= !o || o->base != c.live[i] || o->size != OBJ_BYTES;
	}
	printf("%8zu live  %8zu steps  free+alloc %9.1f ns  find %6.1f ns"
	       "  (CPU per step)%s\n", n, steps,
	       (double)t_churn / (double)steps,
	       (double)t_find / (double)steps, bad ? "  TABLE WRONG" : "");
	objtab_free(t);
	free(c.live);
	free(c.gaps);
	return bad ? -1 : 0;
}

int
main(int argc, char **argv)
{
	size_t div = benchlib_quick_divisor(argc, argv);
	static const size_t full[] = { 1024, 16384, 262144 };
	static const size_t quick[] = { 1024, 4096 };
	const size_t *sizes = div > 1 ? quick : full;
	size_t n_sizes = div > 1 ? 2 : 3;
	struct benchlib_rng rng = { 42 };
	int rc = 0;

	if (!div)
		return 2;
	benchlib_print_machine();
	printf("objtab: 64-byte objects in one process, malloc-like churn\n");
	for (size_t i = 0; i < n_sizes; i++)
		rc |= bench_one(sizes[i], div > 1 ? 20000 : 200000, &rng);
	return rc ? 1 : 0;
}
