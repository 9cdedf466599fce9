#include "config.h"

/*
 * Every sample field perf can write (perf_output_sample() of Linux 6.18:
 * 25 sample_type bits, BRANCH_STACK with HW_INDEX and COUNTERS, READ of a
 * group with every read_format bit), laid out by hand in both byte orders:
 *   - record_parse_sample() gives back every value that was put in, and
 *     the call chain's caller;
 *   - perfdata_swap_body() turns the other-order record into the host one
 *     byte for byte (and back), RAW's payload left as it is, the user
 *     stack and AUX data swapped as u64 words (as perf does);
 *   - a file written in either order reads back, record and attr, byte
 *     for byte.
 * The other-order record is written here word by word, not through
 * memtop's swap.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "perfdata_read.h"
#include "perfdata_swap.h"
#include "perfdata_write.h"
#include "record.h"
#include "testlib.h"

#define REGS_USER_MASK	UINT64_C(0xff0f)	/* 12 registers */
#define REGS_INTR_MASK	UINT64_C(0x3)
#define NBRANCH		3
#define STACK_BYTES	64
#define AUX_BYTES	24

struct wb {
	uint64_t w[256];
	size_t len;		/* bytes */
	bool swap;
};

static void
wb_u64(struct wb *b, uint64_t v)
{
	if (b->swap)
		v = __builtin_bswap64(v);
	memcpy((unsigned char *)b->w + b->len, &v, 8);
	b->len += 8;
}

static void
wb_u32(struct wb *b, uint32_t v)
{
	if (b->swap)
		v = __builtin_bswap32(v);
	memcpy((unsigned char *)b->w + b->len, &v, 4);
	b->len += 4;
}

static void
wb_bytes(struct wb *b, const void *p, size_t n)
{
	memcpy((unsigned char *)b->w + b->len, p, n);
	b->len += n;
}

/* Bytes perf swaps as u64 words (n a multiple of 8). */
static void
wb_words(struct wb *b, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		memcpy((unsigned char *)b->w + b->len,
		       b->swap ? &(uint64_t){ __builtin_bswap64(v) } : &v, 8);
		b->len += 8;
	}
}

static uint64_t
every_type(bool weight_struct)
{
	return (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
		PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
		PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
		PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |
		PERF_SAMPLE_STACK_USER | PERF_SAMPLE_DATA_SRC |
		PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR |
		PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_AUX | PERF_SAMPLE_CGROUP |
		PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE) |
	       (weight_struct ? PERF_SAMPLE_WEIGHT_STRUCT : PERF_SAMPLE_WEIGHT);
}

static struct record_layout
every_layout(bool weight_struct)
{
	return (struct record_layout){
		.sample_type = every_type(weight_struct),
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
			       PERF_FORMAT_LOST |
			       PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_TOTAL_TIME_RUNNING,
		.sample_id_all = true,
		.branch_sample_type = PERF_SAMPLE_BRANCH_ANY |
				      PERF_SAMPLE_BRANCH_HW_INDEX |
				      RECORD_BRANCH_COUNTERS,
		.sample_regs_user = REGS_USER_MASK,
		.sample_regs_intr = REGS_INTR_MASK,
	};
}

/* Field values: field f's k-th u64 is 0x1000 * (f + 1) + k, so a value
 * read from the wrong place shows. */
static uint64_t
val(int f, int k)
{
	return UINT64_C(0x5a00000000000000) + 0x1000 * (uint64_t)(f + 1) +
	       (uint64_t)k;
}

/* The record, in b's order; `regs` false: abi 0 (no registers), an
 * empty stack (no dyn_size). */
