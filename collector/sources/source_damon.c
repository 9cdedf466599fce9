/*
 * The `damon` source's status: whether memtop may set up a kdamond of
 * its own here (collector/sources/damon.h).  Another user's kdamond is
 * never touched: -e damon fails with one line naming it, and -e auto moves
 * on.  Main thread, before anything starts.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "damon.h"
#include "source.h"

int
source_damon_init(struct source *src, char *why, size_t whylen)
{
	char status[400];
	int ret = damon_check(status, sizeof(status));

	(void)src;
	if (ret < 0) {
		snprintf(why, whylen, "%s", status);
		return ret;
	}
	/* The sysfs driver (damon.c) is there and tested; the live
	 * collector does not turn its region snapshots into frames yet. */
	snprintf(why, whylen, "not supported yet (DAMON is free here; "
		 "region snapshots are not read into frames yet)");
	return -EOPNOTSUPP;
}
