/* cgroup mounts and paths for -G.  Any thread; no state.  See
 * cgroupfs.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupfs.h"

/* /proc/mounts writes space, tab, newline and backslash as \ooo octal
 * (fs/proc_namespace.c, mangle()); decodes s in place. */
static void
cgroupfs_unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
					(s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* Whether the comma-separated option list opts names word. */
static bool
cgroupfs_has_opt(const char *opts, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = opts; p && *p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (strncmp(p, word, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
	}
	return false;
}

int
cgroupfs_mount(const char *mounts, char *dir, size_t len, bool *v2)
{
	char line[4096], v2dir[4096] = "";
	FILE *f = fopen(mounts, "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *dev, *path, *type, *opts;

		dev = strtok_r(line, " \t\n", &save);
		path = dev ? strtok_r(NULL, " \t\n", &save) : NULL;
		type = path ? strtok_r(NULL, " \t\n", &save) : NULL;
		opts = type ? strtok_r(NULL, " \t\n", &save) : NULL;
		if (!opts)
			continue;
		cgroupfs_unescape(path);
		if (strcmp(type, "cgroup2") == 0 && !v2dir[0]) {
			snprintf(v2dir, sizeof(v2dir), "%s", path);
		} else if (strcmp(type, "cgroup") == 0 &&
			   cgroupfs_has_opt(opts, "perf_event")) {
			ret = snprintf(dir, len, "%s", path) < (int)len ?
			      0 : -ENAMETOOLONG;
			*v2 = false;
			break;
		}
	}
	fclose(f);
	if (ret == -ENOENT && v2dir[0]) {
		ret = snprintf(dir, len, "%s", v2dir) < (int)len ? 0 :
		      -ENAMETOOLONG;
		*v2 = true;
	}
	return ret;
}

/* No component of rel is "..": a cgroup name must not leave the mount. */
static bool
cgroupfs_safe(const char *rel)
{
	for (const char *p = rel; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += n;
		p += *p == '/';
	}
	return true;
}

int
cgroupfs_resolve(const char *mount, const char *name, char *dir,
		 size_t dirlen, char *rel, size_t rellen)
{
	size_t mlen = strlen(mount);
	const char *r = name;
	int n;

	if (!name[0])
		return -EINVAL;
	while (mlen > 1 && mount[mlen - 1] == '/')
		mlen--;
	/* A full path inside the mount: the part after the mount point. */
	if (strncmp(name, mount, mlen) == 0 &&
	    (name[mlen] == '/' || name[mlen] == '\0'))
		r = name + mlen;
	while (*r == '/')
		r++;
	if (!cgroupfs_safe(r))
		return -EINVAL;
	n = snprintf(dir, dirlen, "%.*s%s%s", (int)mlen, mount, *r ? "/" : "",
		     r);
	if (n < 0 || (size_t)n >= dirlen)
		return -ENAMETOOLONG;
	n = snprintf(rel, rellen, "/%s", r);
	if (n < 0 || (size_t)n >= rellen)
		return -ENAMETOOLONG;
	/* "/a/b/" is the cgroup "/a/b". */
	while (n > 1 && rel[n - 1] == '/')
		rel[--n] = '\0';
	return 0;
}

int
cgroupfs_of_pid(pid_t pid, bool v2, char *buf, size_t len)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* "ID:CONTROLLERS:PATH"; cgroup2 is "0::PATH". */
		char *ctl = strchr(line, ':'), *cg;
		bool want;

		if (!ctl)
			continue;
		*ctl++ = '\0';
		cg = strchr(ctl, ':');
		if (!cg)
			continue;
		*cg++ = '\0';
		cg[strcspn(cg, "\n")] = '\0';
		want = v2 ? strcmp(line, "0") == 0 && !*ctl :
			    cgroupfs_has_opt(ctl, "perf_event");
		/* The other hierarchy's line, until the wanted one comes. */
		if (want || !found) {
			snprintf(buf, len, "%s", cg);
			found = true;
		}
		if (want)
			break;
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}
