#include "config.h"

/*
 * record_* decoders against records laid out field by field, in the order
 * perf_output_sample() writes them (kernel-abi.md section 4): the
 * fixed-size sample fields by rb_sample(), the rest by hand.  Each field
 * gets a distinct value so that a walker reading the wrong slot fails a
 * check instead of passing by coincidence.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "record.h"
#include "testlib.h"

/* A record under construction; u64 storage keeps it 8-byte aligned. */
struct rb {
	uint64_t buf[128];
	size_t len;
};

static struct perf_event_header *
rb_hdr(struct rb *b)
{
	return (struct perf_event_header *)b->buf;
}

static void
rb_begin(struct rb *b, uint32_t type)
{
	memset(b, 0, sizeof(*b));
	rb_hdr(b)->type = type;
	b->len = sizeof(struct perf_event_header);
}

static void
rb_bytes(struct rb *b, const void *p, size_t len)
{
	memcpy((unsigned char *)b->buf + b->len, p, len);
	b->len += len;
}

static void
rb_u64(struct rb *b, uint64_t v)
{
	rb_bytes(b, &v, sizeof(v));
}

static void
rb_u32(struct rb *b, uint32_t v)
{
	rb_bytes(b, &v, sizeof(v));
}

static const struct perf_event_header *
rb_end(struct rb *b)
{
	rb_hdr(b)->size = (uint16_t)b->len;
	return rb_hdr(b);
}

/*
 * The fixed-size fields of a sample: what rb_sample() writes and what
 * check_sample() expects back.  res is written only, weight_var2
 * expected only (WEIGHT_STRUCT splits the written weight).
 */
struct sample_fields {
	uint64_t identifier, ip;
	uint32_t pid, tid;
	uint64_t time, addr;
	uint32_t cpu, res;
	uint64_t period, weight, weight_var2, data_src, data_page_size;
};

#define RB_SAMPLE_FIXED	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |	\
			 PERF_SAMPLE_TID | PERF_SAMPLE_TIME |		\
			 PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |		\
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT |	\
			 PERF_SAMPLE_WEIGHT_STRUCT |			\
			 PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_DATA_PAGE_SIZE)

/*
 * A whole SAMPLE record of the fields `type` selects, in ABI order.  Only
 * the fixed-size ones: a type with READ, CALLCHAIN, RAW or the like is a
 * mistake in the test, reported as a failure.
 */
