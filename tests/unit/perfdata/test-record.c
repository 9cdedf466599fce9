#include "config.h"

/*
 * record_parse_sample() against SAMPLE records of fixed-size fields,
 * written by rb_sample() (record-build.h has the rest of the builder), and
 * sample_types it does not support.  Each field gets a distinct value so
 * that a walker reading the wrong slot fails a check instead of passing
 * by coincidence.  Variable-size fields are tested in
 * test-record-variable.c, records other than samples in
 * test-record-nonsample.c.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "record-build.h"
#include "record.h"
#include "testlib.h"

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

static void
test_unsupported(void)
{
	/* Bits no kernel defines (every defined one is walked:
	 * test-record-every). */
	static const uint64_t bits[] = {
		UINT64_C(1) << 25, UINT64_C(1) << 40, UINT64_C(1) << 63,
	};
	struct record_layout l;
	struct record_sample s;
	struct rb b;
	size_t i;

	rb_begin(&b, PERF_RECORD_SAMPLE);
	for (i = 0; i < 12; i++)
		rb_u64(&b, i);
	rb_end(&b);
	for (i = 0; i < ARRAY_SIZE(bits); i++) {
		l = (struct record_layout){ .sample_type = FAULTS_TYPE |
							   bits[i] };
		check_eq_i64(record_parse_sample(&l, rb_hdr(&b), &s),
			     -ENOTSUP);
	}
}

int
main(void)
{
	test_faults_layout();
	test_datasrc_layout();
	test_period_layout();
	test_pebs_layout();
	test_unsupported();
	return test_result();
}
