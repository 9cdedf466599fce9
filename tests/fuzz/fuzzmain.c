#include "config.h"

/*
 * main() of the fuzz targets when they are not libFuzzer binaries: file
 * and corpus replay, then the target's random inputs (tests/fuzz/fuzzmain.h).
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzzmain.h"

static unsigned long fuzz_inputs, fuzz_files;

/* One input through LLVMFuzzerTestOneInput(), from an exact-size copy. */
static void
fuzz_run(const uint8_t *data, size_t size)
{
	uint8_t *exact = malloc(size ? size : 1);

	if (!exact) {
		fprintf(stderr, "%s: out of memory\n", fuzz_target.name);
		exit(1);
	}
	memcpy(exact, data, size);
	LLVMFuzzerTestOneInput(exact, size);
	free(exact);
	fuzz_inputs++;
}

static int
fuzz_file(const char *path)
{
	struct stat st;
	uint8_t *buf;
	size_t got;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st) < 0) {
		fprintf(stderr, "%s: %s: %s\n", fuzz_target.name, path,
			strerror(errno));
		if (f)
			fclose(f);
		return 1;
	}
	buf = malloc((size_t)st.st_size + 1);
	got = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
	fclose(f);
	if (!buf) {
		fprintf(stderr, "%s: %s: out of memory\n", fuzz_target.name,
			path);
		return 1;
	}
	fuzz_run(buf, got);
	if (fuzz_target.variants)
		fuzz_target.variants(buf, got, fuzz_run);
	free(buf);
	fuzz_files++;
	return 0;
}

static int
fuzz_path(const char *path)
{
	struct dirent **names;
	struct stat st;
	int n, err = 0;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return fuzz_file(path);
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "%s: %s: %s\n", fuzz_target.name, path,
			strerror(errno));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char full[4096];

		if (names[i]->d_name[0] != '.' &&
		    snprintf(full, sizeof(full), "%s/%s", path,
			     names[i]->d_name) < (int)sizeof(full))
			err |= fuzz_path(full);
		free(names[i]);
	}
	free(names);
	return err;
}

static void
fuzz_random(void)
{
	uint64_t x = fuzz_target.seed;
	uint8_t *buf;

	if (!fuzz_target.generate || fuzz_target.n_random == 0)
		return;
	buf = malloc(fuzz_target.random_max);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", fuzz_target.name);
		exit(1);
	}
	for (unsigned i = 0; i < fuzz_target.n_random; i++)
		fuzz_run(buf, fuzz_target.generate(&x, buf,
						   fuzz_target.random_max));
	free(buf);
}

int
main(int argc, char **argv)
{
	int err = 0;

	if (argc < 2 && fuzz_target.need_files) {
		fprintf(stderr, "usage: %s DIR|FILE...\n", fuzz_target.name);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		err |= fuzz_path(argv[i]);
	fuzz_random();
	printf("%s: %lu files, %lu inputs, no invariant broken\n",
	       fuzz_target.name, fuzz_files, fuzz_inputs);
	return err;
}
