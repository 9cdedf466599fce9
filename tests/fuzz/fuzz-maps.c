#include "config.h"

/*
 * Fuzz target for the /proc/PID/maps parser (src/names/maps.c) and the
 * /proc/PID/task/TID/syscall stack-pointer parser: both read text that the
 * kernel writes but that a process can shape (file names with spaces,
 * newlines, " (deleted)", brackets; any length).
 *
 * Input: the whole buffer is loaded as maps text, twice (the second load
 * must report "unchanged"), then as the syscall text.  Invariants, checked
 * with __builtin_trap(): regions are sorted and non-empty; maps_lookup()
 * at a region's first and last byte returns a region holding that byte,
 * maps_first_in() one overlapping it; region names are NUL-terminated within their buffer
 * and maps_region_name() reports the length it needed; a parsed stack
 * pointer comes with 0.
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target; otherwise
 * tests/fuzz/fuzzmain.c replays the files given, then a fixed pseudo-random set
 * of inputs built from real maps lines and their pieces.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "fuzzmain.h"
#include "maps.h"

static bool
fuzz_holds(const struct maps_region *r, uint64_t addr)
{
	return r && r->start <= addr && addr < r->end;
}

/*
 * The kernel never lists overlapping regions, but text can.  Then lookups
 * may miss (NULL), but never return a region that does not hold the
 * address; without overlaps they must find one.
 */
static void
fuzz_check_regions(const struct maps *m)
{
	uint64_t prev_start = 0, prev_end = 0;
	bool overlaps = false;
	char name[64];

	for (size_t i = 0; i < maps_count(m); i++) {
		const struct maps_region *r = maps_at(m, i);

		if (!r || r->end <= r->start || r->start < prev_start)
			__builtin_trap();
		overlaps |= r->start < prev_end;
		prev_start = r->start;
		prev_end = r->end;
	}
	for (size_t i = 0; i < maps_count(m); i++) {
		const struct maps_region *r = maps_at(m, i), *f;
		const struct maps_region *lo = maps_lookup(m, r->start);
		const struct maps_region *hi = maps_lookup(m, r->end - 1);
		int need;

		if ((lo || !overlaps) && !fuzz_holds(lo, r->start))
			__builtin_trap();
		if ((hi || !overlaps) && !fuzz_holds(hi, r->end - 1))
			__builtin_trap();
		f = maps_first_in(m, r->start, r->end);
		if ((f || !overlaps) &&
		    (!f || f->end <= r->start || f->start >= r->end))
			__builtin_trap();
		need = maps_region_name(r, r->start, name, sizeof(name));
		if (need < 0 || strlen(name) >= sizeof(name) ||
		    (need < (int)sizeof(name) && strlen(name) != (size_t)need))
			__builtin_trap();
		/* A tiny buffer is still terminated. */
		maps_region_name(r, r->end - 1, name, 1);
		if (name[0] != '\0')
			__builtin_trap();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct maps *m = maps_new(0);
	char *text;
	uint64_t sp = 0;
	int ret;

	if (!m)
		return 0;
	/* The syscall parser takes a C string; maps text a length. */
	text = malloc(size + 1);
	if (!text) {
		maps_free(m);
		return 0;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	ret = maps_load_text(m, text, size);
	if (ret < 0 && ret != -ENOMEM)
		__builtin_trap();
	fuzz_check_regions(m);
	if (ret >= 0 && maps_load_text(m, text, size) == 1)
		__builtin_trap();
	fuzz_check_regions(m);
	maps_note_thread_sp(m, 42, size ? (uint64_t)data[0] << 12 : 0);
	fuzz_check_regions(m);
	ret = maps_parse_syscall_sp(text, &sp);
	if (ret != 0 && ret != -EAGAIN && ret != -EINVAL)
		__builtin_trap();
	free(text);
	maps_free(m);
	return 0;
}

/* Real lines and the pieces they are made of, for recombination. */
static const char *const fuzz_lines[] = {
	"55d0c2a4e000-55d0c2a50000 r--p 00000000 fd:01 1835 /usr/bin/cat\n",
	"55d0c2a50000-55d0c2a55000 r-xp 00002000 fd:01 1835 /usr/bin/cat\n",
	"55d0c2a5a000-55d0c2a5b000 rw-p 0000b000 fd:01 1835 /usr/bin/cat\n",
	"55d0c2a5b000-55d0c2a5c000 rw-p 00000000 00:00 0 \n",
	"55d0c3b7e000-55d0c3b9f000 rw-p 00000000 00:00 0 [heap]\n",
	"7f1e2c000000-7f1e2c021000 rw-p 00000000 00:00 0 \n",
	"7f1e30000000-7f1e30200000 rw-s 00000000 00:01 4 /dev/zero (deleted)\n",
	"7f1e31000000-7f1e31200000 rw-p 00000000 00:0f 5 /anon_hugepage (deleted)\n",
	"7f1e32000000-7f1e32001000 r--p 00000000 fd:01 77 /tmp/a b (deleted)\n",
	"7ffd1b5e1000-7ffd1b602000 rw-p 00000000 00:00 0 [stack]\n",
	"7ffd1b7c9000-7ffd1b7cd000 r--p 00000000 00:00 0 [vvar]\n",
	"7ffd1b7cd000-7ffd1b7cf000 r-xp 00000000 00:00 0 [vdso]\n",
	"7f1e33000000-7f1e33001000 rw-p 00000000 00:00 0 [anon:name]\n",
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n",
	"0-1000 r--p 0 0:0 0\n",
	"1000-0 r--p 0 0:0 0 x\n",
	"ffffffffffffffff-0 rwxp ffffffffffffffff ffffffff:ffffffff 18446744073709551615 [\n",
	"2000-3000 zzzz 00000000 00:00 0 \n",
	"\n", " ", "-", "[", "]", " (deleted)", "0x", "\t",
	"19 0x7ffd 0x1 0x2 0x3 0x4 0x5 0x7ffd1b600f00 0x7f1e2c000123\n",
	"-1 0x7ffd1b600f00 0x7f1e2c000123\n",
	"running\n",
};

/*
 * 1 to 24 lines or pieces of them (a prefix or a suffix, sometimes), then
 * a few flipped bytes.
 */
static size_t
fuzz_maps_generate(uint64_t *x, uint8_t *buf, size_t cap)
{
	size_t n_lines = ARRAY_SIZE(fuzz_lines);
	size_t len = 0, pieces = 1 + fuzz_next(x) % 24;

	for (size_t p = 0; p < pieces; p++) {
		const char *s = fuzz_lines[fuzz_next(x) % n_lines];
		size_t l = strlen(s);

		if ((*x >> 8) % 4 == 0)
			l = (*x >> 16) % (l + 1);
		else if ((*x >> 8) % 4 == 1)
			s += (*x >> 16) % (l + 1), l = strlen(s);
		if (len + l >= cap)
			break;
		memcpy(buf + len, s, l);
		len += l;
	}
	for (unsigned k = 0; len && k < (*x >> 40) % 4; k++) {
		fuzz_next(x);
		buf[*x % len] = (uint8_t)(*x >> 24);
	}
	return len;
}

const struct fuzz_target fuzz_target = {
	.name = "fuzz-maps",
	.generate = fuzz_maps_generate,
	.seed = 0x9e3779b97f4a7c15,
	.n_random = 20000,
	.random_max = 8192,
};
