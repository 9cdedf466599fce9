/*
 * The plain-build driver of the fuzz targets (tests/fuzz/fuzzmain.c).
 *
 * Each tests/fuzz/fuzz-NAME.c defines LLVMFuzzerTestOneInput() and one
 * struct fuzz_target saying how to make inputs for it.  Built with
 * -fsanitize=fuzzer (fuzz-NAME-libfuzzer, -Dfuzz=true) libFuzzer supplies
 * main() and fuzz_target goes unused; otherwise fuzzmain.c's main() runs
 * the target under the plain test suite:
 *
 *   fuzz-NAME [DIR|FILE]...
 *
 * replays every file given (a directory: every file below it, in name
 * order, as libFuzzer reads a corpus), each also through the target's
 * variants hook, then runs
 * n_random inputs made by the generate hook from a fixed seed, so a plain
 * run is repeatable.  Every input is passed in a heap block of exactly its
 * size, so ASan sees a read past the end.  A broken invariant is a
 * __builtin_trap() in the target, i.e. a crash; an unreadable file is
 * exit 1.
 */
#ifndef MEMTOP_FUZZMAIN_H
#define MEMTOP_FUZZMAIN_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_target {
	const char *name;
	/* With none: a usage error, not a silent pass (no generator). */
	int need_files;
	/*
	 * Writes the next random input, at most random_max bytes, into buf
	 * and returns its length.  *x is the xorshift64 state, seeded with
	 * seed and carried from one input to the next.  NULL: none.
	 */
	size_t (*generate)(uint64_t *x, uint8_t *buf, size_t cap);
	uint64_t seed;
	unsigned n_random;
	size_t random_max;
	/*
	 * Called with each replayed file after the file itself ran: runs
	 * inputs derived from it through run (the driver's, so that they
	 * are copied and counted like the rest).  NULL: none.
	 */
	void (*variants)(const uint8_t *data, size_t size,
			 void (*run)(const uint8_t *data, size_t size));
};

/* Defined by each fuzz-NAME.c. */
extern const struct fuzz_target fuzz_target;

/* The xorshift64 step every generator uses. */
static inline uint64_t
fuzz_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * The generators' last step: up to 7 bytes after buf[0] (the part
 * selector) replaced, and one time in 8 the input cut short.  The new
 * length.
 */
static inline size_t
fuzz_flip_cut(uint64_t *x, uint8_t *buf, size_t len)
{
	unsigned flips = (unsigned)(fuzz_next(x) % 8);

	for (unsigned i = 0; i < flips && len > 1; i++)
		buf[1 + fuzz_next(x) % (len - 1)] = (uint8_t)fuzz_next(x);
	if (fuzz_next(x) % 8 == 0 && len > 1)
		len = 1 + fuzz_next(x) % (len - 1);
	return len;
}

#endif
