/*
 * The symbols helper: a child process that parses ELF files for the
 * collector, so that a crafted file (memtop -a as root reads the binaries
 * of every container) can at worst crash or hang a process that holds
 * nothing.  See symbols_int.h.
 *
 * The child is forked by symbols_sandbox_new (no exec: the memtop binary
 * may not be readable by nobody; again after a failure, at the next file)
 * and, before it reads any file: leaves the terminal's session,
 * keeps only its socket (standard streams on /dev/null), drops to nobody
 * when it runs as root (setgroups, setgid, setuid), dies with its parent,
 * sets no_new_privs and installs the seccomp filter of
 * symbols_seccomp.c.  Each request is one descriptor passed with
 * SCM_RIGHTS on a socketpair; the answer is the file's tables
 * (symbols_wire.c).
 *
 * The collector waits at most MEMTOP_SYMBOLS_TIMEOUT_MS (default
 * SYMBOLS_TIMEOUT_MS) per file.  A helper that crashes, hangs or answers
 * nonsense is killed, reaped and counted, and the next file starts a new
 * one; the file it choked on stays unnamed ([unknown] regions).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grp.h>

#include "log.h"
#include "symbols_int.h"

#define SYMBOLS_TIMEOUT_MS	1000
#define SYMBOLS_NOBODY		65534

struct symbols_sandbox {
	pid_t pid;		/* 0: not running */
	int sock;
	uid_t uid;		/* whom the helper becomes when root */
	gid_t gid;
	uint64_t timeout_ns;
	struct symbols_sandbox_stats stats;
	struct log_ratelimit rl;
};

static int symbols_sandbox_start(struct symbols_sandbox *sb);

/* Starts the helper at once: memtop builds its names before the
 * collector thread runs, so the fork happens in a process of one thread,
 * and not while a frame waits.  When that fails, the first file tries
 * again. */
struct symbols_sandbox *
symbols_sandbox_new(void)
{
	struct symbols_sandbox *sb = calloc(1, sizeof(*sb));
	const char *env = getenv("MEMTOP_SYMBOLS_TIMEOUT_MS");
	struct passwd pw, *res = NULL;
	char buf[1024];
	long ms = SYMBOLS_TIMEOUT_MS;

	if (!sb)
		return NULL;
	sb->sock = -1;
	sb->uid = SYMBOLS_NOBODY;
	sb->gid = SYMBOLS_NOBODY;
	if (getpwnam_r("nobody", &pw, buf, sizeof(buf), &res) == 0 && res) {
		sb->uid = pw.pw_uid;
		sb->gid = pw.pw_gid;
	}
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);

		if (*end == '\0' && v > 0 && v <= 600000)
			ms = v;
	}
	sb->timeout_ns = (uint64_t)ms * 1000000ull;
	sb->rl = (struct log_ratelimit)LOG_RATELIMIT_INIT(10000, 5);
	/* Started by the first file, or early (symbols_sandbox_prestart). */
	return sb;
}

