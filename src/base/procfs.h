/* Small /proc readers.  Any thread; no state. */
#ifndef MEMTOP_PROCFS_H
#define MEMTOP_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The integer in a file such as /proc/sys/kernel/perf_event_paranoid, or
 * fallback when unreadable. */
int procfs_read_int(const char *path, int fallback);
/* Real uid owning pid, or -1. */
int procfs_pid_uid(pid_t pid);
/* /proc/PID/comm into buf (at most 16 bytes with NUL); 0 or -errno. */
int procfs_comm(pid_t pid, char *buf, size_t len);
/* Process state letter from /proc/PID/stat ('R', 'S', 'Z', ...), or 0 when
 * the process is gone. */
char procfs_state(pid_t pid);
/*
 * When pid started, in clock ticks after boot (/proc/PID/stat field 22,
 * starttime): with the pid it tells a process from a later one that was
 * given the same pid.  0 or -errno (-ESRCH when it is gone).
 */
int procfs_start_time(pid_t pid, uint64_t *ticks);
/* Process (thread-group) id of tid, or -errno. */
int procfs_tgid(pid_t tid);
/*
 * Calls fn for every thread of pid listed in /proc/PID/task.  Returns the
 * number of threads, or -errno (-ESRCH when pid is gone).
 */
int procfs_tasks(pid_t pid, void (*fn)(pid_t tid, void *ctx), void *ctx);
/* Calls fn for every process listed in /proc; their number, or -errno. */
int procfs_pids(void (*fn)(pid_t pid, void *ctx), void *ctx);
/* Kernel threads have no mm: an empty /proc/PID/cmdline and PF_KTHREAD.
 * 1 yes, 0 no, -errno. */
int procfs_is_kthread(pid_t pid);

#endif
