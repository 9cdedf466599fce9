#include "config.h"

/*
 * Replay's own decoders for perf.data: the fixed-layout sample decoder
 * against record_parse_sample(), and MEM_TOPOLOGY turned into a physnode
 * map against perfdata_info_phys_node().
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "perfdata_read.h"
#include "physnode.h"
#include "record.h"
#include "replay_int.h"
#include "testlib.h"

static uint64_t fx_rng = 0x9e3779b97f4a7c15ull;

static uint64_t
fx_rand(void)
{
	fx_rng ^= fx_rng << 13;
	fx_rng ^= fx_rng >> 7;
	fx_rng ^= fx_rng << 17;
	return fx_rng;
}

/* Every field record_parse_sample() fills, compared one by one. */
static bool
fx_same(const struct record_sample *a, const struct record_sample *b)
{
	return a->identifier == b->identifier && a->ip == b->ip &&
	       a->pid == b->pid && a->tid == b->tid && a->time == b->time &&
	       a->addr == b->addr && a->cpu == b->cpu &&
	       a->period == b->period && a->weight == b->weight &&
	       a->weight_var2 == b->weight_var2 &&
	       a->data_src == b->data_src && a->phys_addr == b->phys_addr &&
	       a->data_page_size == b->data_page_size && a->raw == b->raw &&
	       a->raw_size == b->raw_size && a->present == b->present;
}

/* The sample_type bits of a fixed size (RAW's size is in the record). */
static const uint64_t fx_fixable[] = {
	PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID,
	PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
	PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD,
	PERF_SAMPLE_RAW, PERF_SAMPLE_WEIGHT, PERF_SAMPLE_DATA_SRC,
	PERF_SAMPLE_TRANSACTION, PERF_SAMPLE_PHYS_ADDR,
	PERF_SAMPLE_CGROUP, PERF_SAMPLE_DATA_PAGE_SIZE,
	PERF_SAMPLE_CODE_PAGE_SIZE, PERF_SAMPLE_WEIGHT_STRUCT,
};

/*
 * The size of a record of sample_type st as the general walk reads it,
 * with a RAW of *raw_len bytes (chosen here: 4 + len a multiple of 8, or
 * for how 5 not); for how 6, 8 bytes too long or short.
 */
static uint64_t
fx_record_size(uint64_t st, int how, uint32_t *raw_len)
{
	uint64_t walk_size = sizeof(struct perf_event_header);

	for (size_t i = 0; i < ARRAY_SIZE(fx_fixable); i++)
		if ((st & fx_fixable[i]) && fx_fixable[i] != PERF_SAMPLE_RAW &&
		    fx_fixable[i] != PERF_SAMPLE_WEIGHT_STRUCT)
			walk_size += 8;
	if ((st & PERF_SAMPLE_WEIGHT_STRUCT) &&
	    !(st & PERF_SAMPLE_WEIGHT))
		walk_size += 8;
	if (st & PERF_SAMPLE_RAW) {
		/* 4 + len a multiple of 8, or (how 5) not. */
		*raw_len = 4 + 8 * (uint32_t)(fx_rand() % 6);
		if (how == 5)
			*raw_len += 1 + (uint32_t)(fx_rand() % 7);
		walk_size += 4 + *raw_len;
	}
	if (how == 6)	/* a record 8 bytes too long or short */
		walk_size += fx_rand() & 1 ? 8 : (uint64_t)-8;
	return walk_size;
}

/*
 * Replay's fixed-layout decoder against the general walk: random
 * sample_types, random record bytes, exact sizes and sizes that are off,
 * RAW sizes good and bad.  Whatever the fast one decodes, the walk must
 * decode the same; a well-formed record of a fixed layout must go the
 * fast way (or the fast path is not there at all).
 */
