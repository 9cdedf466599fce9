#include "config.h"

/*
 * record_parse_sample() against SAMPLE records with fields of variable
 * size (RAW, READ, CALLCHAIN) laid out by hand, in the order
 * perf_output_sample() writes them: the fields after them land right only
 * if they are sized right.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "record-build.h"
#include "record.h"
#include "testlib.h"

/*
 * exceptions:page_fault_user through RAW: 8-byte common header, address
 * at 8, ip at 16, error_code at 24.  32 bytes of payload, so u32 size is
 * 36 (4 + 36 = 40) and 4 bytes of padding follow.
 */
static void
test_raw_tracepoint(void)
{
	struct record_layout l = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW,
	};
	const unsigned char *raw_at, *payload;
	const struct perf_event_header *hdr;
	uint64_t tp[4], v;
	struct record_sample s;
	struct rb b;

	tp[0] = 0x0000abcd00000123;	/* common_type, flags, pid */
	tp[1] = 0x7ffd1000;		/* address */
	tp[2] = 0x401abc;		/* ip */
	tp[3] = 0x6;			/* error_code: WRITE | USER */

	rb_begin(&b, PERF_RECORD_SAMPLE);
	rb_u64(&b, 9);
	rb_u32(&b, 40);
	rb_u32(&b, 41);
	rb_u64(&b, 1000);
	rb_u32(&b, 1);
	rb_u32(&b, 0);
	rb_u64(&b, 1);
	rb_u32(&b, 36);
	raw_at = (const unsigned char *)b.buf + b.len;
	rb_bytes(&b, tp, sizeof(tp));
	rb_u32(&b, 0);
	hdr = rb_end(&b);
	check_eq_u64(hdr->size, 88);

	check_eq_i64(record_parse_sample(&l, hdr, &s), 0);
	check_eq_u64(s.identifier, 9);
	check_eq_u64(s.tid, 41);
	check_eq_u64(s.period, 1);
	check(s.raw == (const void *)raw_at);
	check_eq_u64(s.raw_size, 36);
	payload = s.raw;
	if (payload != NULL) {
		memcpy(&v, payload + 8, 8);
		check_eq_u64(v, 0x7ffd1000);
		memcpy(&v, payload + 16, 8);
		check_eq_u64(v, 0x401abc);
		memcpy(&v, payload + 24, 8);
		check_eq_u64(v, 0x6);
	}
	check_size_exact(&l, &b);

	/* An unpadded size breaks the u64 alignment of what follows. */
	memcpy((unsigned char *)b.buf + 48, &(uint32_t){ 32 }, 4);
	check_eq_i64(record_parse_sample(&l, hdr, &s), -EINVAL);
	memcpy((unsigned char *)b.buf + 48, &(uint32_t){ 44 }, 4);
	check_eq_i64(record_parse_sample(&l, hdr, &s), -EINVAL);
	memcpy((unsigned char *)b.buf + 48, &(uint32_t){ 0xfffffffc }, 4);
	check_eq_i64(record_parse_sample(&l, hdr, &s), -EINVAL);
	memcpy((unsigned char *)b.buf + 48, &(uint32_t){ 28 }, 4);
	check_eq_i64(record_parse_sample(&l, hdr, &s), -EINVAL);

	/*
	 * Unpadded raw data that fills a record exactly: only the padding
	 * rule tells it from a good one.
	 */
	l.sample_type = PERF_SAMPLE_RAW;
	rb_begin(&b, PERF_RECORD_SAMPLE);
	rb_u32(&b, 5);
	rb_bytes(&b, "12345", 5);
	hdr = rb_end(&b);
	check_eq_u64(hdr->size, 17);
	check_eq_i64(record_parse_sample(&l, hdr, &s), -EINVAL);

	/* An event without raw data still writes {u32 4, u32 0}. */
	l.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_DATA_SRC;
	rb_begin(&b, PERF_RECORD_SAMPLE);
	rb_u32(&b, 4);
	rb_u32(&b, 0);
	rb_u64(&b, 0x42);
	hdr = rb_end(&b);
	check_eq_i64(record_parse_sample(&l, hdr, &s), 0);
	check_eq_u64(s.raw_size, 4);
	check_eq_u64(s.data_src, 0x42);
}

#define ALL_TYPE	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |	\
			 PERF_SAMPLE_TID | PERF_SAMPLE_TIME |		\
			 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |		\
			 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |	\
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ |	\
			 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |	\
			 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |	\
			 PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_PHYS_ADDR | \
			 PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE | \
			 PERF_SAMPLE_CODE_PAGE_SIZE)

/* The record of test_all_fields: 0x... values name their field, a group
 * read of 2 entries and a callchain of 3 in the middle. */
