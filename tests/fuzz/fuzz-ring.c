#include "config.h"

/*
 * Fuzz target for the ring reader and the record decoders.
 *
 * Input layout: u64 data_tail, u16 head - tail, then the data area (one
 * 4 KiB page, zero-filled past the input).  Every record the ring hands
 * out goes through each decoder with a handful of layouts.  Invariants
 * that must hold for any input are checked with __builtin_trap(), so a
 * violation is a crash that libFuzzer (or a plain run) reports.
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target; otherwise
 * tests/fuzz/fuzzmain.c replays the files given, then a fixed pseudo-random set
 * of inputs.
 */

#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "fuzzmain.h"
#include "record.h"
#include "ring.h"

#define FUZZ_PAGE	4096u

static const struct record_layout fuzz_layouts[] = {
	{ PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
	  PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU, 0, true },
	{ PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
	  PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
	  PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT_STRUCT |
	  PERF_SAMPLE_DATA_SRC, 0, true },
	{ PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	  PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW, 0, true },
	{ PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_READ |
	  PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT |
	  PERF_SAMPLE_DATA_PAGE_SIZE,
	  PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST |
	  PERF_FORMAT_TOTAL_TIME_ENABLED, true },
};

static int
fuzz_record(const struct perf_event_header *hdr, void *ctx)
{
	const unsigned char *end = (const unsigned char *)hdr + hdr->size;
	struct record_sample s;
	struct record_task task;
	struct record_id rid;
	uint32_t pid, tid;
	uint64_t v;
	char comm[16];
	size_t i;

	(void)ctx;
	for (i = 0; i < ARRAY_SIZE(fuzz_layouts); i++) {
		const unsigned char *raw;

		if (record_parse_sample(&fuzz_layouts[i], hdr, &s) != 0)
			continue;
		raw = s.raw;
		if (raw != NULL && (raw < (const unsigned char *)hdr ||
				    raw + s.raw_size > end))
			__builtin_trap();
		if (s.present != fuzz_layouts[i].sample_type)
			__builtin_trap();
	}
	record_identifier(hdr, &v);
	record_parse_id(&fuzz_layouts[0], hdr, RECORD_FORK_BODY, &rid);
	record_parse_task(hdr, &task);
	record_parse_lost(hdr, &v);
	if (record_parse_comm(hdr, &pid, &tid, comm) == 0 &&
	    strlen(comm) > 15)
		__builtin_trap();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ring_stats st = { 0 };
	struct perf_event_mmap_page *meta;
	uint64_t tail, head;
	uint16_t delta;
	unsigned char *map;
	struct ring r;
	size_t n;

	if (size < 10)
		return 0;
	map = aligned_alloc(FUZZ_PAGE, 2 * FUZZ_PAGE);
	if (map == NULL)
		return 0;
	memset(map, 0, 2 * FUZZ_PAGE);
	meta = (void *)map;
	memcpy(&tail, data, 8);
	memcpy(&delta, data + 8, 2);
	head = tail + delta;
	meta->data_offset = FUZZ_PAGE;
	meta->data_size = FUZZ_PAGE;
	meta->data_tail = tail;
	meta->data_head = head;
	size -= 10;
	memcpy(map + FUZZ_PAGE, data + 10, size < FUZZ_PAGE ? size : FUZZ_PAGE);

	if (ring_init(&r, map, 2 * FUZZ_PAGE, FUZZ_PAGE) != 0)
		__builtin_trap();
	n = ring_drain(&r, fuzz_record, NULL, &st);
	/* A drain that is never stopped always ends with tail == head. */
	if (meta->data_tail != head || n != st.records ||
	    st.bytes + st.skipped_bytes != delta || st.bad_size > 1)
		__builtin_trap();
	if (ring_pending(&r) != 0 || ring_drain(&r, fuzz_record, NULL, &st))
		__builtin_trap();
	ring_fini(&r);
	free(map);
	return 0;
}

/*
 * Random inputs biased towards plausible records: 8-aligned sizes, small
 * types, tails near the end of the data area.
 */
static size_t
fuzz_ring_generate(uint64_t *x, uint8_t *buf, size_t cap)
{
	struct perf_event_header hdr = { 0 };
	uint64_t tail;
	uint16_t delta;

	(void)cap;	/* random_max: the whole input layout */
	fuzz_next(x);
	tail = (*x & 1) ? (*x >> 8) : (FUZZ_PAGE - 8 * ((*x >> 8) % 16));
	delta = (uint16_t)((*x >> 20) % (2 * FUZZ_PAGE));
	memcpy(buf, &tail, 8);
	memcpy(buf + 8, &delta, 2);
	for (size_t pos = 0; pos + 8 <= FUZZ_PAGE; pos += 8) {
		fuzz_next(x);
		memcpy(buf + 10 + pos, x, 8);
		if ((*x & 3) == 0) {
			hdr.type = (uint32_t)((*x >> 12) % 16);
			hdr.size = (uint16_t)(8 * ((*x >> 4) % 40));
			memcpy(buf + 10 + pos, &hdr, sizeof(hdr));
		}
	}
	return 10 + (size_t)((*x >> 32) % FUZZ_PAGE);
}

const struct fuzz_target fuzz_target = {
	.name = "fuzz-ring",
	.generate = fuzz_ring_generate,
	.seed = 0x9e3779b97f4a7c15,
	.n_random = 20000,
	.random_max = 10 + FUZZ_PAGE,
};
