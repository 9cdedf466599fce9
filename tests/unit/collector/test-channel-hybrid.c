/*
 * Per-CPU channels on a hybrid part (issue 12): an event is opened only
 * on the CPUs its PMU covers (event_spec.cpus, from the PMU's sysfs
 * `cpus` file), and the first event that counts on the channel's CPU owns
 * the ring.  Played with two software page-fault events, given the CPU
 * lists of a cpu_core and a cpu_atom PMU by hand: a system channel (pid
 * -1) on CPU 0 opens only the event "covering" CPU 0, its samples (this
 * thread, pinned to CPU 0, faults fresh pages) carry that event's id, and
 * its period and enable reach it; a CPU no event covers is -ENODEV.
 * Skips (77) without the right to watch a whole CPU.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "channel.h"
#include "channel_int.h"
#include "record.h"
#include "source.h"
#include "testlib.h"

#define HTEST_PAGES 256

struct htest_tally {
	const struct channel *ch;
	unsigned by_event[3];
	unsigned other;
};

static int
htest_record(const struct perf_event_header *hdr, void *ctx)
{
	struct htest_tally *t = ctx;
	const struct event_spec *ev;
	uint64_t id;

	if (hdr->type != PERF_RECORD_SAMPLE || record_identifier(hdr, &id) < 0)
		return 0;
	ev = channel_events_find(&t->ch->ev, id);
	if (ev && ev >= t->ch->ev.src->events &&
	    ev < t->ch->ev.src->events + 3)
		t->by_event[ev - t->ch->ev.src->events]++;
	else
		t->other++;
	return 0;
}

int
main(void)
{
	struct channel_params p = { .pid = -1, .cpu = 0, .system = true,
				    .cgroup_fd = -1, .ring_pages = 64,
				    .period = 1, .enable = true };
	struct htest_tally t = { 0 };
	struct channel *ch = NULL;
	struct source src;
	cpu_set_t one;
	char err[512];
	int ret;

	setenv("MEMTOP_FAULTS_NO_TRACEPOINT", "1", 1);
	ret = source_faults_init(&src, err, sizeof(err));
	if (ret == -EACCES || ret == -EPERM)
		test_skip("cannot open page-fault events here: %s", err);
	if (!check_eq_i64(ret, 0) || !check(src.n_events >= 1))
		return test_result();
	/* A "cpu_atom" event (CPUs 16-23), a "cpu_core" one (0-15), another
	 * "cpu_atom" one: on CPU 0 the second must own the ring and the
	 * third stay closed. */
	src.events[1] = src.events[2] = src.events[0];
	src.n_events = 3;
	snprintf(src.events[0].name, sizeof(src.events[0].name), "atom");
	snprintf(src.events[0].cpus, sizeof(src.events[0].cpus), "16-23");
	snprintf(src.events[1].name, sizeof(src.events[1].name), "core");
	snprintf(src.events[1].cpus, sizeof(src.events[1].cpus), "0-15");
	snprintf(src.events[2].name, sizeof(src.events[2].name), "atom2");
	snprintf(src.events[2].cpus, sizeof(src.events[2].cpus), "16-23");

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0)
		test_skip("cannot run on CPU 0: %s", strerror(errno));
	ret = channel_open(&ch, &src, &p, err, sizeof(err));
	if (ret == -EACCES || ret == -EPERM)
		test_skip("a system channel on CPU 0: %s", err);
	if (!check_eq_i64(ret, 0)) {
		test_fail_at(__FILE__, __LINE__, "%s", err);
		return test_result();
	}
	check_eq_i64(ch->fds[0], -1);
	check(ch->fds[1] >= 0);
	check_eq_i64(ch->fds[2], -1);
	check_eq_u64(ch->owner, 1);
	check_eq_i64(channel_poll_fd(ch), ch->fds[1]);
	check_eq_u64(ch->ev.ids[0], 0);
	check(ch->ev.ids[1] != 0);
	check_eq_i64(channel_set_period(ch, 1), 0);
	check_eq_i64(channel_enable(ch, true), 0);
	test_touch_pages(HTEST_PAGES);
	t.ch = ch;
	ring_drain(&ch->ring, htest_record, &t, NULL);
	check_eq_u64(t.by_event[0], 0);
	check(t.by_event[1] >= HTEST_PAGES);
	check_eq_u64(t.by_event[2], 0);
	check_eq_u64(t.other, 0);
	check_eq_i64(channel_read_lost(ch), 0);
	channel_close(ch);

	/* A CPU that neither PMU covers. */
	snprintf(src.events[1].cpus, sizeof(src.events[1].cpus), "1-15");
	ch = NULL;
	check_eq_i64(channel_open(&ch, &src, &p, err, sizeof(err)), -ENODEV);
	check(strstr(err, "counts on CPU 0") != NULL);
	check(ch == NULL);
	return test_result();
}
