/*
 * Launching a command held before exec: fork, the child waits on a pipe
 * until memtop has opened its events (enable_on_exec), then execs.
 * Main thread.
 */
#ifndef MEMTOP_LAUNCH_H
#define MEMTOP_LAUNCH_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

struct launch {
	pid_t pid;
	int go_fd;	/* write end: closing it lets the child exec */
	int err_fd;	/* read end: errno from a failed exec, EOF on success */
};

/*
 * Forks the child with the signal mask `child_mask` restored and default
 * dispositions.  0 or -errno.
 */
int launch_prepare(struct launch *l, char *const argv[],
		   const sigset_t *child_mask);
/*
 * Releases the child and waits until it has exec'd.  0, or -errno of the
 * failed exec (the child then exits 127 and is reaped here).
 */
int launch_go(struct launch *l);
/* Kills (SIGKILL) and reaps a child that was never released. */
void launch_abort(struct launch *l);

#endif
