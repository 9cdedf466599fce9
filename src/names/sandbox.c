/*
 * The helper processes' shared plumbing.  See sandbox_int.h.
 * Collector thread only (or the main thread before it starts).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base.h"
#include "env.h"
#include "sandbox_int.h"

#define SANDBOX_NOBODY	65534

void
sandbox_init(struct sandbox *sb, const char *what, void (*serve)(void),
	     unsigned seccomp, const char *timeout_env, unsigned default_ms)
{
	struct passwd pw, *res = NULL;
	char buf[1024];
	unsigned long ms;

	memset(sb, 0, sizeof(*sb));
	sb->what = what;
	sb->serve = serve;
	sb->seccomp = seccomp;
	sb->sock = -1;
	sb->uid = SANDBOX_NOBODY;
	sb->gid = SANDBOX_NOBODY;
	if (getpwnam_r("nobody", &pw, buf, sizeof(buf), &res) == 0 && res) {
		sb->uid = pw.pw_uid;
		sb->gid = pw.pw_gid;
	}
	if (!env_ulong(timeout_env, 1, 600000, &ms))
		ms = default_ms;
	sb->timeout_ns = (uint64_t)ms * 1000000ull;
	sb->rl = (struct log_ratelimit)LOG_RATELIMIT_INIT(10000, 5);
}

void
sandbox_stop(struct sandbox *sb)
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
	sb->rb.off = sb->rb.len = 0;	/* the dead one's bytes */
}

void
sandbox_fini(struct sandbox *sb)
{
	sandbox_stop(sb);
	free(sb->rb.buf);
	sb->rb.buf = NULL;
	sb->rb.cap = 0;
}

/* Everything before the first request is read; _exit(2) if any step
 * fails. */
static void
sandbox_confine(const struct sandbox *sb, int sock, pid_t parent)
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
	    dup2(null, 2) < 0 || dup2(sock, SANDBOX_SOCK) < 0)
		_exit(2);
	close_range(SANDBOX_SOCK + 1, ~0u, 0);
	setrlimit(RLIMIT_CORE, &no_core);
	if (getuid() == 0 || geteuid() == 0) {
		if (setgroups(0, NULL) < 0 || setgid(sb->gid) < 0 ||
		    setuid(sb->uid) < 0 || getuid() != sb->uid ||
		    geteuid() != sb->uid)
			_exit(2);
	}
	/* After setuid, which clears it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(2);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    sandbox_seccomp_install(sb->seccomp) < 0)
		_exit(2);
}

int
sandbox_start(struct sandbox *sb)
{
	pid_t parent = getpid(), pid;
	int sv[2];

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
		sandbox_confine(sb, sv[1], parent);
		sb->serve();
		_exit(0);
	}
	close(sv[1]);
	sb->pid = pid;
	sb->sock = sv[0];
	sb->stats.starts++;
	sb->stats.pid = pid;
	log_msg("%s started: pid %d", sb->what, (int)pid);
	return 0;
}

void
sandbox_failed(struct sandbox *sb, const char *why)
{
	sb->stats.failures++;
	log_ratelimited(&sb->rl, "%s %d %s: killed, %llu failures", sb->what,
			(int)sb->stats.pid, why,
			(unsigned long long)sb->stats.failures);
	sandbox_stop(sb);
}

void
sandbox_reap(struct sandbox *sb)
{
	if (sb->pid > 0 && waitpid(sb->pid, NULL, WNOHANG) == sb->pid) {
		sb->pid = 0;	/* reaped: sandbox_stop must not wait */
		sandbox_failed(sb, "died while idle");
	}
}

const char *
sandbox_why(int err)
{
	return err == -ETIMEDOUT ? "timed out" :
	       err == -EPROTO ? "sent a bad answer" : "died";
}

/* Room for one descriptor, both ways. */
union sandbox_cmsg {
	struct cmsghdr h;
	char buf[CMSG_SPACE(sizeof(int))];
};

/* The bytes of buf with fd (when >= 0) attached. */
static int
sandbox_send_fd(int sock, int fd, const void *buf, size_t len,
		uint64_t deadline_ns)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	union sandbox_cmsg u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t n;

	memset(&u, 0, sizeof(u));
	if (fd >= 0) {
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT)) < 0) {
		struct pollfd pfd = { .fd = sock, .events = POLLOUT };
		uint64_t now = base_now_ns();

		if (errno != EINTR && errno != EAGAIN)
			return -EPIPE;
		if (now >= deadline_ns)
			return -ETIMEDOUT;
		(void)poll(&pfd, 1, (int)((deadline_ns - now) / 1000000 + 1));
	}
	/* The descriptor went with the first bytes; the rest follow. */
	return sandbox_write_by(sock, deadline_ns, (const char *)buf + n,
				len - (size_t)n);
}

