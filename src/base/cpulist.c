/* CPU sets in the kernel's cpulist syntax.  Pure; any thread.  See
 * cpulist.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cpulist.h"
#include "sysfs.h"

/* A decimal CPU number at *s: no sign, no blanks. */
static int
cpulist_num(const char **s, int *out)
{
	const char *p = *s;
	long v = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v >= CPULIST_MAX)
			return -ERANGE;
	}
	*out = (int)v;
	*s = p;
	return 0;
}

int
cpulist_parse(const char *s, struct cpulist *out)
{
	int ret = 0;

	memset(out, 0, sizeof(*out));
	for (;;) {
		int lo, hi;

		ret = cpulist_num(&s, &lo);
		if (ret < 0)
			break;
		hi = lo;
		if (*s == '-') {
			s++;
			ret = cpulist_num(&s, &hi);
			if (ret < 0)
				break;
			if (hi < lo) {
				ret = -EINVAL;
				break;
			}
		}
		for (int cpu = lo; cpu <= hi; cpu++)
			cpulist_set(out, cpu);
		if (*s != ',')
			break;
		s++;
	}
	if (ret == 0 && *s == '\n')
		s++;
	if (ret == 0 && *s != '\0')
		ret = -EINVAL;
	if (ret < 0)
		memset(out, 0, sizeof(*out));
	return ret;
}

int
cpulist_read(const char *path, struct cpulist *out)
{
	char buf[4096];
	int n = sysfs_read(path, buf, sizeof(buf));

	if (n < 0) {
		memset(out, 0, sizeof(*out));
		return n;
	}
	return cpulist_parse(buf, out);
}

bool
cpulist_has(const struct cpulist *l, int cpu)
{
	if (cpu < 0 || cpu >= CPULIST_MAX)
		return false;
	return (l->bits[cpu / 64] >> (cpu % 64)) & 1;
}

void
cpulist_set(struct cpulist *l, int cpu)
{
	if (cpu >= 0 && cpu < CPULIST_MAX)
		l->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

int
cpulist_count(const struct cpulist *l)
{
	int n = 0;

	for (size_t i = 0; i < CPULIST_MAX / 64; i++)
		n += __builtin_popcountll(l->bits[i]);
	return n;
}

int
cpulist_next(const struct cpulist *l, int from)
{
	if (from < 0)
		from = 0;
	for (int w = from / 64; w < CPULIST_MAX / 64; w++) {
		uint64_t bits = l->bits[w];

		if (w == from / 64)
			bits &= ~UINT64_C(0) << (from % 64);
		if (bits)
			return w * 64 + __builtin_ctzll(bits);
	}
	return -1;
}

size_t
cpulist_format(const struct cpulist *l, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (int lo = cpulist_next(l, 0); lo >= 0;) {
		char piece[32];
		size_t n;
		int hi = lo;

		while (hi + 1 < CPULIST_MAX && cpulist_has(l, hi + 1))
			hi++;
		if (hi > lo)
			snprintf(piece, sizeof(piece), "%s%d-%d",
				 used ? "," : "", lo, hi);
		else
			snprintf(piece, sizeof(piece), "%s%d", used ? "," : "",
				 lo);
		n = strlen(piece);
		/* Truncated: what fits, NUL-terminated. */
		if (used + n < len)
			memcpy(buf + used, piece, n + 1);
		else if (used + 1 < len)
			snprintf(buf + used, len - used, "%s", piece);
		used += n;
		lo = cpulist_next(l, hi + 1);
	}
	return used;
}
