#include "config.h"

/*
 * Diagnostics file.  Any thread may call log_msg(); log_open() and
 * log_close() run on the main thread while it is the only thread.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "log.h"

/* Longest message kept; longer ones end in "...". */
#define LOG_MSG_MAX 1024
/* Timestamp, tag, every byte escaped to 4 chars, "...", newline. */
#define LOG_LINE_MAX (96 + 4 * LOG_MSG_MAX + 8)

/*
 * The one global of the program (docs/design.md, "Conventions"): the
 * log must be reachable from any function without threading a handle
 * through every call.  It is written only while a single thread runs,
 * so readers need no lock.
 */
static struct {
	int fd;
	struct timespec start;
} log_state = { .fd = -1 };


int
log_open(const char *path)
{
	char first[96];
	int fd, len, ret;

	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* A file that opens but takes no writes (/proc/version, a full
	 * disk) would drop every line unseen: the first line proves it. */
	len = snprintf(first, sizeof(first), "0.000 [memtop/%d] memtop %s: "
		       "log opened\n", (int)getpid(), MEMTOP_VERSION);
	if (write(fd, first, (size_t)len) != len) {
		ret = errno ? -errno : -EIO;
		close(fd);
		return ret;
	}
	log_close();
	log_state.fd = fd;
	clock_gettime(CLOCK_MONOTONIC, &log_state.start);
	return 0;
}

void
log_close(void)
{
	if (log_state.fd >= 0)
		close(log_state.fd);
	log_state.fd = -1;
}

/*
 * Copies msg into out escaping bytes a terminal or a line-based reader
 * would misread: controls become \n, \t, \r or \xNN, and a backslash is
 * doubled so the escapes stay unambiguous.  Bytes >= 0x80 pass, so UTF-8
 * file names stay readable.  Returns the length written.
 */
static size_t
log_escape(char *out, size_t size, const char *msg)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		if (n + 4 >= size)
			break;
		if (*p == '\\') {
			out[n++] = '\\';
			out[n++] = '\\';
		} else if (*p == '\n' || *p == '\t' || *p == '\r') {
			out[n++] = '\\';
			out[n++] = *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
		} else if (*p < 0x20 || *p == 0x7f) {
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 0xf];
		} else {
			out[n++] = (char)*p;
		}
	}
	return n;
}

/*
 * Formats a message into msg; true when it was cut at LOG_MSG_MAX.
 * `what` names the caller in the text that replaces a bad format.
 */
static bool
log_format(char *msg, const char *what, const char *fmt, va_list ap)
{
	int len = vsnprintf(msg, LOG_MSG_MAX, fmt, ap);

	if (len < 0)
		snprintf(msg, LOG_MSG_MAX, "(bad %s format '%s')", what, fmt);
	return len >= LOG_MSG_MAX;
}

/*
 * Completes a line whose first n bytes (the prefix) are written: msg
 * escaped, "..." when it was cut, a newline.  size leaves room for every
 * byte escaped.  The line's length.
 */
static size_t
log_finish(char *line, size_t size, size_t n, const char *msg, bool cut)
{
	n += log_escape(line + n, size - n - 4, msg);
	if (cut) {
		memcpy(line + n, "...", 3);
		n += 3;
	}
	line[n++] = '\n';
	return n;
}

static void
log_vmsg(const char *fmt, va_list ap)
{
	char msg[LOG_MSG_MAX];
	char line[LOG_LINE_MAX];
	char comm[17] = "";
	struct timespec now;
	double secs;
	size_t n;
	bool cut;
	int fd = log_state.fd;

	if (fd < 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	secs = (double)(now.tv_sec - log_state.start.tv_sec) +
	       (double)(now.tv_nsec - log_state.start.tv_nsec) / 1e9;
	/* The thread name tells the UI thread from the collector. */
	if (prctl(PR_GET_NAME, comm, 0, 0, 0) != 0)
		strcpy(comm, "?");

	cut = log_format(msg, "log", fmt, ap);
	n = (size_t)snprintf(line, sizeof(line), "%.3f [%s/%d] ", secs, comm,
			     (int)gettid());
	/* The prefix is short; the clamp keeps room for "...\n" regardless. */
	if (n > sizeof(line) - 8)
		n = sizeof(line) - 8;
	n = log_finish(line, sizeof(line), n, msg, cut);

	/* One write per line: O_APPEND keeps concurrent lines whole. */
	while (write(fd, line, n) < 0 && errno == EINTR)
		;
}

void
log_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(fmt, ap);
	va_end(ap);
}

void
log_error(const char *fmt, ...)
{
	static const char prefix[] = "memtop: ";
	char msg[LOG_MSG_MAX];
	char line[sizeof(prefix) + 4 * LOG_MSG_MAX + 8];
	size_t n = sizeof(prefix) - 1;
	va_list ap;
	bool cut;

	va_start(ap, fmt);
	cut = log_format(msg, "error", fmt, ap);
	va_end(ap);
	memcpy(line, prefix, n);
	n = log_finish(line, sizeof(line), n, msg, cut);
	fwrite(line, 1, n, stderr);
	fflush(stderr);
	log_msg("error: %s", msg);
}

void
log_ratelimited(struct log_ratelimit *rl, const char *fmt, ...)
{
	uint64_t now;
	va_list ap;

	if (log_state.fd < 0)
		return;
	now = base_now_ns();
	if (rl->window_start == 0 ||
	    now - rl->window_start >= (uint64_t)rl->interval_ms * 1000000u) {
		if (rl->count > rl->burst)
			log_msg("%u messages suppressed",
				rl->count - rl->burst);
		rl->window_start = now ? now : 1;
		rl->count = 0;
	}
	if (rl->count < UINT_MAX)
		rl->count++;
	if (rl->count > rl->burst)
		return;
	va_start(ap, fmt);
	log_vmsg(fmt, ap);
	va_end(ap);
}