static void
all_fields_record(struct rb *b)
{
	int i;

	rb_begin(b, PERF_RECORD_SAMPLE);
	rb_u64(b, 0x1d);		/* identifier */
	rb_u64(b, 0x1f);		/* ip */
	rb_u32(b, 50);
	rb_u32(b, 51);
	rb_u64(b, 0x7131);		/* time */
	rb_u64(b, 0xadd7);		/* addr */
	rb_u64(b, 0x1d2);		/* id */
	rb_u64(b, 0x5712);		/* stream_id */
	rb_u32(b, 3);
	rb_u32(b, 0);
	rb_u64(b, 0x9e7);		/* period */
	rb_u64(b, 2);			/* read: nr */
	rb_u64(b, 1111);		/* time_enabled */
	rb_u64(b, 1110);		/* time_running */
	for (i = 0; i < 2; i++) {
		rb_u64(b, 100 + i);	/* value */
		rb_u64(b, 200 + i);	/* id */
		rb_u64(b, 300 + i);	/* lost */
	}
	rb_u64(b, 3);			/* callchain: nr */
	rb_u64(b, 0xffffffffff600000);
	rb_u64(b, 0x401000);
	rb_u64(b, 0x402000);
	rb_u32(b, 12);			/* raw: 4 + 12 = 16 */
	rb_bytes(b, "raw-payload", 12);
	rb_u64(b, 0x3e1);		/* weight */
	rb_u64(b, 0xd5c);		/* data_src */
	rb_u64(b, 0x7a);		/* transaction */
	rb_u64(b, 0x1234000);		/* phys_addr */
	rb_u64(b, 0xc9);		/* cgroup */
	rb_u64(b, 2 << 20);		/* data_page_size */
	rb_u64(b, 4096);		/* code_page_size */
}

/*
 * Every field the decoder walks, with a group read and a callchain in
 * the middle, so the fields after them land right only if both are
 * sized right.
 */
static void
test_all_fields(void)
{
	struct record_layout l = {
		.sample_type = ALL_TYPE,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
			       PERF_FORMAT_LOST |
			       PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_TOTAL_TIME_RUNNING,
	};
	struct perf_event_header *hdr;
	struct record_sample s;
	struct rb b;

	all_fields_record(&b);
	hdr = (struct perf_event_header *)rb_end(&b);

	check_eq_i64(record_parse_sample(&l, hdr, &s), 0);
	check_eq_u64(s.identifier, 0x1d);
	check_eq_u64(s.ip, 0x1f);
	check_eq_u64(s.pid, 50);
	check_eq_u64(s.tid, 51);
	check_eq_u64(s.time, 0x7131);
	check_eq_u64(s.addr, 0xadd7);
	check_eq_u64(s.cpu, 3);
	check_eq_u64(s.period, 0x9e7);
	check_eq_u64(s.raw_size, 12);
	check(s.raw != NULL && memcmp(s.raw, "raw-payload", 12) == 0);
	check_eq_u64(s.weight, 0x3e1);
	check_eq_u64(s.weight_var2, 0);
	check_eq_u64(s.data_src, 0xd5c);
	check_eq_u64(s.phys_addr, 0x1234000);
	check_eq_u64(s.data_page_size, 2 << 20);
	check_eq_u64(s.present, ALL_TYPE);
	check_size_exact(&l, &b);

	/* The same bytes read with another read_format must not fit. */
	l.read_format &= ~(uint64_t)PERF_FORMAT_LOST;
	check_eq_i64(record_parse_sample(&l, hdr, &s), -EINVAL);
	l.read_format |= PERF_FORMAT_LOST | (1u << 5);
	check_eq_i64(record_parse_sample(&l, hdr, &s), -ENOTSUP);
	l.read_format &= ~(uint64_t)(1u << 5);

	/*
	 * Counts whose byte size wraps around 2^64 to exactly the right
	 * size: 2 + 2^61 entries of 24 bytes, 3 + 2^61 callchain ips.
	 */
	b.buf[10] = 2 + (UINT64_C(1) << 61);
	check_eq_i64(record_parse_sample(&l, hdr, &s), -EINVAL);
	b.buf[10] = 2;
	check_eq_i64(record_parse_sample(&l, hdr, &s), 0);
	b.buf[19] = 3 + (UINT64_C(1) << 61);
	check_eq_i64(record_parse_sample(&l, hdr, &s), -EINVAL);
	b.buf[19] = 4;
	check_eq_i64(record_parse_sample(&l, hdr, &s), -EINVAL);
	b.buf[19] = 3;
	check_eq_i64(record_parse_sample(&l, hdr, &s), 0);
}

/* Non-group READ, and ID standing in for a missing IDENTIFIER. */
static void
test_read_single(void)
{
	struct record_layout l = {
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR |
			       PERF_SAMPLE_ID | PERF_SAMPLE_READ |
			       PERF_SAMPLE_DATA_SRC,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_ID,
	};
	const struct perf_event_header *hdr;
	struct record_sample s;
	struct rb b;

	rb_begin(&b, PERF_RECORD_SAMPLE);
	rb_u32(&b, 60);
	rb_u32(&b, 61);
	rb_u64(&b, 0xa000);
	rb_u64(&b, 0x1d1d);		/* id */
	rb_u64(&b, 5);			/* value */
	rb_u64(&b, 6);			/* time_enabled */
	rb_u64(&b, 0x1d1d);		/* id */
	rb_u64(&b, 0x81);		/* data_src */
	hdr = rb_end(&b);
	check_eq_i64(record_parse_sample(&l, hdr, &s), 0);
	check_eq_u64(s.identifier, 0x1d1d);
	check_eq_u64(s.addr, 0xa000);
	check_eq_u64(s.data_src, 0x81);
	check_size_exact(&l, &b);
}

int
main(void)
{
	test_raw_tracepoint();
	test_all_fields();
	test_read_single();
	return test_result();
}
