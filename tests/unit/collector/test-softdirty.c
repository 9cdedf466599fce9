#include "config.h"

/*
 * collector/sources/softdirty.c: the probe agrees with pagemap's bit 55
 * read here on a page this test wrote (the oracle), MEMTOP_SOFTDIRTY=0
 * makes it refuse, a re-arm of this process succeeds (and, where the
 * kernel keeps soft-dirty bits, clears the page's bit until it is written
 * again), a gone pid is -ENOENT, and refusals carry their fix.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "softdirty.h"
#include "testlib.h"

static int
bit55(volatile char *p)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, &e, sizeof(e), (off_t)((uintptr_t)p / 4096 * 8));
	close(fd);
	return n == 8 ? (int)((e >> 55) & 1) : -1;
}

int
main(void)
{
	volatile char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char why[300];
	int has;

	if (p == MAP_FAILED)
		test_skip("mmap failed");
	p[0] = 1;
	has = bit55(p);
	if (has < 0)
		test_skip("/proc/self/pagemap not readable");
	check_eq_i64(softdirty_probe(why, sizeof(why)), has ? 0 : -EOPNOTSUPP);
	if (!has)
		check(strstr(why, "CONFIG_MEM_SOFT_DIRTY") != NULL);

	check_eq_i64(softdirty_clear(getpid()), 0);
	if (has) {
		check_eq_i64(bit55(p), 0);
		p[0] = 2;
		check_eq_i64(bit55(p), 1);
	}
	/* pid_max is at most 2^22: this one cannot exist. */
	check_eq_i64(softdirty_clear(1 << 23), -ENOENT);

	setenv("MEMTOP_SOFTDIRTY", "0", 1);
	check_eq_i64(softdirty_probe(why, sizeof(why)), -EOPNOTSUPP);

	softdirty_explain(EACCES, 42, why, sizeof(why));
	check(strstr(why, "/proc/42/clear_refs") != NULL);
	check(strstr(why, "CAP_SYS_PTRACE") != NULL);
	return test_result();
}
