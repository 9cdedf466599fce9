/*
 * Sets of CPU numbers in the kernel's cpulist syntax ("0-3,8"), as perf's
 * -C and /sys/devices/system/cpu/online write them.  Pure; any thread.
 */
#ifndef MEMTOP_CPULIST_H
#define MEMTOP_CPULIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel's largest NR_CPUS (x86 MAXSMP): CPUs 0 .. CPULIST_MAX - 1. */
#define CPULIST_MAX 8192

struct cpulist {
	uint64_t bits[CPULIST_MAX / 64];
};

/*
 * "N", "N-M" (N <= M) and commas between them, nothing else (a trailing
 * newline is allowed, as sysfs files end with one).  0, -EINVAL for the
 * syntax, -ERANGE for a CPU at or past CPULIST_MAX; out is left empty on
 * failure.
 */
int cpulist_parse(const char *s, struct cpulist *out);
/* The set in a file such as /sys/devices/system/cpu/online; 0 or
 * -errno (-EINVAL when the file does not hold a cpulist). */
int cpulist_read(const char *path, struct cpulist *out);

bool cpulist_has(const struct cpulist *l, int cpu);
void cpulist_set(struct cpulist *l, int cpu);
int cpulist_count(const struct cpulist *l);
/* The first CPU >= from in l, or -1. */
int cpulist_next(const struct cpulist *l, int from);
/* Back in the kernel's syntax, ranges folded ("0-3,8"); "" when empty.
 * Truncated to len - 1 bytes; returns the length it needed. */
size_t cpulist_format(const struct cpulist *l, char *buf, size_t len);

#endif