static void
every_build(struct wb *b, bool regs)
{
	static const char raw[12] = "raw-payload";
	unsigned char stack[STACK_BYTES], aux[AUX_BYTES];
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE };

	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (unsigned char)(0x80 + i);
	for (size_t i = 0; i < sizeof(aux); i++)
		aux[i] = (unsigned char)(0x40 + i);
	b->len = 0;
	wb_bytes(b, &h, sizeof(h));	/* size set below, host order */
	wb_u64(b, val(RECORD_F_IDENTIFIER, 0));
	wb_u64(b, 0x401100);			/* ip */
	wb_u32(b, 4242);			/* pid */
	wb_u32(b, 4243);			/* tid */
	for (int f = RECORD_F_TIME; f <= RECORD_F_STREAM_ID; f++)
		wb_u64(b, val(f, 0));
	wb_u32(b, 7);				/* cpu */
	wb_u32(b, 0);
	wb_u64(b, val(RECORD_F_PERIOD, 0));
	/* READ: nr 2, time_enabled, time_running, 2 x {value, id, lost} */
	wb_u64(b, 2);
	for (int k = 0; k < 8; k++)
		wb_u64(b, val(RECORD_F_READ, k));
	/* CALLCHAIN: kernel frames, then the user context from the ip. */
	wb_u64(b, 6);
	wb_u64(b, (uint64_t)PERF_CONTEXT_KERNEL);
	wb_u64(b, UINT64_C(0xffffffff81000010));
	wb_u64(b, (uint64_t)PERF_CONTEXT_USER);
	wb_u64(b, 0x401100);
	wb_u64(b, 0x402233);			/* the caller */
	wb_u64(b, 0x403000);
	wb_u32(b, sizeof(raw));
	wb_bytes(b, raw, sizeof(raw));
	/* BRANCH_STACK: nr, hw_idx, nr x {from, to, flags}, nr counters */
	wb_u64(b, NBRANCH);
	wb_u64(b, val(RECORD_F_BRANCH_STACK, 99));
	for (int k = 0; k < 4 * NBRANCH; k++)
		wb_u64(b, val(RECORD_F_BRANCH_STACK, k));
	/* REGS_USER, STACK_USER */
	wb_u64(b, regs ? 2 : 0);
	for (int k = 0; regs && k < __builtin_popcountll(REGS_USER_MASK); k++)
		wb_u64(b, val(RECORD_F_REGS_USER, k));
	wb_u64(b, regs ? STACK_BYTES : 0);
	if (regs) {
		wb_words(b, stack, sizeof(stack));
		wb_u64(b, 40);			/* dyn_size */
	}
	for (int f = RECORD_F_WEIGHT; f <= RECORD_F_TRANSACTION; f++)
		wb_u64(b, val(f, 0));
	wb_u64(b, regs ? 2 : 0);
	for (int k = 0; regs && k < __builtin_popcountll(REGS_INTR_MASK); k++)
		wb_u64(b, val(RECORD_F_REGS_INTR, k));
	for (int f = RECORD_F_PHYS_ADDR; f <= RECORD_F_CODE_PAGE_SIZE; f++)
		wb_u64(b, val(f, 0));
	wb_u64(b, AUX_BYTES);
	wb_words(b, aux, sizeof(aux));
	h.size = (uint16_t)b->len;
	memcpy(b->w, &h, sizeof(h));
}

static bool
span_is(const struct record_span *s, uint64_t n, int f)
{
	uint64_t v;

	if (!s->p || s->n != n)
		return false;
	for (uint64_t k = 0; k < n; k++) {
		memcpy(&v, (const unsigned char *)s->p + 8 * k, 8);
		if (v != val(f, (int)k))
			return false;
	}
	return true;
}