static void
test_fixed_layout(void)
{
	uint64_t rec[1024 / 8];
	unsigned fast = 0, agree = 0, fixed_layouts = 0, bad = 0;

	for (int round = 0; round < 4000; round++) {
		struct record_layout l = { 0 };
		struct replay_fixed fx;
		struct record_sample a, b, *pa;
		struct perf_event_header *hdr = (void *)rec;
		uint64_t st = 0, walk_size;
		uint32_t raw_len = 0;
		int how = round % 8, fa, fb;

		for (size_t i = 0; i < ARRAY_SIZE(fx_fixable); i++)
			if (fx_rand() % 3 == 0)
				st |= fx_fixable[i];
		/* One in 8: a field of variable size (no fixed layout): a
		 * call chain, or a READ of a group. */
		if (how == 7) {
			st |= fx_rand() & 1 ? PERF_SAMPLE_CALLCHAIN :
			      PERF_SAMPLE_READ;
			if (st & PERF_SAMPLE_READ)
				l.read_format = PERF_FORMAT_GROUP;
		}
		l.sample_type = st;
		replay_fixed_build(&fx, &l);
		if (fx.size)
			fixed_layouts++;
		if (how == 7 || ((st & PERF_SAMPLE_WEIGHT) &&
				 (st & PERF_SAMPLE_WEIGHT_STRUCT)))
			check_eq_u64(fx.size, 0);
		walk_size = fx_record_size(st, how, &raw_len);
		if (walk_size < sizeof(*hdr) || walk_size > sizeof(rec))
			continue;
		for (size_t i = 0; i < sizeof(rec) / 8; i++)
			rec[i] = fx_rand();
		hdr->type = PERF_RECORD_SAMPLE;
		hdr->misc = 0;
		hdr->size = (uint16_t)walk_size;
		if ((st & PERF_SAMPLE_RAW) && fx.size)
			memcpy((char *)rec + fx.raw, &raw_len,
			       sizeof(raw_len));
		pa = replay_fixed_parse(&fx, hdr);
		fa = pa ? 0 : -1;
		if (pa)
			a = *pa;
		fb = record_parse_sample(&l, hdr, &b);
		if (fa == 0) {
			fast++;
			agree += fb == 0 && fx_same(&a, &b);
		}
		if (fb < 0)
			bad++;
		/* Well formed and fixed: must be the fast way. */
		if (fx.size && how < 5 && fb == 0)
			check_eq_i64(fa, 0);
		if (fx.size == 0)
			check_eq_i64(fa, -1);
	}
	check_eq_u64(agree, fast);
	check(fast > 1000);
	check(bad > 100);
	check(fixed_layouts > 2000);
	printf("# fixed layout: %u fast decodes agree with the walk, %u "
	       "records the walk refused\n", fast, bad);
}

/* MEM_TOPOLOGY as a physnode: the same node as perfdata_info_phys_node()
 * for every address but 0, the first listed node winning a block both
 * list, bits past nr_bits ignored. */
static void
test_replay_physnode(void)
{
	uint64_t bm0[2] = { 0xf0f0f0f0f0f0f0f0ull, UINT64_MAX };
	uint64_t bm1[2] = { 0x00ff00ff00ff00ffull, 0x3ull };
	struct perfdata_mem_node mem[2] = {
		{ .node = 3, .nr_bits = 70, .bitmap = bm0 },
		{ .node = 1, .nr_bits = 128, .bitmap = bm1 },
	};
	struct perfdata_info info = { 0 };
	struct physnode *p = NULL;
	uint64_t *big;
	unsigned same = 0, placed = 0;

	info.mem = mem;
	info.n_mem = 2;
	check_eq_i64(replay_physnode_build(&info, &p), 0);
	check(p == NULL);		/* no MEM_TOPOLOGY */
	info.mem_block_size = 1u << 27;
	check_eq_i64(replay_physnode_build(&info, &p), 0);
	check(p != NULL);
	for (uint64_t b = 0; b < 140; b++) {
		uint64_t phys = b * info.mem_block_size + 4096;
		int want = perfdata_info_phys_node(&info, phys);

		same += physnode_lookup(p, phys) == want;
		placed += want >= 0;
	}
	check_eq_u64(same, 140);
	/* 48 blocks in the first word (either map), 6 in the second. */
	check_eq_u64(placed, 54);
	check_eq_i64(physnode_lookup(p, 4 * info.mem_block_size), 3);
	check_eq_i64(physnode_lookup(p, 0 * info.mem_block_size + 8), 1);
	check_eq_i64(physnode_lookup(p, 0), -1);
	physnode_free(p);
	/* A size that is not a power of two, a block past the cap: the
	 * caller falls back to the lookup per sample. */
	info.mem_block_size = 3u << 20;
	check_eq_i64(replay_physnode_build(&info, &p), -EINVAL);
	check(p == NULL);
	info.mem_block_size = 1u << 27;
	big = calloc((1u << 24) / 64 + 1, sizeof(*big));
	check(big != NULL);
	if (!big)
		return;
	big[(1u << 24) / 64] = 1;
	mem[1].nr_bits = (1u << 24) + 64;
	mem[1].bitmap = big;
	check_eq_i64(replay_physnode_build(&info, &p), -EINVAL);
	check(p == NULL);
	big[(1u << 24) / 64] = 0;
	big[(1u << 24) / 64 - 1] = 1ull << 63;	/* the last block allowed */
	check_eq_i64(replay_physnode_build(&info, &p), 0);
	check_eq_i64(physnode_lookup(p, ((1ull << 24) - 1) *
				     info.mem_block_size), 1);
	physnode_free(p);
	free(big);
}

int
main(void)
{
	test_fixed_layout();
	test_replay_physnode();
	return test_result();
}