/* Ends the helper, if any: SIGKILL, and reaped. */
static void
symbols_sandbox_stop(struct symbols_sandbox *sb)
{
	if (sb->sock >= 0)
		close(sb->sock);
	sb->sock = -1;
	if (sb->pid > 0) {
		kill(sb->pid, SIGKILL);
		while (waitpid(sb->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	sb->pid = 0;
	sb->stats.pid = 0;
}

void
symbols_sandbox_free(struct symbols_sandbox *sb)
{
	if (!sb)
		return;
	symbols_sandbox_stop(sb);
	free(sb);
}

static int
symbols_sandbox_start(struct symbols_sandbox *sb)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (pid == 0) {
		close(sv[0]);
		symbols_helper_main(sv[1], sb->uid, sb->gid);
	}
	close(sv[1]);
	sb->pid = pid;
	sb->sock = sv[0];
	sb->stats.starts++;
	sb->stats.pid = pid;
	log_msg("symbols helper started: pid %d", (int)pid);
	return 0;
}

/* A one-byte message with room for one descriptor, both ways. */
struct symbols_fdmsg {
	char byte;
	struct iovec iov;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg;
};

static void
symbols_fdmsg_init(struct symbols_fdmsg *m)
{
	memset(m, 0, sizeof(*m));
	m->byte = 'F';
	m->iov.iov_base = &m->byte;
	m->iov.iov_len = 1;
	m->msg.msg_iov = &m->iov;
	m->msg.msg_iovlen = 1;
	m->msg.msg_control = m->u.buf;
	m->msg.msg_controllen = sizeof(m->u.buf);
}

/* Passes fd to the helper with a one-byte request. */
static int
symbols_sandbox_send_fd(int sock, int fd)
{
	struct symbols_fdmsg m;
	struct cmsghdr *c;

	symbols_fdmsg_init(&m);
	c = CMSG_FIRSTHDR(&m.msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	while (sendmsg(sock, &m.msg, MSG_NOSIGNAL) < 0) {
		if (errno != EINTR)
			return -EPIPE;
	}
	return 0;
}

/* Counts and logs a failed helper, and ends it. */
static void
symbols_sandbox_failed(struct symbols_sandbox *sb, const char *why)
{
	sb->stats.failures++;
	log_ratelimited(&sb->rl, "symbols helper %d %s: killed, %llu failures",
			(int)sb->pid, why,
			(unsigned long long)sb->stats.failures);
	symbols_sandbox_stop(sb);
}

/* Hands fd to a running helper, starting one when none runs. */
static int
symbols_sandbox_hand(struct symbols_sandbox *sb, int fd)
{
	int ret = 0;

	if (sb->pid == 0)
		ret = symbols_sandbox_start(sb);
	if (ret < 0) {
		sb->stats.failures++;
		log_ratelimited(&sb->rl, "symbols helper: cannot start: %s",
				strerror(-ret));
		return ret;
	}
	ret = symbols_sandbox_send_fd(sb->sock, fd);
	if (ret < 0)
		symbols_sandbox_failed(sb, "gone while idle");
	return ret;
}

int
symbols_sandbox_parse(struct symbols_sandbox *sb, int fd,
		      struct symbols_table *t)
{
	int ret, status = 0;

	/* A helper found dead before it had this file is not the file's
	 * fault: one more try with a fresh one. */
	ret = symbols_sandbox_hand(sb, fd);
	if (ret < 0)
		ret = symbols_sandbox_hand(sb, fd);
	if (ret < 0)
		return -EIO;
	ret = symbols_wire_recv(sb->sock, symbols_now_ns() + sb->timeout_ns,
				&status, t);
	if (ret < 0) {
		symbols_sandbox_failed(sb, ret == -ETIMEDOUT ? "timed out" :
				       ret == -EPROTO ? "sent a bad answer" :
				       "died");
		return -EIO;
	}
	return status;
}

void
symbols_sandbox_prestart(struct symbols_sandbox *sb)
{
	if (sb->pid == 0)
		symbols_sandbox_start(sb);	/* else at the first file */
}

void
symbols_sandbox_timeout(struct symbols_sandbox *sb, unsigned ms)
{
	sb->timeout_ns = (uint64_t)ms * 1000000ull;
}

void
symbols_sandbox_stats(const struct symbols_sandbox *sb,
		      struct symbols_sandbox_stats *st)
{
	*st = sb->stats;
}

/* Receives one descriptor; -1 at EOF or on anything else. */
static int
symbols_helper_recv_fd(int sock)
{
	struct symbols_fdmsg m;
	struct cmsghdr *c;
	ssize_t n;
	int fd;

	symbols_fdmsg_init(&m);
	do
		n = recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	c = n == 1 ? CMSG_FIRSTHDR(&m.msg) : NULL;
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Everything before the first file is read; _exit(2) if any step fails. */
static void
symbols_helper_confine(int sock, uid_t uid, gid_t gid, pid_t parent)
{
	struct rlimit no_core = { 0, 0 };
	sigset_t all;
	int null;

	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	setsid();
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0 || dup2(sock, 3) < 0)
		_exit(2);
	close_range(4, ~0u, 0);
	setrlimit(RLIMIT_CORE, &no_core);
	if (getuid() == 0 || geteuid() == 0) {
		if (setgroups(0, NULL) < 0 || setgid(gid) < 0 ||
		    setuid(uid) < 0 || getuid() != uid || geteuid() != uid)
			_exit(2);
	}
	/* After setuid, which clears it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(2);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    symbols_seccomp_install() < 0)
		_exit(2);
}

void
symbols_helper_main(int sock, uid_t uid, gid_t gid)
{
	symbols_helper_confine(sock, uid, gid, getppid());
	for (;;) {
		struct symbols_table t;
		int fd = symbols_helper_recv_fd(3), ret;

		if (fd < 0)
			_exit(0);
		memset(&t, 0, sizeof(t));
		ret = symbols_parse(fd, &t);
		if (symbols_wire_send(3, ret, &t) < 0)
			_exit(0);
		symbols_table_free(&t);
	}
}
