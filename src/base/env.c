/* See env.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "env.h"

bool
env_ulong(const char *name, unsigned long lo, unsigned long hi,
	  unsigned long *out)
{
	const char *env = getenv(name);
	unsigned long v;
	char *end;

	if (!env || !*env)
		return false;
	errno = 0;
	v = strtoul(env, &end, 10);
	if (*end || errno || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}
