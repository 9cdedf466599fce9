/*
 * The `damon` source's status: whether memtop may set up a kdamond of
 * its own here (collector/sources/damon.h).  Another user's kdamond is
 * never touched: -e damon fails with one line naming it, and -e auto moves
 * on.  Main thread, before anything starts.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "damon.h"
#include "source.h"

int
source_damon_init(struct source *src, bool system, char *why, size_t whylen)
{
	char status[400];
	int ret = damon_check(system ? "paddr" : "vaddr", status,
			      sizeof(status));

	if (ret < 0) {
		snprintf(why, whylen, "%s", status);
		return ret;
	}
	memset(src, 0, sizeof(*src));
	snprintf(src->name, sizeof(src->name), "damon");
	src->damon = true;
	src->default_period = 1;
	snprintf(src->note, sizeof(src->note),
		 "samples are DAMON access checks: a region's samples are the "
		 "sampling intervals in which its pages were accessed (of 20 "
		 "an aggregation), entered at its first page with its size; "
		 "loads and stores are not told apart; no CPU");
	return 0;
}