static void
check_decoded(const struct record_sample *s, bool weight_struct, bool regs)
{
	uint64_t w = val(RECORD_F_WEIGHT, 0), v;

	check_eq_u64(s->identifier, val(RECORD_F_IDENTIFIER, 0));
	check_eq_u64(s->ip, 0x401100);
	check_eq_u64(s->pid, 4242);
	check_eq_u64(s->tid, 4243);
	check_eq_u64(s->time, val(RECORD_F_TIME, 0));
	check_eq_u64(s->addr, val(RECORD_F_ADDR, 0));
	check_eq_u64(s->id, val(RECORD_F_ID, 0));
	check_eq_u64(s->stream_id, val(RECORD_F_STREAM_ID, 0));
	check_eq_u64(s->cpu, 7);
	check_eq_u64(s->period, val(RECORD_F_PERIOD, 0));
	check_eq_u64(s->read.n, 9);
	check_eq_u64(s->callchain.n, 6);
	check_eq_u64(s->caller, 0x402233);
	check(s->raw && s->raw_size == 12 &&
	      memcmp(s->raw, "raw-payload", 12) == 0);
	check_eq_u64(s->branch_hw_idx, val(RECORD_F_BRANCH_STACK, 99));
	check_eq_u64(s->branches.n, NBRANCH);
	check_eq_u64(s->branch_counters.n, NBRANCH);
	if (s->branch_counters.p) {
		memcpy(&v, s->branch_counters.p, 8);
		check_eq_u64(v, val(RECORD_F_BRANCH_STACK, 3 * NBRANCH));
	}
	check_eq_u64(s->regs_user_abi, regs ? 2 : 0);
	check_eq_u64(s->regs_intr_abi, regs ? 2 : 0);
	if (regs) {
		check(span_is(&s->regs_user, 12, RECORD_F_REGS_USER));
		check(span_is(&s->regs_intr, 2, RECORD_F_REGS_INTR));
		check_eq_u64(s->stack_user.n, STACK_BYTES);
		check(s->stack_user.p &&
		      ((const unsigned char *)s->stack_user.p)[5] == 0x85);
		check_eq_u64(s->stack_user_dyn, 40);
	} else {
		check(s->regs_user.p == NULL && s->regs_intr.p == NULL);
		check_eq_u64(s->stack_user.n, 0);
	}
	check_eq_u64(s->weight, weight_struct ? (w & UINT32_MAX) : w);
	check_eq_u64(s->weight_var2, weight_struct ? ((w >> 32) & 0xffff) : 0);
	check_eq_u64(s->data_src, val(RECORD_F_DATA_SRC, 0));
	check_eq_u64(s->transaction, val(RECORD_F_TRANSACTION, 0));
	check_eq_u64(s->phys_addr, val(RECORD_F_PHYS_ADDR, 0));
	check_eq_u64(s->cgroup, val(RECORD_F_CGROUP, 0));
	check_eq_u64(s->data_page_size, val(RECORD_F_DATA_PAGE_SIZE, 0));
	check_eq_u64(s->code_page_size, val(RECORD_F_CODE_PAGE_SIZE, 0));
	check_eq_u64(s->aux.n, AUX_BYTES);
	check(s->aux.p && ((const unsigned char *)s->aux.p)[3] == 0x43);
	check_eq_u64(s->present, every_type(weight_struct));
}

/* Every shorter 8-byte-aligned size, and 8 bytes more, are refused. */
static void
check_sizes(const struct record_layout *l, struct wb *b)
{
	struct perf_event_header *h = (void *)b->w;
	uint16_t size = h->size;
	struct record_sample s;

	for (uint16_t cut = 8; cut < size; cut += 8) {
		h->size = cut;
		check_eq_i64(record_parse_sample(l, h, &s), -EINVAL);
	}
	b->w[size / 8] = 0;
	h->size = (uint16_t)(size + 8);
	check_eq_i64(record_parse_sample(l, h, &s), -EINVAL);
	h->size = size;
}

static void
test_every_field(bool weight_struct, bool regs)
{
	struct record_layout l = every_layout(weight_struct);
	struct wb host = { .swap = false }, other = { .swap = true }, back;
	struct record_sample s;
	int32_t off[RECORD_F__N];

	every_build(&host, regs);
	every_build(&other, regs);
	check_eq_u64(host.len, other.len);
	check_eq_i64(record_parse_sample(&l, (void *)host.w, &s), 0);
	check_decoded(&s, weight_struct, regs);
	check_eq_u64(record_fixed_layout(&l, 0, off), 0);

	/* Other order to host: byte for byte. */
	back = other;
	check_eq_i64(perfdata_swap_body((void *)back.w, &l, true), 0);
	check(memcmp(back.w, host.w, host.len) == 0);
	/* And host to the other order, as the writer does. */
	back = host;
	check_eq_i64(perfdata_swap_body((void *)back.w, &l, false), 0);
	check(memcmp(back.w, other.w, host.len) == 0);
	check_sizes(&l, &host);
}

/* Through a file of either order: the attr's masks and the record come
 * back as written. */
