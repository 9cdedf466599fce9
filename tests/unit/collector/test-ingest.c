/*
 * The collector's per-sample path (collector/live/ingest.c) on hand-built
 * kernel records (tests/lib/ingest-build.h) of the three layouts memtop
 * opens: the faults tracepoint (RAW), the software page-fault event (ADDR)
 * and a PEBS-like load/store pair told apart by IDENTIFIER.  Every record
 * must end up queued, unattributed, lost or ignored, with the right kind,
 * page and weight; records of a size the event does not predict (a longer
 * RAW) still decode; the fast decoder matches the general one; and the
 * sample -> frame latency histogram (collector/live/lathist.c) reports
 * what it was given.  ingest_drain() is in test-ingest-drain.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggr.h"
#include "ingest-build.h"
#include "ingest.h"
#include "lathist.h"
#include "pagetab.h"
#include "record.h"
#include "source.h"
#include "testlib.h"
#include "topo.h"

static void
test_layouts(const struct topo *topo)
{
	struct source src;
	struct channel_events ch;
	struct aggr a;
	struct ingest in;
	struct rec r;
	const uint64_t A = 0x7f0000001040ull, B = 0x7f0000005000ull;

	/* Tracepoint: error_code 0x6 write, 0x4 read, 0x14 instruction. */
	rec_setup(&src, &ch, 0);
	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	ingest_init(&in, &a);
	check_eq_i64(ingest_sample(&in, &ch, rec_tp(&r, PID, A, 0x6, 36), 1),
		     1);
	check_eq_i64(ingest_sample(&in, &ch, rec_tp(&r, PID, A, 0x4, 36), 1),
		     1);
	check_eq_i64(ingest_sample(&in, &ch, rec_tp(&r, PID, B, 0x14, 36), 1),
		     1);
	/* A RAW longer than the format's fields (a newer kernel adding
	 * one) still decodes. */
	check_eq_i64(ingest_sample(&in, &ch, rec_tp(&r, PID, B, 0x6, 44), 1),
		     1);
	/* pid -1 (an exiting task), address 0: unattributed. */
	check_eq_i64(ingest_sample(&in, &ch,
				   rec_tp(&r, (uint32_t)-1, A, 0x6, 36), 1), 0);
	check_eq_i64(ingest_sample(&in, &ch, rec_tp(&r, PID, 0, 0x6, 36), 1),
		     0);
	/* A RAW size that breaks 8-byte alignment, a truncated record. */
	check_eq_i64(ingest_sample(&in, &ch, rec_tp(&r, PID, A, 0x6, 40), 1),
		     -EINVAL);
	rec_tp(&r, PID, A, 0x6, 36);
	((struct perf_event_header *)r.b)->size = 48;
	check_eq_i64(ingest_sample(&in, &ch, (const void *)r.b, 1), -EINVAL);
	aggr_flush(&a);
	check_eq_u64(a.interval.samples, 4);
	check_eq_u64(a.interval.stores, 2);
	check_eq_u64(a.interval.loads, 1);
	check_eq_u64(a.interval.other, 1);
	check_eq_u64(a.interval.unattributed, 2);
	check_eq_u64(a.interval.lost, 2);
	check_eq_u64(in.stats.samples, 4);
	check_eq_u64(in.stats.bad, 2);
	check_eq_u64(pagetab_count(a.pages), 2);
	aggr_fini(&a);

	/* Software event: every sample is `other`, weighted by period. */
	rec_setup(&src, &ch, 1);
	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	ingest_init(&in, &a);
	for (int i = 0; i < 300; i++)
		check_eq_i64(ingest_sample(&in, &ch,
					   rec_sw(&r, PID, A + (uint64_t)i * 4096),
					   1), 1);
	check_eq_i64(ingest_sample(&in, &ch, rec_sw(&r, PID, 0), 1), 0);
	aggr_flush(&a);
	check_eq_u64(a.interval.samples, 300);
	check_eq_u64(a.interval.other, 300);
	check_eq_u64(a.interval.unattributed, 1);
	check_eq_u64(pagetab_count(a.pages), 300);
	aggr_fini(&a);

	/* PEBS-like: the IDENTIFIER picks the event; an unknown one is
	 * lost, the aux leader's samples are ignored. */
	rec_setup(&src, &ch, 2);
	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	ingest_init(&in, &a);
	check_eq_i64(ingest_sample(&in, &ch, rec_pebs(&r, 11, A, 100), 1), 1);
	check_eq_i64(ingest_sample(&in, &ch, rec_pebs(&r, 11, A, 300), 1), 1);
	check_eq_i64(ingest_sample(&in, &ch, rec_pebs(&r, 12, A, 0), 1), 1);
	check_eq_i64(ingest_sample(&in, &ch, rec_pebs(&r, 99, A, 0), 1),
		     -EINVAL);
	check_eq_i64(ingest_sample(&in, &ch, rec_pebs(&r, 13, A, 0), 1), -1);
	aggr_flush(&a);
	check_eq_u64(a.interval.samples, 3);
	check_eq_u64(a.interval.loads, 2);
	check_eq_u64(a.interval.stores, 1);
	check_eq_u64(a.interval.lost, 1);
	check_eq_u64(in.stats.ignored, 1);
	check_eq_u64(pagetab_count(a.pages), 1);
	aggr_fini(&a);
}

