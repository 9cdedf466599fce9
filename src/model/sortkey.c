#include "config.h"

#include <string.h>

#include "sortkey.h"

static const char *const sortkey_names[SORT__COUNT] = {
	[SORT_SAMPLES] = "samples",
	[SORT_TOTAL] = "total",
	[SORT_LOADS] = "loads",
	[SORT_STORES] = "stores",
	[SORT_LATENCY] = "latency",
};

const char *
sortkey_name(enum sort_key key)
{
	if ((unsigned)key >= SORT__COUNT)
		return "?";
	return sortkey_names[key];
}

int
sortkey_from_name(const char *name)
{
	for (int i = 0; i < SORT__COUNT; i++)
		if (strcmp(name, sortkey_names[i]) == 0)
			return i;
	return -1;
}