static const struct perf_event_header *
rb_sample(struct rb *b, uint64_t type, const struct sample_fields *f)
{
	if (type & ~(uint64_t)RB_SAMPLE_FIXED)
		test_fail_at(__FILE__, __LINE__,
			     "rb_sample: type %#llx has variable-size fields",
			     (unsigned long long)type);
	rb_begin(b, PERF_RECORD_SAMPLE);
	if (type & PERF_SAMPLE_IDENTIFIER)
		rb_u64(b, f->identifier);
	if (type & PERF_SAMPLE_IP)
		rb_u64(b, f->ip);
	if (type & PERF_SAMPLE_TID) {
		rb_u32(b, f->pid);
		rb_u32(b, f->tid);
	}
	if (type & PERF_SAMPLE_TIME)
		rb_u64(b, f->time);
	if (type & PERF_SAMPLE_ADDR)
		rb_u64(b, f->addr);
	if (type & PERF_SAMPLE_CPU) {
		rb_u32(b, f->cpu);
		rb_u32(b, f->res);
	}
	if (type & PERF_SAMPLE_PERIOD)
		rb_u64(b, f->period);
	if (type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		rb_u64(b, f->weight);
	if (type & PERF_SAMPLE_DATA_SRC)
		rb_u64(b, f->data_src);
	if (type & PERF_SAMPLE_DATA_PAGE_SIZE)
		rb_u64(b, f->data_page_size);
	return rb_end(b);
}

/*
 * Every fixed-size field of a parse against `want`: a field the type does
 * not select must come back 0, and present must be the type.  Failures
 * are reported at the caller's line.
 */
#define check_sample(s, type, want) \
	check_sample_at(__FILE__, __LINE__, (s), (type), (want))

static void
check_sample_at(const char *file, int line, const struct record_sample *s,
		uint64_t type, const struct sample_fields *want)
{
#define CHECK_FIELD(bits, field)					\
	test_eq_u64(file, line, "s." #field, "want." #field, s->field,	\
		    (type & (bits)) ? want->field : 0)
	CHECK_FIELD(PERF_SAMPLE_IDENTIFIER, identifier);
	CHECK_FIELD(PERF_SAMPLE_IP, ip);
	CHECK_FIELD(PERF_SAMPLE_TID, pid);
	CHECK_FIELD(PERF_SAMPLE_TID, tid);
	CHECK_FIELD(PERF_SAMPLE_TIME, time);
	CHECK_FIELD(PERF_SAMPLE_ADDR, addr);
	CHECK_FIELD(PERF_SAMPLE_CPU, cpu);
	CHECK_FIELD(PERF_SAMPLE_PERIOD, period);
	CHECK_FIELD(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, weight);
	CHECK_FIELD(PERF_SAMPLE_WEIGHT_STRUCT, weight_var2);
	CHECK_FIELD(PERF_SAMPLE_DATA_SRC, data_src);
	CHECK_FIELD(PERF_SAMPLE_DATA_PAGE_SIZE, data_page_size);
#undef CHECK_FIELD
	test_eq_u64(file, line, "s.present", "type", s->present, type);
}

/*
 * Every shorter 8-byte-aligned size and one 8 bytes longer must be
 * refused, and a refusal leaves nothing behind in out.
 */
static void
check_size_exact(const struct record_layout *l, struct rb *b)
{
	struct perf_event_header *hdr = rb_hdr(b);
	struct record_sample s;
	uint16_t full = hdr->size, sz;
	size_t bad = 0;

	for (sz = 0; sz < full; sz += 4) {
		hdr->size = sz;
		memset(&s, 0xa5, sizeof(s));
		if (record_parse_sample(l, hdr, &s) != -EINVAL || s.present)
			bad++;
	}
	memset((unsigned char *)b->buf + full, 0, 8);
	hdr->size = (uint16_t)(full + 8);
	if (record_parse_sample(l, hdr, &s) != -EINVAL)
		bad++;
	hdr->size = full;
	check_eq_u64(bad, 0);
	check_eq_i64(record_parse_sample(l, hdr, &s), 0);
}

#define FAULTS_TYPE	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |	\
			 PERF_SAMPLE_TID | PERF_SAMPLE_TIME |		\
			 PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU)

static void
test_faults_layout(void)
{
	struct record_layout l = { .sample_type = FAULTS_TYPE };
	const struct sample_fields f = {
		.identifier = 0xabc, .ip = 0x401000, .pid = 4242, .tid = 4243,
		.time = 123456789, .addr = 0x7f00deadb000, .cpu = 1,
		.res = 0xeeee,
	};
	const struct perf_event_header *hdr;
	struct record_sample s;
	struct rb b;

	hdr = rb_sample(&b, FAULTS_TYPE, &f);
	check_eq_u64(hdr->size, 56);

	check_eq_i64(record_parse_sample(&l, hdr, &s), 0);
	check_sample(&s, FAULTS_TYPE, &f);
	check(s.raw == NULL);
	check_size_exact(&l, &b);

	/* The same record parsed for another layout is drift. */
	l.sample_type = FAULTS_TYPE | PERF_SAMPLE_PERIOD;
	check_eq_i64(record_parse_sample(&l, hdr, &s), -EINVAL);
	l.sample_type = FAULTS_TYPE & ~PERF_SAMPLE_IP;
	check_eq_i64(record_parse_sample(&l, hdr, &s), -EINVAL);

	/* Only SAMPLE records are samples. */
	l.sample_type = FAULTS_TYPE;
	rb_hdr(&b)->type = PERF_RECORD_LOST;
	check_eq_i64(record_parse_sample(&l, hdr, &s), -EINVAL);
}

