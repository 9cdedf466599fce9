/* sysfs and tracefs paths, honouring MEMTOP_SYSFS_ROOT.  Any thread. */
#ifndef MEMTOP_SYSFS_H
#define MEMTOP_SYSFS_H

#include <stddef.h>

/* buf = "$MEMTOP_SYSFS_ROOT/sys/" rel (or "/sys/" rel).  0 or -ENAMETOOLONG. */
int sysfs_path(char *buf, size_t len, const char *rel);
/* Reads a whole small file into buf (NUL-terminated, trailing newline
 * stripped).  Bytes read, or -errno. */
int sysfs_read(const char *path, char *buf, size_t len);
/*
 * buf = the first tracefs mount point holding `rel` ("events/exceptions/
 * page_fault_user/id"): /sys/kernel/tracing, then /sys/kernel/debug/
 * tracing.  0, or -ENOENT when tracefs is not mounted or lacks rel.
 */
int tracefs_path(char *buf, size_t len, const char *rel);
/*
 * Mounts tracefs at /sys/kernel/tracing, as perf does when it needs a
 * tracepoint (tools/lib/api/fs/tracing_path.c): for root, where nothing
 * is mounted there yet.  0 mounted; -EEXIST when tracefs is mounted there
 * already; -EPERM for another user; -errno from mount(2).
 */
int tracefs_mount(void);

#endif
