/*
 * --metrics-file: the exposition written so that a reader (node_exporter's
 * textfile collector) sees either the previous file or the new one whole,
 * never a part: a temporary file in the same folder (rename() is atomic
 * only within one file system), then rename() over the old one.  UI
 * thread, after every frame.
 *
 * The temporary file is ".NAME.XXXXXX", hidden and without NAME's ".prom"
 * ending, so the textfile collector never reads it.  The file is made
 * mode 0644: the collector usually runs as another user.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics_int.h"

/* Makes the temporary file beside path: its descriptor, or -errno. */
static int
metrics_file_temp(const char *path, char *tmp, size_t tmplen)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	const char *base = slash ? slash + 1 : path;
	int n, fd;

	n = snprintf(tmp, tmplen, "%.*s.%s.XXXXXX", dirlen, path, base);
	if (n < 0 || (size_t)n >= tmplen)
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int
metrics_file_fill(int fd, const char *text, size_t len)
{
	while (len) {
		ssize_t w = write(fd, text, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		text += w;
		len -= (size_t)w;
	}
	return fchmod(fd, 0644) < 0 ? -errno : 0;
}

int
metrics_file_write(const char *path, const char *text, size_t len,
		   char *why, size_t whylen)
{
	char tmp[PATH_MAX];
	int fd, ret;

	fd = metrics_file_temp(path, tmp, sizeof(tmp));
	if (fd < 0) {
		snprintf(why, whylen, "temporary file: %s", strerror(-fd));
		return fd;
	}
	ret = metrics_file_fill(fd, text, len);
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	if (ret == 0 && rename(tmp, path) < 0)
		ret = -errno;
	if (ret < 0) {
		unlink(tmp);
		snprintf(why, whylen, "%s", strerror(-ret));
	}
	return ret;
}

int
metrics_file_check(const char *path, char *why, size_t whylen)
{
	char tmp[PATH_MAX];
	struct stat st;
	int fd;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "%s", strerror(EISDIR));
		return -EISDIR;
	}
	fd = metrics_file_temp(path, tmp, sizeof(tmp));
	if (fd < 0) {
		snprintf(why, whylen, "%s", strerror(-fd));
		return fd;
	}
	close(fd);
	unlink(tmp);
	return 0;
}
