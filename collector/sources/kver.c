/* Any thread.  See kver.h. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "kver.h"

static int
kver_number(const char **p, unsigned *out)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	v = strtoul(*p, &end, 10);
	if (errno || v > 100000)
		return -EINVAL;
	*out = (unsigned)v;
	*p = end;
	return 0;
}

int
kver_parse(const char *release, struct kver *out)
{
	const char *p = release;

	memset(out, 0, sizeof(*out));
	snprintf(out->release, sizeof(out->release), "%s", release);
	if (kver_number(&p, &out->major) < 0 || *p++ != '.' ||
	    kver_number(&p, &out->minor) < 0)
		return -EINVAL;
	return 0;
}

int
kver_current(struct kver *out)
{
	const char *env = getenv("MEMTOP_KERNEL_RELEASE");
	struct utsname u;

	if (env && env[0])
		return kver_parse(env, out);
	if (uname(&u) < 0)
		return -errno;
	return kver_parse(u.release, out);
}

bool
kver_at_least(const struct kver *k, unsigned major, unsigned minor)
{
	return k->major > major || (k->major == major && k->minor >= minor);
}
