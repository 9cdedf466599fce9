/*
 * The running kernel's release, for the features perf_event_open cannot
 * be asked about without a PMU to try them on (IBS addresses need 6.1,
 * WEIGHT_STRUCT 5.12 ...).  MEMTOP_KERNEL_RELEASE overrides uname -r so
 * that recorded sysfs trees can be tested as the kernel that produced
 * them.  Any thread; no state.
 */
#ifndef MEMTOP_KVER_H
#define MEMTOP_KVER_H

#include <stdbool.h>
#include <stddef.h>

struct kver {
	unsigned major, minor;
	char release[65];	/* as read: "6.1.0-18-amd64" */
};

/* "6.1.0-18-amd64" -> 6, 1.  0 or -EINVAL. */
int kver_parse(const char *release, struct kver *out);
/* $MEMTOP_KERNEL_RELEASE, else uname -r.  0 or -errno. */
int kver_current(struct kver *out);
bool kver_at_least(const struct kver *k, unsigned major, unsigned minor);

#endif