/*
 * The fast decoder (fixed offsets, learnt from the first record of an
 * event) must give exactly what the general one gives, field by field,
 * on records with random contents: pids -1, addresses 0 and kernel
 * addresses, every error_code bit, weights, data sources.
 */
static void
test_fast_matches_general(void)
{
	uint64_t rng = 0x1234567;
	struct source src;
	struct channel_events ch;
	struct rec r;

	for (int layout = 0; layout < 3; layout++) {
		struct ingest in;
		int mismatches = 0;

		rec_setup(&src, &ch, layout);
		src.events[0].attr.sample_type |= layout == 2 ?
			PERF_SAMPLE_PHYS_ADDR : 0;
		src.events[1].attr.sample_type |= layout == 2 ?
			PERF_SAMPLE_PHYS_ADDR : 0;
		ingest_init(&in, NULL);
		for (int i = 0; i < 3000; i++) {
			const struct perf_event_header *h;
			const struct event_spec *ev = &src.events[0];
			struct record_layout l;
			struct record_sample rs;
			struct sample s1, s2;
			uint64_t v, addr;
			uint32_t pid;
			int r1, r2;

			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			v = rng ^ (rng >> 29);
			addr = (v & 7) == 0 ? 0 : (v & 7) == 1 ?
			       0xffff888000001000ull : v >> 8;
			pid = (v & 0x30) == 0 ? (uint32_t)-1 : PID;
			if (layout == 0) {
				h = rec_tp(&r, pid, addr, v >> 40, 36);
			} else if (layout == 1) {
				h = rec_sw(&r, pid, addr);
			} else {
				h = rec_pebs(&r, 11 + (v >> 50) % 2, addr, v);
				/* PHYS_ADDR after DATA_SRC. */
				rec_u64(&r, v >> 12);
				h = rec_end(&r);
				ev = &src.events[(v >> 50) % 2];
			}
			memset(&s1, 0, sizeof(s1));
			memset(&s2, 0, sizeof(s2));
			source_layout(ev, &l);
			r1 = record_parse_sample(&l, h, &rs) < 0 ? -EINVAL :
			     source_decode(&src, ev, &rs, 5, &s1);
			r2 = ingest_decode(&in, &ch, h, 5, &s2);
			if (r1 != r2 || (r1 >= 0 &&
			    (s1.addr != s2.addr || s1.ip != s2.ip ||
			     s1.time != s2.time || s1.period != s2.period ||
			     s1.weight != s2.weight ||
			     s1.data_src != s2.data_src ||
			     s1.phys_addr != s2.phys_addr ||
			     s1.pid != s2.pid || s1.tid != s2.tid ||
			     s1.cpu != s2.cpu ||
			     (r1 > 0 && s1.kind != s2.kind))))
				mismatches++;
		}
		check_eq_i64(mismatches, 0);
		/* The fast layout was learnt and used. */
		check(in.fast[0].size != 0);
		check(in.fast[0].learnt);
	}
}

/* Latency lines: "seq S publish_ns P samples N notime M lat_ms L:C ...". */
static void
test_lathist(void)
{
	char path[] = "/tmp/memtop-test-lathist.XXXXXX";
	int fd = mkstemp(path);
	struct lathist *h;
	char line[512];
	FILE *f;

	if (!check(fd >= 0))
		return;
	close(fd);
	h = lathist_new(path);
	if (!check(h != NULL))
		goto out;
	/* The histogram's interval starts at creation: use times far
	 * ahead of it, then publish the first frame there. */
	lathist_publish(h, 0, 1000000000000ull);
	lathist_add(h, 1000000000000ull + 100000000ull);	/* +100 ms */
	lathist_add(h, 1000000000000ull + 900000000ull);	/* +900 ms */
	lathist_add(h, 0);
	lathist_add(h, 999000000000ull);			/* -1 s */
	lathist_publish(h, 1, 1000000000000ull + 1000000000ull);
	lathist_free(h);
	f = fopen(path, "r");
	if (!check(f != NULL))
		goto out;
	check(fgets(line, sizeof(line), f) != NULL);
	check(fgets(line, sizeof(line), f) != NULL);
	fclose(f);
	/* 2 s old, ~900 ms (bucket start 899.7 ms, rounded up), ~100 ms. */
	check_eq_str(line, "seq 1 publish_ns 1001000000000 samples 3 notime 1 "
		     "lat_ms 2000:1 901:1 101:1\n");
out:
	unlink(path);
}

int
main(void)
{
	static const int cpu_node[2] = { 0, 0 };
	struct topo *topo = topo_new_fake(2, cpu_node);

	if (!check(topo != NULL))
		return test_result();
	test_layouts(topo);
	test_fast_matches_general();
	test_lathist();
	topo_free(topo);
	return test_result();
}