static void
test_datasrc_layout(void)
{
	struct record_layout l = {
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_DATA_SRC |
			       PERF_SAMPLE_DATA_PAGE_SIZE,
	};
	const struct sample_fields f = {
		.ip = 0x401234, .pid = 10, .tid = 11, .time = 999,
		.addr = 0x5555000, .cpu = 0, .res = 0,
		.data_src = 0x1e05080021, .data_page_size = 4096,
	};
	const struct perf_event_header *hdr;
	struct record_sample s;
	struct rb b;

	hdr = rb_sample(&b, l.sample_type, &f);
	check_eq_u64(hdr->size, 64);

	check_eq_i64(record_parse_sample(&l, hdr, &s), 0);
	check_sample(&s, l.sample_type, &f);
	check_size_exact(&l, &b);
}

static void
test_period_layout(void)
{
	struct record_layout l = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
	};
	const struct sample_fields f = {
		.identifier = 71, .pid = 20, .tid = 21, .time = 31337,
		.addr = 0x7fffa000, .cpu = 1, .res = 0, .period = 4097,
	};
	const struct perf_event_header *hdr;
	struct record_sample s;
	struct rb b;

	hdr = rb_sample(&b, l.sample_type, &f);
	check_eq_u64(hdr->size, 56);

	check_eq_i64(record_parse_sample(&l, hdr, &s), 0);
	check_sample(&s, l.sample_type, &f);
	check_size_exact(&l, &b);
}

#define PEBS_TYPE	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |	\
			 PERF_SAMPLE_TID | PERF_SAMPLE_TIME |		\
			 PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |		\
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_DATA_SRC)

static void
test_pebs_layout(void)
{
	struct record_layout l = {
		.sample_type = PEBS_TYPE | PERF_SAMPLE_WEIGHT_STRUCT,
	};
	const struct perf_event_header *hdr;
	struct record_sample s;
	struct rb b;
	/* var1_dw = 500 cycles, var2_w = 0x123, var3_w = 7. */
	const struct sample_fields f = {
		.identifier = 5, .ip = 0x4011f0, .pid = 30, .tid = 31,
		.time = 77777, .addr = 0x7f0012345678, .cpu = 1, .res = 0,
		.period = 20011,
		.weight = 500 | (UINT64_C(0x123) << 32) | (UINT64_C(7) << 48),
		.data_src = 0x68100142,
	};
	struct sample_fields want;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		hdr = rb_sample(&b, l.sample_type, &f);
		check_eq_u64(hdr->size, 80);

		want = f;
		if (pass == 0) {
			want.weight = 500;
			want.weight_var2 = 0x123;
		}
		check_eq_i64(record_parse_sample(&l, hdr, &s), 0);
		check_sample(&s, l.sample_type, &want);
		check_size_exact(&l, &b);
		l.sample_type = PEBS_TYPE | PERF_SAMPLE_WEIGHT;
	}

	/* perf_event_open() refuses both weight kinds at once. */
	l.sample_type = PEBS_TYPE | PERF_SAMPLE_WEIGHT |
			PERF_SAMPLE_WEIGHT_STRUCT;
	check_eq_i64(record_parse_sample(&l, hdr, &s), -EINVAL);
}

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
	int i;

	rb_begin(&b, PERF_RECORD_SAMPLE);
	rb_u64(&b, 0x1d);		/* identifier */
	rb_u64(&b, 0x1f);		/* ip */
	rb_u32(&b, 50);
	rb_u32(&b, 51);
	rb_u64(&b, 0x7131);		/* time */
	rb_u64(&b, 0xadd7);		/* addr */
	rb_u64(&b, 0x1d2);		/* id */
	rb_u64(&b, 0x5712);		/* stream_id */
	rb_u32(&b, 3);
	rb_u32(&b, 0);
	rb_u64(&b, 0x9e7);		/* period */
	rb_u64(&b, 2);			/* read: nr */
	rb_u64(&b, 1111);		/* time_enabled */
	rb_u64(&b, 1110);		/* time_running */
	for (i = 0; i < 2; i++) {
		rb_u64(&b, 100 + i);	/* value */
		rb_u64(&b, 200 + i);	/* id */
		rb_u64(&b, 300 + i);	/* lost */
	}
	rb_u64(&b, 3);			/* callchain: nr */
	rb_u64(&b, 0xffffffffff600000);
	rb_u64(&b, 0x401000);
	rb_u64(&b, 0x402000);
	rb_u32(&b, 12);			/* raw: 4 + 12 = 16 */
	rb_bytes(&b, "raw-payload", 12);
	rb_u64(&b, 0x3e1);		/* weight */
	rb_u64(&b, 0xd5c);		/* data_src */
	rb_u64(&b, 0x7a);		/* transaction */
	rb_u64(&b, 0x1234000);		/* phys_addr */
	rb_u64(&b, 0xc9);		/* cgroup */
	rb_u64(&b, 2 << 20);		/* data_page_size */
	rb_u64(&b, 4096);		/* code_page_size */
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