/* Starts a helper when none runs and sends; -errno. */
static int
sandbox_hand_once(struct sandbox *sb, int fd, const void *buf, size_t len)
{
	int ret = 0;

	if (sb->pid == 0)
		ret = sandbox_start(sb);
	if (ret < 0) {
		sb->stats.failures++;
		log_ratelimited(&sb->rl, "%s: cannot start: %s", sb->what,
				strerror(-ret));
		return ret;
	}
	ret = sandbox_send_fd(sb->sock, fd, buf, len, sandbox_deadline(sb));
	if (ret < 0)
		sandbox_failed(sb, "gone while idle");
	return ret;
}

int
sandbox_hand(struct sandbox *sb, int fd, const void *buf, size_t len)
{
	if (sandbox_hand_once(sb, fd, buf, len) == 0 ||
	    sandbox_hand_once(sb, fd, buf, len) == 0)
		return 0;
	return -EIO;
}

uint64_t
sandbox_deadline(const struct sandbox *sb)
{
	return base_now_ns() + sb->timeout_ns;
}

int
sandbox_write(int sock, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(sock, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* All of p moved through sock by deadline_ns, out (send) or in (recv). */
static int
sandbox_xfer(int sock, uint64_t deadline_ns, char *p, size_t len, bool out)
{
	while (len) {
		uint64_t now = base_now_ns();
		struct pollfd pfd = { .fd = sock,
				      .events = out ? POLLOUT : POLLIN };
		/* What the socket can take or give needs no poll. */
		ssize_t n = out ? send(sock, p, len,
				       MSG_NOSIGNAL | MSG_DONTWAIT) :
				  recv(sock, p, len, MSG_DONTWAIT);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			return -EPIPE;
		/* The helper does not answer or read: it may hang. */
		if (now >= deadline_ns)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)((deadline_ns - now) / 1000000 + 1)) < 0 &&
		    errno != EINTR)
			return -EPIPE;
	}
	return 0;
}

int
sandbox_write_by(int sock, uint64_t deadline_ns, const void *buf, size_t len)
{
	return sandbox_xfer(sock, deadline_ns, (char *)buf, len, true);
}

int
sandbox_read(int sock, uint64_t deadline_ns, void *buf, size_t len)
{
	return sandbox_xfer(sock, deadline_ns, buf, len, false);
}

int
sandbox_recv(int sock, void *buf, size_t len, int *fd)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	union sandbox_cmsg u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0 || (msg.msg_flags & MSG_CTRUNC))
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	else if (c)
		return -1;
	for (char *p = (char *)buf + n; (size_t)(p - (char *)buf) < len;) {
		ssize_t m = recv(sock, p, len - (size_t)(p - (char *)buf), 0);

		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0) {
			if (*fd >= 0)
				close(*fd);
			*fd = -1;
			return -1;
		}
		p += m;
	}
	return 0;
}

#define SANDBOX_RBUF (256u << 10)

int
sandbox_read_buf(struct sandbox *sb, uint64_t deadline_ns, void *buf,
		 size_t len)
{
	struct sandbox_rbuf *rb = &sb->rb;
	unsigned char *p = buf;

	if (!rb->buf) {
		rb->buf = malloc(SANDBOX_RBUF);
		if (!rb->buf)
			return -ENOMEM;
		rb->cap = SANDBOX_RBUF;
	}
	while (len) {
		size_t have = rb->len - rb->off;
		uint64_t now;
		ssize_t n;

		if (have) {
			size_t take = have < len ? have : len;

			memcpy(p, rb->buf + rb->off, take);
			rb->off += take;
			p += take;
			len -= take;
			continue;
		}
		rb->off = rb->len = 0;
		n = recv(sb->sock, rb->buf, rb->cap, MSG_DONTWAIT);
		if (n > 0) {
			rb->len = (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			return -EPIPE;
		now = base_now_ns();
		if (now >= deadline_ns)
			return -ETIMEDOUT;
		/* Whatever arrives first: sandbox_read waits for it. */
		if (sandbox_read(sb->sock, deadline_ns, rb->buf, 1) < 0)
			return base_now_ns() >= deadline_ns ? -ETIMEDOUT :
								 -EPIPE;
		rb->len = 1;
	}
	return 0;
}
