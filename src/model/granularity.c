/* See granularity.h. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base.h"
#include "granularity.h"

static const struct {
	unsigned shift;
	const char *name;
	const char *spellings[4];
} granularity_table[] = {
	{ GRANULARITY_4K, "4 KiB", { "4k", "4kib", "4096", NULL } },
	{ GRANULARITY_2M, "2 MiB", { "2m", "2mib", "2097152", NULL } },
	{ GRANULARITY_1G, "1 GiB", { "1g", "1gib", "1073741824", NULL } },
};

#define GRANULARITY_N ARRAY_SIZE(granularity_table)

int
granularity_parse(const char *s, unsigned *shift)
{
	for (size_t i = 0; i < GRANULARITY_N; i++)
		for (size_t k = 0; granularity_table[i].spellings[k]; k++)
			if (strcasecmp(s, granularity_table[i].spellings[k]) ==
			    0) {
				*shift = granularity_table[i].shift;
				return 0;
			}
	return -EINVAL;
}

const char *
granularity_name(unsigned shift)
{
	for (size_t i = 0; i < GRANULARITY_N; i++)
		if (granularity_table[i].shift == shift)
			return granularity_table[i].name;
	return "?";
}

unsigned
granularity_next(unsigned shift)
{
	for (size_t i = 0; i < GRANULARITY_N; i++)
		if (granularity_table[i].shift == shift)
			return granularity_table[(i + 1) % GRANULARITY_N].shift;
	return GRANULARITY_4K;
}

int
granularity_valid(unsigned shift)
{
	return strcmp(granularity_name(shift), "?") != 0;
}
