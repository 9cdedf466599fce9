/* Sort keys for the hot-pages list; shared by CLI, collector and UI. */
#ifndef MEMTOP_SORTKEY_H
#define MEMTOP_SORTKEY_H

enum sort_key {
	SORT_SAMPLES = 0,	/* samples this interval (default) */
	SORT_TOTAL,		/* samples since start or reset */
	SORT_LOADS,		/* loads this interval */
	SORT_STORES,		/* stores this interval */
	SORT_LATENCY,		/* mean latency (sources with weights) */
	SORT__COUNT,
};

const char *sortkey_name(enum sort_key key);
/* Returns the key, or -1 for an unknown name. */
int sortkey_from_name(const char *name);

#endif
