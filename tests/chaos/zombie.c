#include "config.h"

/*
 * Zombies for the chaos tests.
 *
 *   zombie child  RUN_MS HOLD_S   forks a child that faults pages for
 *                                 RUN_MS and exits; the parent prints the
 *                                 child's pid and then sleeps HOLD_S without
 *                                 reaping it, so the child stays a zombie
 *                                 (state Z) that memtop -p CHILD watches.
 *   zombie leader RUN_MS          the main thread exits with pthread_exit()
 *                                 while a second thread faults pages for
 *                                 RUN_MS: /proc/PID shows the leader as Z
 *                                 while the process still runs.
 *
 * Both fault one fresh page every millisecond while running, and print a
 * line ("child PID" or "leader PID") on stdout, flushed, once it started.
 */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double
zombie_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
zombie_fault_for(long ms)
{
	double end = zombie_now() + (double)ms / 1000.0;
	volatile char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	while (zombie_now() < end) {
		p[0] = 1;
		madvise((void *)p, 4096, MADV_DONTNEED);
		usleep(1000);
	}
	munmap((void *)p, 4096);
}

static void *
zombie_worker(void *arg)
{
	zombie_fault_for(*(long *)arg);
	return NULL;
}

int
main(int argc, char **argv)
{
	static long run_ms;
	pthread_t t;
	pid_t pid;

	if (argc >= 3 && strcmp(argv[1], "child") == 0 && argc == 4) {
		run_ms = atol(argv[2]);
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			zombie_fault_for(run_ms);
			_exit(0);
		}
		printf("child %d\n", (int)pid);
		fflush(stdout);
		sleep((unsigned)atoi(argv[3]));
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "leader") == 0) {
		run_ms = atol(argv[2]);
		if (pthread_create(&t, NULL, zombie_worker, &run_ms) != 0)
			return 1;
		printf("leader %d\n", (int)getpid());
		fflush(stdout);
		pthread_exit(NULL);
	}
	fprintf(stderr, "usage: zombie child RUN_MS HOLD_S | "
		"zombie leader RUN_MS\n");
	return 2;
}
