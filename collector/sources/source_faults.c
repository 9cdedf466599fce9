/*
 * The `faults` source: page faults of the target's threads, which any
 * Linux offers without a PMU.  Two variants, one event each:
 *
 *   exceptions:page_fault_user  tracepoint; its error_code tells reads from
 *       writes, so samples become loads and stores.  Needs tracefs access
 *       and exclude_kernel=0 plus RAW (CAP_PERFMON or root in practice).
 *   page-faults                 software event, works unprivileged at
 *       paranoid 2; every sample is `other`.
 *
 * Neither puts PERF_SAMPLE_PERIOD in sample_type: with it a software event
 * samples every fault whatever the period (docs/kernel.md, "Periods"), so
 * each sample is weighted by the configured period instead.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "source.h"
#include "sysfs.h"

#define FAULTS_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | \
			    PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			    PERF_SAMPLE_CPU)

static const char faults_meaning[] =
	"samples are page faults (first touch, copy-on-write, refault), "
	"not access frequency";

int
source_tp_offset(const char *format, const char *field)
{
	char pat[64];
	const char *p, *off;

	snprintf(pat, sizeof(pat), " %s;", field);
	p = strstr(format, pat);
	if (!p)
		return -1;
	off = strstr(p, "offset:");
	if (!off)
		return -1;
	return atoi(off + strlen("offset:"));
}

static int
faults_init_tracepoint(struct event_spec *ev, char *why, size_t whylen)
{
	char path[256], buf[4096];
	int ret;

	ret = tracefs_path(path, sizeof(path),
			   "events/exceptions/page_fault_user/id");
	/* As root on a machine where nothing mounted tracefs yet: mount it
	 * where perf would, rather than give up the load/store split. */
	if (ret < 0 && tracefs_mount() == 0) {
		log_msg("mounted tracefs at /sys/kernel/tracing (as perf "
			"does) for exceptions:page_fault_user");
		ret = tracefs_path(path, sizeof(path),
				   "events/exceptions/page_fault_user/id");
	}
	if (ret < 0) {
		snprintf(why, whylen, "tracepoint exceptions:page_fault_user "
			 "not found (tracefs not mounted or not readable)");
		return ret;
	}
	ret = sysfs_read(path, buf, sizeof(buf));
	if (ret <= 0) {
		snprintf(why, whylen, "cannot read the tracepoint id: %s",
			 strerror(ret < 0 ? -ret : EINVAL));
		return ret < 0 ? ret : -EINVAL;
	}
	memset(ev, 0, sizeof(*ev));
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = strtoull(buf, NULL, 10);

	ret = tracefs_path(path, sizeof(path),
			   "events/exceptions/page_fault_user/format");
	if (ret == 0)
		ret = sysfs_read(path, buf, sizeof(buf));
	if (ret <= 0) {
		snprintf(why, whylen, "cannot read the tracepoint format");
		return -EINVAL;
	}
	ev->tp_addr_off = source_tp_offset(buf, "address");
	ev->tp_ip_off = source_tp_offset(buf, "ip");
	ev->tp_error_off = source_tp_offset(buf, "error_code");
	if (ev->tp_addr_off < 0 || ev->tp_error_off < 0) {
		snprintf(why, whylen, "unexpected page_fault_user format");
		return -EINVAL;
	}
	snprintf(ev->name, sizeof(ev->name), "exceptions:page_fault_user");
	snprintf(ev->pmu, sizeof(ev->pmu), "tracepoint");
	ev->attr.sample_type = FAULTS_SAMPLE_TYPE | PERF_SAMPLE_RAW;
	ev->attr.exclude_kernel = 0;	/* tracepoint regs are kernel mode */
	ev->attr.exclude_hv = 1;
	ev->role = ROLE_FAULT_TP;
	ev->leader = -1;

	/* Proves the privileges: RAW needs CAP_PERFMON or paranoid -1. */
	ret = source_probe_event(ev);
	if (ret < 0)
		snprintf(why, whylen, "tracepoint exceptions:page_fault_user: "
			 "%s (needs CAP_PERFMON or root)", strerror(-ret));
	return ret;
}

static void
faults_init_software(struct event_spec *ev)
{
	memset(ev, 0, sizeof(*ev));
	snprintf(ev->name, sizeof(ev->name), "page-faults");
	snprintf(ev->pmu, sizeof(ev->pmu), "software");
	ev->attr.type = PERF_TYPE_SOFTWARE;
	ev->attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	ev->attr.sample_type = FAULTS_SAMPLE_TYPE | PERF_SAMPLE_ADDR;
	ev->attr.exclude_kernel = 1;
	ev->attr.exclude_hv = 1;
	ev->role = ROLE_FAULT;
	ev->leader = -1;
	ev->tp_addr_off = ev->tp_ip_off = ev->tp_error_off = -1;
}

int
source_faults_init(struct source *src, char *why, size_t whylen)
{
	char tp_why[200];
	int ret;

	memset(src, 0, sizeof(*src));
	snprintf(src->name, sizeof(src->name), "faults");
	src->default_period = 1;
	src->n_events = 1;
	if (getenv("MEMTOP_FAULTS_NO_TRACEPOINT") == NULL &&
	    faults_init_tracepoint(&src->events[0], tp_why,
				   sizeof(tp_why)) == 0) {
		src->has_kinds = true;
		snprintf(src->note, sizeof(src->note),
			 "%s; loads/stores from the fault's write bit",
			 faults_meaning);
		return 0;
	}
	if (getenv("MEMTOP_FAULTS_NO_TRACEPOINT"))
		snprintf(tp_why, sizeof(tp_why),
			 "tracepoint disabled by MEMTOP_FAULTS_NO_TRACEPOINT");

	faults_init_software(&src->events[0]);
	ret = source_probe_event(&src->events[0]);
	if (ret < 0) {
		source_explain_error(-ret, "perf_event_open(page-faults)",
				     (int)getpid(), why, whylen);
		return ret;
	}
	src->has_kinds = false;
	snprintf(src->note, sizeof(src->note),
		 "%s; no load/store split: %s", faults_meaning, tp_why);
	return 0;
}
