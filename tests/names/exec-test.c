/*
 * The exec test program (e2e-names-exec.sh).  Image 1 maps DIR/before.bin
 * at EXEC_TEST_ADDR and faults a few of its pages, then exec's image 2
 * (this program again, "--after"): same pid, new address space.  Image 2
 * maps DIR/after.bin inside where before.bin was, faults all of it, writes
 * the report and lingers, so memtop sees the new pages while the process
 * lives.  The fixed address (MAP_FIXED_NOREPLACE) makes the overlap
 * certain; it is far from where the kernel puts anything else.
 *
 * Both images run without address randomisation (the program first
 * re-exec's itself with ADDR_NO_RANDOMIZE, which exec keeps), so image 2
 * lays out its executable, libraries and stack where image 1 had them:
 * none of its new pages falls outside image 1's regions (image 1 grows a
 * heap for image 2's stdio buffers to land in), and only the exec itself
 * can tell memtop that the old regions are stale.
 *
 *   exec-test --dir DIR --report FILE [--linger-ms N] [--after]
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <time.h>
#include <unistd.h>

#define EXEC_TEST_ADDR		0x200000000000ull
#define EXEC_TEST_PAGE		4096ull
#define EXEC_TEST_BEFORE_PAGES	64	/* before.bin, 8 of them touched */
#define EXEC_TEST_AFTER_AT	32	/* after.bin's first page, in pages */
#define EXEC_TEST_AFTER_PAGES	16

static void
exec_test_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Maps pages of a new file path at addr (exactly there) and writes to the
 * first touch of them, one fault each.  Exits on failure. */
static void
exec_test_map(const char *path, uint64_t addr, int pages, int touch)
{
	size_t len = (size_t)pages * EXEC_TEST_PAGE;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	volatile char *p;

	if (fd < 0 || ftruncate(fd, (off_t)len) != 0) {
		perror(path);
		exit(1);
	}
	p = mmap((void *)(uintptr_t)addr, len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	if (p == MAP_FAILED || (uint64_t)(uintptr_t)p != addr) {
		fprintf(stderr, "exec-test: mmap %s at %#llx failed\n", path,
			(unsigned long long)addr);
		exit(1);
	}
	close(fd);
	for (int i = 0; i < touch; i++)
		p[(size_t)i * EXEC_TEST_PAGE] = (char)i;
}

int
main(int argc, char **argv)
{
	const char *dir = NULL, *report = NULL, *linger = "2000";
	char before[4096], after[4096];
	int is_after = 0, pers;
	uint64_t at;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--report") == 0 && i + 1 < argc)
			report = argv[++i];
		else if (strcmp(argv[i], "--linger-ms") == 0 && i + 1 < argc)
			linger = argv[++i];
		else if (strcmp(argv[i], "--after") == 0)
			is_after = 1;
	}
	if (!dir || !report) {
		fprintf(stderr, "usage: exec-test --dir DIR --report FILE "
			"[--linger-ms N] [--after]\n");
		return 2;
	}
	pers = personality(0xffffffff);
	if (pers != -1 && !(pers & ADDR_NO_RANDOMIZE) &&
	    personality((unsigned long)pers | ADDR_NO_RANDOMIZE) != -1) {
		execv("/proc/self/exe", argv);
		perror("exec-test: exec");
		return 1;
	}
	snprintf(before, sizeof(before), "%s/before.bin", dir);
	snprintf(after, sizeof(after), "%s/after.bin", dir);
	if (!is_after) {
		volatile char *heap = malloc(64 << 10);

		for (size_t i = 0; heap && i < 64 << 10; i += 4096)
			heap[i] = 1;
		exec_test_map(before, EXEC_TEST_ADDR, EXEC_TEST_BEFORE_PAGES, 8);
		/* Long enough for memtop to read these maps (a frame), well
		 * under NAMES_REFRESH_MS: the old regions are fresh at the
		 * exec. */
		exec_test_sleep_ms(400);
		execl("/proc/self/exe", argv[0], "--dir", dir, "--report",
		      report, "--linger-ms", linger, "--after", (char *)NULL);
		perror("exec-test: exec");
		return 1;
	}
	at = EXEC_TEST_ADDR + EXEC_TEST_AFTER_AT * EXEC_TEST_PAGE;
	exec_test_map(after, at, EXEC_TEST_AFTER_PAGES,
		      EXEC_TEST_AFTER_PAGES);
	f = fopen(report, "w");
	if (!f) {
		perror(report);
		return 1;
	}
	fprintf(f, "{\"pid\": %d, \"before\": \"%s\", \"after\": \"%s\", "
		"\"addr\": \"%#llx\", \"pages\": %d}\n", (int)getpid(), before,
		after, (unsigned long long)at, EXEC_TEST_AFTER_PAGES);
	fclose(f);
	exec_test_sleep_ms(atol(linger));
	return 0;
}
