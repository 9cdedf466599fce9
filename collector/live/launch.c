/* Main thread.  See launch.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"

static void
launch_child(int go_rd, int err_wr, char *const argv[],
	     const sigset_t *child_mask)
{
	char byte;
	int err;

	/* Die with memtop rather than run on unwatched. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigprocmask(SIG_SETMASK, child_mask, NULL);
	/* EOF (memtop closed the pipe) is the go signal. */
	while (read(go_rd, &byte, 1) < 0 && errno == EINTR)
		;
	close(go_rd);
	execvp(argv[0], argv);
	err = errno;
	(void)!write(err_wr, &err, sizeof(err));
	_exit(127);
}

int
launch_prepare(struct launch *l, char *const argv[],
	       const sigset_t *child_mask)
{
	int go[2], err[2];
	pid_t pid;
	int ret;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		ret = -errno;
		goto out_go;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto out_err;
	}
	if (pid == 0) {
		close(go[1]);
		close(err[0]);
		launch_child(go[0], err[1], argv, child_mask);
	}
	close(go[0]);
	close(err[1]);
	l->pid = pid;
	l->go_fd = go[1];
	l->err_fd = err[0];
	return 0;

out_err:
	close(err[0]);
	close(err[1]);
out_go:
	close(go[0]);
	close(go[1]);
	return ret;
}

int
launch_go(struct launch *l)
{
	int child_errno = 0;
	ssize_t n;

	close(l->go_fd);
	l->go_fd = -1;
	do {
		n = read(l->err_fd, &child_errno, sizeof(child_errno));
	} while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == sizeof(child_errno)) {
		waitpid(l->pid, NULL, 0);
		return -child_errno;
	}
	return 0;
}

void
launch_abort(struct launch *l)
{
	if (l->pid <= 0)
		return;
	kill(l->pid, SIGKILL);
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->go_fd = l->err_fd = -1;
	waitpid(l->pid, NULL, 0);
	l->pid = -1;
}