static void
test_unsupported(void)
{
	static const uint64_t bits[] = {
		PERF_SAMPLE_BRANCH_STACK, PERF_SAMPLE_REGS_USER,
		PERF_SAMPLE_STACK_USER, PERF_SAMPLE_REGS_INTR,
		PERF_SAMPLE_AUX, UINT64_C(1) << 25, UINT64_C(1) << 40,
		UINT64_C(1) << 63,
	};
	struct record_layout l;
	struct record_sample s;
	struct rb b;
	size_t i;

	rb_begin(&b, PERF_RECORD_SAMPLE);
	for (i = 0; i < 12; i++)
		rb_u64(&b, i);
	rb_end(&b);
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		l = (struct record_layout){ .sample_type = FAULTS_TYPE |
							   bits[i] };
		check_eq_i64(record_parse_sample(&l, rb_hdr(&b), &s),
			     -ENOTSUP);
	}
}

#define ID_ALL		(PERF_SAMPLE_TID | PERF_SAMPLE_TIME |	\
			 PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |	\
			 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* sample_id: {pid, tid}, time, id, stream_id, {cpu, res}, identifier. */
static void
rb_trailer_all(struct rb *b)
{
	rb_u32(b, 700);
	rb_u32(b, 701);
	rb_u64(b, 0x71e);
	rb_u64(b, 0x1d0);
	rb_u64(b, 0x5d0);
	rb_u32(b, 2);
	rb_u32(b, 0);
	rb_u64(b, 0x1de);
}

