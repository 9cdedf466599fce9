/* See heapopt.h.  Any thread (a pure function). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "heapopt.h"

int
heapopt_size(const char *s, size_t len, uint64_t *bytes)
{
	static const char units[] = "bkmg";	/* shifts 0, 10, 20, 30 */
	const char *u;
	uint64_t v = 0;
	unsigned shift;

	if (len == 0)
		return -ENOENT;
	u = memchr(units, tolower((unsigned char)s[len - 1]), 4);
	if (!u)
		return -ENOENT;
	shift = 10 * (unsigned)(u - units);
	if (len == 1)
		return -EINVAL;
	for (size_t i = 0; i + 1 < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > (HEAP_MAX_SIZE >> shift))
			return -EINVAL;
	}
	if (v == 0)
		return -EINVAL;
	*bytes = v << shift;
	return 0;
}
