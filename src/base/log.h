/*
 * Diagnostics file (--log FILE).  Any thread may log: each line is one
 * write() on an O_APPEND descriptor, so lines from the UI and collector
 * threads never interleave.  Only log_error() writes to the terminal
 * (standard error).
 *
 * Line format: "SECONDS [THREAD/TID] MESSAGE\n", SECONDS on CLOCK_MONOTONIC
 * since log_open(), control characters in MESSAGE escaped (\n, \t, \xNN).
 */
#ifndef MEMTOP_LOG_H
#define MEMTOP_LOG_H

#include <stdint.h>

/*
 * Opens (creating, appending) path.  Call before other threads start;
 * a second call replaces the file.  0 or -errno (the old file stays open
 * on failure).
 */
int log_open(const char *path);
/* After other threads are joined.  Idempotent. */
void log_close(void);
/* printf-like; a no-op when no log is open. */
void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * An error for the user: "memtop: MESSAGE" as exactly one line on
 * standard error, control characters escaped as in the log (a path with
 * a newline or an escape sequence cannot split the line or drive the
 * terminal), and the same message in the log when one is open.
 */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Rate limit for hot-path warnings: at most `burst` messages per
 * `interval_ms`; the first call after a window with suppressed messages
 * logs "N messages suppressed".  One struct per call site, used by one
 * thread only.  Initialise with LOG_RATELIMIT_INIT.
 */
struct log_ratelimit {
	unsigned interval_ms;
	unsigned burst;
	unsigned count;		/* calls in the current window */
	uint64_t window_start;	/* CLOCK_MONOTONIC ns; 0 = no window yet */
};

#define LOG_RATELIMIT_INIT(interval, max_burst) \
	{ .interval_ms = (interval), .burst = (max_burst) }

void log_ratelimited(struct log_ratelimit *rl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