static void
test_task(void)
{
	struct record_layout l = {
		.sample_type = ID_ALL | PERF_SAMPLE_ADDR | PERF_SAMPLE_IP,
		.sample_id_all = true,
	};
	const struct perf_event_header *hdr;
	struct record_task task;
	struct record_id rid;
	uint64_t ident = 0;
	struct rb b;

	rb_begin(&b, PERF_RECORD_FORK);
	rb_u32(&b, 100);
	rb_u32(&b, 1);
	rb_u32(&b, 102);
	rb_u32(&b, 101);
	rb_u64(&b, 5555);
	rb_trailer_all(&b);
	hdr = rb_end(&b);
	check_eq_u64(hdr->size, 8 + RECORD_FORK_BODY + 48);

	check_eq_i64(record_parse_task(hdr, &task), 0);
	check_eq_u64(task.pid, 100);
	check_eq_u64(task.ppid, 1);
	check_eq_u64(task.tid, 102);
	check_eq_u64(task.ptid, 101);
	check_eq_u64(task.time, 5555);

	check_eq_i64(record_parse_id(&l, hdr, RECORD_FORK_BODY, &rid), 0);
	check_eq_u64(rid.pid, 700);
	check_eq_u64(rid.tid, 701);
	check_eq_u64(rid.time, 0x71e);
	check_eq_u64(rid.id, 0x1d0);
	check_eq_u64(rid.stream_id, 0x5d0);
	check_eq_u64(rid.cpu, 2);
	check_eq_u64(rid.identifier, 0x1de);
	check_eq_i64(record_identifier(hdr, &ident), 0);
	check_eq_u64(ident, 0x1de);

	check_eq_i64(record_parse_id(&l, hdr, RECORD_FORK_BODY + 8, &rid),
		     -EINVAL);
	l.sample_id_all = false;
	check_eq_i64(record_parse_id(&l, hdr, RECORD_FORK_BODY, &rid),
		     -EINVAL);

	/* A partial trailer: time and {cpu, res} only, ID stands in. */
	l = (struct record_layout){
		.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_ID,
		.sample_id_all = true,
	};
	rb_begin(&b, PERF_RECORD_EXIT);
	rb_u32(&b, 200);
	rb_u32(&b, 199);
	rb_u32(&b, 201);
	rb_u32(&b, 200);
	rb_u64(&b, 6666);
	rb_u64(&b, 0x7171);
	rb_u64(&b, 0x1d7);
	rb_u32(&b, 1);
	rb_u32(&b, 0);
	hdr = rb_end(&b);
	check_eq_i64(record_parse_task(hdr, &task), 0);
	check_eq_u64(task.tid, 201);
	check_eq_u64(task.time, 6666);
	check_eq_i64(record_parse_id(&l, hdr, RECORD_FORK_BODY, &rid), 0);
	check_eq_u64(rid.pid, 0);
	check_eq_u64(rid.time, 0x7171);
	check_eq_u64(rid.id, 0x1d7);
	check_eq_u64(rid.cpu, 1);
	check_eq_u64(rid.identifier, 0x1d7);

	rb_hdr(&b)->size = 8 + RECORD_FORK_BODY - 8;
	check_eq_i64(record_parse_task(hdr, &task), -EINVAL);
	/* Body alone longer than the record: no trailer to read anywhere. */
	check_eq_i64(record_parse_id(&l, hdr, RECORD_FORK_BODY, &rid),
		     -EINVAL);
	rb_hdr(&b)->size = 8 + RECORD_FORK_BODY;
	check_eq_i64(record_parse_task(hdr, &task), 0);
	check_eq_i64(record_parse_id(&l, hdr, RECORD_FORK_BODY, &rid),
		     -EINVAL);
	rb_hdr(&b)->type = PERF_RECORD_COMM;
	check_eq_i64(record_parse_task(hdr, &task), -EINVAL);
}

static void
test_lost(void)
{
	struct record_layout l = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID,
		.sample_id_all = true,
	};
	const struct perf_event_header *hdr;
	struct record_id rid;
	uint64_t lost = 0, ident = 0;
	struct rb b;

	rb_begin(&b, PERF_RECORD_LOST);
	rb_u64(&b, 0x1d1);		/* id */
	rb_u64(&b, 1234);		/* lost */
	rb_u32(&b, 5);
	rb_u32(&b, 6);
	rb_u64(&b, 0x1d1);		/* identifier */
	hdr = rb_end(&b);
	check_eq_i64(record_parse_lost(hdr, &lost), 0);
	check_eq_u64(lost, 1234);
	check_eq_i64(record_identifier(hdr, &ident), 0);
	check_eq_u64(ident, 0x1d1);
	check_eq_i64(record_parse_id(&l, hdr, RECORD_LOST_BODY, &rid), 0);
	check_eq_u64(rid.tid, 6);
	check_eq_u64(rid.identifier, 0x1d1);
	rb_hdr(&b)->size = 16;
	check_eq_i64(record_parse_lost(hdr, &lost), -EINVAL);

	rb_begin(&b, PERF_RECORD_LOST_SAMPLES);
	rb_u64(&b, 99);
	hdr = rb_end(&b);
	check_eq_i64(record_parse_lost(hdr, &lost), 0);
	check_eq_u64(lost, 99);
	rb_hdr(&b)->size = 8;
	check_eq_i64(record_parse_lost(hdr, &lost), -EINVAL);
	check_eq_i64(record_identifier(hdr, &ident), -EINVAL);

	rb_begin(&b, PERF_RECORD_THROTTLE);
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	hdr = rb_end(&b);
	check_eq_i64(record_parse_lost(hdr, &lost), -EINVAL);

	/* A SAMPLE's identifier is its first u64, not its last. */
	rb_begin(&b, PERF_RECORD_SAMPLE);
	rb_u64(&b, 0xf1257);
	rb_u64(&b, 0x1a57);
	hdr = rb_end(&b);
	check_eq_i64(record_identifier(hdr, &ident), 0);
	check_eq_u64(ident, 0xf1257);
}