static void
test_file_round_trip(bool swap)
{
	struct record_layout l = every_layout(false);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.sample_period = 1,
		.sample_type = l.sample_type,
		.read_format = l.read_format,
		.sample_id_all = 1,
		.branch_sample_type = l.branch_sample_type,
		.sample_regs_user = REGS_USER_MASK,
		.sample_stack_user = STACK_BYTES,
		.sample_regs_intr = REGS_INTR_MASK,
	};
	struct perfdata_writer_opts o = { .force = true, .swap = swap };
	char path[] = "/tmp/memtop-test-record-every.XXXXXX", err[256];
	struct perfdata_writer *w = NULL;
	struct perfdata_reader *r = NULL;
	struct perfdata_record rec;
	struct record_sample s;
	struct wb host = { .swap = false };
	int fd = mkstemp(path), n = 0;

	check(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	every_build(&host, true);
	check_eq_i64(perfdata_writer_open(&w, path, &o, err, sizeof(err)), 0);
	check_eq_i64(perfdata_writer_add_event(w, &attr, "page-faults"), 0);
	check_eq_i64(perfdata_writer_add_id(w, 0, val(RECORD_F_IDENTIFIER, 0)),
		     0);
	check_eq_i64(perfdata_writer_write(w, (void *)host.w), 0);
	check_eq_i64(perfdata_writer_close(w, err, sizeof(err)), 0);
	perfdata_writer_free(w);
	check_eq_i64(perfdata_reader_open(&r, path, err, sizeof(err)), 0);
	unlink(path);
	if (!r)
		return;
	check_eq_u64(perfdata_reader_is_swapped(r), swap);
	check_eq_u64(perfdata_reader_event(r, 0)->layout.sample_regs_user,
		     REGS_USER_MASK);
	check_eq_u64(perfdata_reader_event(r, 0)->layout.sample_regs_intr,
		     REGS_INTR_MASK);
	check_eq_u64(perfdata_reader_event(r, 0)->layout.branch_sample_type,
		     l.branch_sample_type);
	while (perfdata_reader_next(r, &rec, err, sizeof(err)) == 1) {
		if (rec.hdr->type != PERF_RECORD_SAMPLE)
			continue;
		n++;
		check_eq_u64(rec.hdr->size, host.len);
		check(memcmp(rec.hdr, host.w, host.len) == 0);
		check_eq_i64(record_parse_sample(
				     &perfdata_reader_event(r, 0)->layout,
				     rec.hdr, &s), 0);
		check_decoded(&s, false, true);
	}
	check_eq_i64(n, 1);
	check_eq_u64(perfdata_reader_stats(r)->bad_records, 0);
	perfdata_reader_free(r);
}

/* The caller: the user frame after the ip, markers skipped. */
static void
test_caller(void)
{
	const uint64_t ku = (uint64_t)PERF_CONTEXT_KERNEL,
		       us = (uint64_t)PERF_CONTEXT_USER;
	const uint64_t user_only[] = { us, 0x1000, 0x2000, 0x3000 };
	const uint64_t kernel_ip[] = { ku, 0xffffffff81000000, us, 0x1000,
				       0x2000 };
	const uint64_t no_marker[] = { 0x1000, 0x2000 };
	const uint64_t kernel_only[] = { ku, 0xffffffff81000000 };
	const uint64_t leaf[] = { us, 0x1000 };

	check_eq_u64(record_callchain_caller(user_only, 4, 0x1000), 0x2000);
	/* A kernel ip: the first user frame is its caller. */
	check_eq_u64(record_callchain_caller(kernel_ip, 5,
					     0xffffffff81000000), 0x1000);
	check_eq_u64(record_callchain_caller(no_marker, 2, 0x1000), 0x2000);
	check_eq_u64(record_callchain_caller(kernel_only, 2, 0x1000), 0);
	check_eq_u64(record_callchain_caller(leaf, 2, 0x1000), 0);
	check_eq_u64(record_callchain_caller(leaf, 0, 0x1000), 0);
}

int
main(void)
{
	for (int ws = 0; ws < 2; ws++)
		for (int regs = 0; regs < 2; regs++)
			test_every_field(ws, regs);
	test_file_round_trip(false);
	test_file_round_trip(true);
	test_caller();
	return test_result();
}
