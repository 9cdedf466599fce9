#include "config.h"

/*
 * damon-live: drives collector/sources/damon.c against the real DAMON
 * sysfs interface, inside the test guest only (tests/numa/
 * scenarios-access.sh): a vaddr kdamond on PID, then SNAPS snapshots one
 * second apart, each region printed as "REGION START END NR_ACCESSES
 * AGE" (hex addresses) after a "SNAP I" line; then the kdamond is stopped
 * and removed.  Exits 0; 1 with one line when DAMON refuses or fails
 * (another user's kdamond: the refusal itself is the message).
 *
 * Usage: damon-live PID SNAPS
 */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "damon.h"

int
main(int argc, char **argv)
{
	struct damon_region *regs = NULL;
	struct damon *d = NULL;
	size_t cap = 0;
	pid_t pid;
	char why[512];
	int snaps, n, rc = 0;

	if (argc != 3)
		return 2;
	pid = (pid_t)atoi(argv[1]);
	snaps = atoi(argv[2]);
	if (damon_start(&d, &(struct damon_opts){ .pids = &pid, .n_pids = 1,
			.sample_us = 5000, .aggr_us = 100000,
			.update_us = 1000000 }, why, sizeof(why)) < 0) {
		fprintf(stderr, "damon-live: %s\n", why);
		return 1;
	}
	printf("KDAMOND %d\n", (int)damon_kdamond_pid(d));
	for (int i = 0; i < snaps; i++) {
		sleep(1);
		n = damon_snapshot(d, &regs, &cap, why, sizeof(why));
		if (n < 0) {
			fprintf(stderr, "damon-live: %s\n", why);
			rc = 1;
			break;
		}
		printf("SNAP %d\n", i);
		for (int j = 0; j < n; j++)
			printf("REGION 0x%llx 0x%llx %u %u\n",
			       (unsigned long long)regs[j].start,
			       (unsigned long long)regs[j].end,
			       regs[j].nr_accesses, regs[j].age);
	}
	damon_stop(d);
	free(regs);
	return rc;
}