static void
test_comm(void)
{
	struct record_layout l = {
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_IDENTIFIER,
		.sample_id_all = true,
	};
	const struct perf_event_header *hdr;
	struct record_id rid;
	uint32_t pid = 0, tid = 0;
	char comm[16];
	struct rb b;

	rb_begin(&b, PERF_RECORD_COMM);
	rb_u32(&b, 4242);
	rb_u32(&b, 4243);
	rb_bytes(&b, "bench\0\0\0", 8);
	rb_u32(&b, 4242);
	rb_u32(&b, 4243);
	rb_u64(&b, 88);
	rb_u64(&b, 0xc0);
	hdr = rb_end(&b);
	check_eq_i64(record_parse_comm(hdr, &pid, &tid, comm), 0);
	check_eq_u64(pid, 4242);
	check_eq_u64(tid, 4243);
	check_eq_str(comm, "bench");
	check_eq_i64(record_parse_id(&l, hdr, 16, &rid), 0);
	check_eq_u64(rid.time, 88);
	check_eq_u64(rid.identifier, 0xc0);

	/* 15 characters, NUL, no padding needed. */
	rb_begin(&b, PERF_RECORD_COMM);
	rb_u32(&b, 1);
	rb_u32(&b, 2);
	rb_bytes(&b, "abcdefghijklmno", 16);
	hdr = rb_end(&b);
	check_eq_i64(record_parse_comm(hdr, &pid, &tid, comm), 0);
	check_eq_str(comm, "abcdefghijklmno");

	/* Unterminated and too long: cut at 15. */
	rb_begin(&b, PERF_RECORD_COMM);
	rb_u32(&b, 1);
	rb_u32(&b, 2);
	rb_bytes(&b, "ABCDEFGHIJKLMNOPQRSTUVWX", 24);
	hdr = rb_end(&b);
	check_eq_i64(record_parse_comm(hdr, &pid, &tid, comm), 0);
	check_eq_str(comm, "ABCDEFGHIJKLMNO");

	/* Unterminated at the end of the record: never read past it. */
	rb_hdr(&b)->size = 24;
	check_eq_i64(record_parse_comm(hdr, &pid, &tid, comm), 0);
	check_eq_str(comm, "ABCDEFGH");

	rb_hdr(&b)->size = 16;
	check_eq_i64(record_parse_comm(hdr, &pid, &tid, comm), -EINVAL);
	rb_hdr(&b)->size = 24;
	rb_hdr(&b)->type = PERF_RECORD_FORK;
	check_eq_i64(record_parse_comm(hdr, &pid, &tid, comm), -EINVAL);
}

int
main(void)
{
	test_faults_layout();
	test_datasrc_layout();
	test_period_layout();
	test_pebs_layout();
	test_raw_tracepoint();
	test_all_fields();
	test_read_single();
	test_unsupported();
	test_task();
	test_lost();
	test_comm();
	return test_result();
}
