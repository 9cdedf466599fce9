/*
 * What opening and indexing one ELF file costs the collector
 * (symbols_open, src/names/symbols.c): every file this process maps (its
 * executable, libc, libdw, libelf, ...), each round with a new struct
 * symbols so nothing is cached, and the cached lookup afterwards.  Since
 * issue 12 the parse runs in a helper process (src/names/symbols_sandbox.c):
 * the first file of a round also pays for starting it, which is printed
 * apart.  Lookups (symbols_function) stay in the collector and are timed
 * too, and so is a build id check of each file (symbols_path_build_id),
 * which reads no symbols.  --quick: 3 rounds instead of 20.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchlib.h"
#include "maps.h"
#include "symbols.h"

#define BENCH_MAX_FILES	64
#define BENCH_LOOKUPS	1000000

int
main(int argc, char **argv)
{
	int rounds = 20 / (int)(benchlib_quick_divisor(argc, argv) > 1 ? 7 : 1);
	struct maps *m = maps_new((int32_t)getpid());
	const struct maps_region *files[BENCH_MAX_FILES];
	double first = 0, rest = 0, lookup_ns, idcheck = 0;
	size_t n = 0, syms = 0;
	struct symbols_file *f = NULL;
	struct symbols *s;
	uint64_t off, start, sink = 0;
	double t0;

	benchlib_print_machine();
	if (!m || maps_refresh(m) < 0) {
		fprintf(stderr, "bench-symbols-open: cannot read own maps\n");
		return 1;
	}
	for (size_t i = 0; i < maps_count(m) && n < BENCH_MAX_FILES; i++) {
		const struct maps_region *r = maps_at(m, i);

		if (r->kind == MAPS_FILE && r->pgoff == 0 && r->path &&
		    r->path[0] == '/')
			files[n++] = r;
	}
	/* Each file's build id, read once (the helper's answers are cached
	 * by file identity from then on): what a capture's or an MMAP2
	 * record's build id costs to check before the file is parsed. */
	for (size_t i = 0; i < n; i++) {
		uint8_t id[SYMBOLS_BUILD_ID_MAX];

		t0 = benchlib_now();
		symbols_path_build_id((int32_t)getpid(), files[i]->path, 0,
				      id);
		idcheck += benchlib_now() - t0;
	}
	for (int k = 0; k < rounds; k++) {
		s = symbols_new();
		for (size_t i = 0; i < n; i++) {
			int err;

			t0 = benchlib_now();
			f = symbols_open(s, (int32_t)getpid(), files[i], &err);
			if (i == 0)
				first += benchlib_now() - t0;
			else
				rest += benchlib_now() - t0;
			if (f && k == 0)
				syms += symbols_file_functions(f) +
					symbols_file_objects(f);
		}
		symbols_free(s);
	}
	/* Lookups in the last file that has functions. */
	s = symbols_new();
	for (size_t i = n; i-- > 0;) {
		int err;

		f = symbols_open(s, (int32_t)getpid(), files[i], &err);
		if (f && symbols_file_functions(f))
			break;
	}
	t0 = benchlib_now();
	for (uint64_t a = 0; f && a < BENCH_LOOKUPS; a++)
		sink += symbols_function(f, 0x1000 + a * 7, &off, &start) != NULL;
	lookup_ns = (benchlib_now() - t0) * 1e9 / BENCH_LOOKUPS;
	symbols_free(s);
	printf("bench-symbols-open: %zu files, %zu symbols kept, %d rounds\n",
	       n, syms, rounds);
	printf("  first file of a round   %8.2f ms\n", first * 1e3 / rounds);
	printf("  other files             %8.2f ms each\n",
	       n > 1 ? rest * 1e3 / rounds / (double)(n - 1) : 0.0);
	printf("  build id, first check   %8.2f ms a file (the first starts "
	       "its helper)\n", n ? idcheck * 1e3 / (double)n : 0.0);
	printf("  symbols_function        %8.1f ns per lookup (%llu found)\n",
	       lookup_ns, (unsigned long long)sink);
	maps_free(m);
	return 0;
}
