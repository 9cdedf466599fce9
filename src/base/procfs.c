#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "sysfs.h"

int
procfs_read_int(const char *path, int fallback)
{
	char buf[64];
	char *end;
	long v;

	if (sysfs_read(path, buf, sizeof(buf)) <= 0)
		return fallback;
	v = strtol(buf, &end, 10);
	if (end == buf)
		return fallback;
	return (int)v;
}

static int
procfs_status_field(pid_t pid, const char *key, char *out, size_t len)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			const char *v = line + klen + 1;

			while (*v == ' ' || *v == '\t')
				v++;
			snprintf(out, len, "%s", v);
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

int
procfs_pid_uid(pid_t pid)
{
	char buf[128];

	if (procfs_status_field(pid, "Uid", buf, sizeof(buf)) < 0)
		return -1;
	return atoi(buf);
}

int
procfs_tgid(pid_t tid)
{
	char buf[64];
	int ret = procfs_status_field(tid, "Tgid", buf, sizeof(buf));

	return ret < 0 ? ret : atoi(buf);
}

int
procfs_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	n = sysfs_read(path, buf, len);
	return n < 0 ? n : 0;
}

char
procfs_state(pid_t pid)
{
	char path[64], buf[512];
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (sysfs_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	/* "pid (comm) S ...": comm may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return 0;
	return p[2];
}

/* After the ')' ending comm (which may hold spaces and parentheses),
 * field n (1-based, counting pid as 1) of a /proc/PID/stat line; NULL when
 * the line has fewer fields. */
static const char *
procfs_stat_field(const char *buf, int n)
{
	const char *p = strrchr(buf, ')');

	if (!p || p[1] != ' ')
		return NULL;
	p += 2;
	for (int field = 3; field < n && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p;
}

int
procfs_start_time(pid_t pid, uint64_t *ticks)
{
	char path[64], buf[1024];
	const char *p;
	char *end;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (sysfs_read(path, buf, sizeof(buf)) <= 0)
		return -ESRCH;
	p = procfs_stat_field(buf, 22);
	if (!p)
		return -EINVAL;
	*ticks = strtoull(p, &end, 10);
	return end == p ? -EINVAL : 0;
}

/* Calls fn for every numeric entry of the directory path. */
static int
procfs_numbered(const char *path, void (*fn)(pid_t id, void *ctx), void *ctx)
{
	struct dirent *de;
	DIR *dir;
	int n = 0;

	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(dir))) {
		char *end;
		long id;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		id = strtol(de->d_name, &end, 10);
		if (*end || id <= 0)
			continue;
		fn((pid_t)id, ctx);
		n++;
	}
	closedir(dir);
	return n;
}

int
procfs_tasks(pid_t pid, void (*fn)(pid_t tid, void *ctx), void *ctx)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	return procfs_numbered(path, fn, ctx);
}

int
procfs_pids(void (*fn)(pid_t pid, void *ctx), void *ctx)
{
	return procfs_numbered("/proc", fn, ctx);
}

int
procfs_is_kthread(pid_t pid)
{
	char path[64], buf[512];
	const char *p;
	unsigned long flags;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (sysfs_read(path, buf, sizeof(buf)) <= 0)
		return -ESRCH;
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	/* Field 9 is flags; after ')' come state (3), ppid (4) ... */
	p += 2;
	for (field = 3; field < 9 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p)
		return -EINVAL;
	flags = strtoul(p, NULL, 10);
	return (flags & 0x00200000) ? 1 : 0;	/* PF_KTHREAD */
}
