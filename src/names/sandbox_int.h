/*
 * Inside the names room: a helper process that parses untrusted files
 * (ELF symbols, symbols_sandbox.c; DWARF unwinding, unwind.c) for the
 * collector, so that a crafted file (memtop -a as root reads the binaries
 * of every container) can at worst crash or hang a process that holds
 * nothing.  sandbox.c holds what both helpers share: the fork, the
 * confinement, the descriptor passing, the reads against a deadline, and
 * killing, reaping and counting a helper that failed.
 *
 * The child is forked (no exec: the memtop binary may not be readable by
 * nobody) and, before it reads anything: leaves the terminal's session,
 * keeps only its socket, on descriptor 3 (standard streams on /dev/null),
 * drops to nobody when it runs as root (setgroups, setgid, setuid), dies
 * with its parent, sets no_new_privs and installs the seccomp filter of
 * sandbox_seccomp.c; then it runs its serve function.
 * Collector thread only (or the main thread before it starts).
 */
#ifndef MEMTOP_SANDBOX_INT_H
#define MEMTOP_SANDBOX_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "log.h"

/* The helper's socket, after the confinement. */
#define SANDBOX_SOCK	3

/* Seccomp flags: what the filter allows beyond reads and maps. */
#define SANDBOX_OPENS	1u	/* read-only opens (separate debug files) */

struct sandbox_stats {
	uint64_t starts;	/* helper processes started */
	uint64_t failures;	/* crashed, hung, or bad answers */
	int32_t pid;		/* the running helper, 0 when none */
};

/* What the collector read ahead of a caller (sandbox_read_buf). */
struct sandbox_rbuf {
	unsigned char *buf;
	size_t off, len, cap;
};

struct sandbox {
	const char *what;	/* "symbols helper", for the log */
	/* The child's work: reads requests on SANDBOX_SOCK, never
	 * returns. */
	void (*serve)(void);
	unsigned seccomp;	/* SANDBOX_* flags */
	pid_t pid;		/* 0: not running */
	int sock;
	uid_t uid;		/* whom the helper becomes when root */
	gid_t gid;
	uint64_t timeout_ns;
	struct sandbox_stats stats;
	struct log_ratelimit rl;
	struct sandbox_rbuf rb;	/* emptied when the helper ends */
};

/*
 * Fills sb (no process yet): the timeout from the environment variable
 * timeout_env when it holds 1..600000 ms, else default_ms.
 */
void sandbox_init(struct sandbox *sb, const char *what, void (*serve)(void),
		  unsigned seccomp, const char *timeout_env,
		  unsigned default_ms);
/* Forks the helper.  0 or -errno. */
int sandbox_start(struct sandbox *sb);
/* Ends the helper, if any: SIGKILL, and reaped. */
void sandbox_stop(struct sandbox *sb);
/* Counts and logs a failed helper (why: "timed out", ...), and ends it. */
void sandbox_failed(struct sandbox *sb, const char *why);
/* A helper that died while idle: reaped, counted, logged. */
void sandbox_reap(struct sandbox *sb);
/* The text for a failed read's result (-ETIMEDOUT, -EPROTO, ...). */
const char *sandbox_why(int err);
/*
 * Sends len bytes (at least 1) with fd attached (SCM_RIGHTS), starting
 * the helper when none runs; a helper found dead before it had them is
 * not the request's fault: one more try with a fresh one.  0, or -EIO
 * (counted, logged).
 */
int sandbox_hand(struct sandbox *sb, int fd, const void *buf, size_t len);
/* The deadline of a request sent now (CLOCK_MONOTONIC ns). */
uint64_t sandbox_deadline(const struct sandbox *sb);

/* All of buf on sock: 0 or -EPIPE. */
int sandbox_write(int sock, const void *buf, size_t len);
/* The collector's write: all of buf by deadline_ns (a helper that hangs
 * stops reading), 0, -ETIMEDOUT or -EPIPE. */
int sandbox_write_by(int sock, uint64_t deadline_ns, const void *buf,
		     size_t len);
/* len bytes from sock by deadline_ns: 0, -ETIMEDOUT or -EPIPE. */
int sandbox_read(int sock, uint64_t deadline_ns, void *buf, size_t len);
/*
 * sandbox_read through sb's read-ahead buffer: each recv takes whatever
 * the helper has written (a burst of answers in one call).  0, -ETIMEDOUT,
 * -EPIPE, -ENOMEM.
 */
int sandbox_read_buf(struct sandbox *sb, uint64_t deadline_ns, void *buf,
		     size_t len);
/* Frees sb's buffer (sandbox_stop empties it). */
void sandbox_fini(struct sandbox *sb);

/*
 * The helper's side: len bytes of a request from sock, blocking, and the
 * descriptor that came with them into *fd (-1 when none).  0, or -1 at
 * EOF or on anything else.
 */
int sandbox_recv(int sock, void *buf, size_t len, int *fd);

/*
 * The helpers' seccomp filter (sandbox_seccomp.c): the system calls a
 * parse through libelf and libdw needs and nothing else; others kill the
 * process.  0 or -errno.
 */
int sandbox_seccomp_install(unsigned flags);

#endif
