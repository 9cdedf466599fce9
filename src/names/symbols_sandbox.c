/*
 * The symbols helper: a child process that parses ELF files for the
 * collector (sandbox.c: how it is forked, confined, and ended when it
 * fails).  See symbols_int.h.
 *
 * Each request is one descriptor passed with SCM_RIGHTS on its socket;
 * the answer is the file's tables (symbols_wire.c).  The helper may open
 * separate debug files read-only (SANDBOX_OPENS).
 *
 * The collector waits at most MEMTOP_SYMBOLS_TIMEOUT_MS (default
 * SYMBOLS_TIMEOUT_MS) per file.  A helper that crashes, hangs or answers
 * nonsense is killed, reaped and counted, and the next file starts a new
 * one; the file it choked on stays unnamed ([unknown] regions).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox_int.h"
#include "symbols_int.h"

#define SYMBOLS_TIMEOUT_MS	1000

struct symbols_sandbox {
	struct sandbox sb;
};

static void symbols_helper_serve(void) __attribute__((noreturn));

/* Started by the first file, or early (symbols_sandbox_prestart). */
struct symbols_sandbox *
symbols_sandbox_new(void)
{
	struct symbols_sandbox *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	sandbox_init(&s->sb, "symbols helper", symbols_helper_serve,
		     SANDBOX_OPENS, "MEMTOP_SYMBOLS_TIMEOUT_MS",
		     SYMBOLS_TIMEOUT_MS);
	return s;
}

void
symbols_sandbox_free(struct symbols_sandbox *s)
{
	if (!s)
		return;
	sandbox_fini(&s->sb);
	free(s);
}

/* One request: "F" for the whole table, "I" for the build id. */
static int
symbols_sandbox_ask(struct symbols_sandbox *s, int fd, const char *what,
		    struct symbols_table *t)
{
	int ret, status = 0;

	if (sandbox_hand(&s->sb, fd, what, 1) < 0)
		return -EIO;
	ret = symbols_wire_recv(s->sb.sock, sandbox_deadline(&s->sb),
				&status, t);
	if (ret < 0) {
		sandbox_failed(&s->sb, sandbox_why(ret));
		return -EIO;
	}
	return status;
}

int
symbols_sandbox_parse(struct symbols_sandbox *s, int fd,
		      struct symbols_table *t)
{
	return symbols_sandbox_ask(s, fd, "F", t);
}

int
symbols_sandbox_build_id(struct symbols_sandbox *s, int fd,
			 struct symbols_table *t)
{
	return symbols_sandbox_ask(s, fd, "I", t);
}

/* Starts the helper now: memtop builds its names before the collector
 * thread runs, so the fork happens in a process of one thread, and not
 * while a frame waits.  When that fails, the first file tries again. */
void
symbols_sandbox_prestart(struct symbols_sandbox *s)
{
	if (s->sb.pid == 0)
		sandbox_start(&s->sb);
}

void
symbols_sandbox_timeout(struct symbols_sandbox *s, unsigned ms)
{
	s->sb.timeout_ns = (uint64_t)ms * 1000000ull;
}

void
symbols_sandbox_stats(const struct symbols_sandbox *s,
		      struct sandbox_stats *st)
{
	*st = s->sb.stats;
}

/* The helper: one descriptor a request ("F" or "I"), one answer each. */
static void
symbols_helper_serve(void)
{
	for (;;) {
		struct symbols_table t;
		char byte;
		int fd, ret;

		if (sandbox_recv(SANDBOX_SOCK, &byte, 1, &fd) < 0 || fd < 0)
			_exit(0);
		memset(&t, 0, sizeof(t));
		ret = symbols_parse(fd, &t, byte == 'I');
		if (symbols_wire_send(SANDBOX_SOCK, ret, &t) < 0)
			_exit(0);
		symbols_table_free(&t);
	}
}
