#include "config.h"

/*
 * Replay's fixed-layout sample decoder (replay_int.h): a SAMPLE of an
 * event without fields of variable size but RAW, read by copies worked
 * out once per event.
 */

#include <stddef.h>
#include <string.h>

#include "base.h"
#include "replay_int.h"

/* The fields record_sample_fill reads; the others are never looked at
 * (they stay 0, as record_sample_fill leaves them in the fixed layout). */
static const enum record_field replay_read[] = {
	RECORD_F_IDENTIFIER, RECORD_F_IP, RECORD_F_TID, RECORD_F_TIME,
	RECORD_F_ADDR, RECORD_F_ID, RECORD_F_CPU, RECORD_F_PERIOD,
	RECORD_F_WEIGHT, RECORD_F_DATA_SRC, RECORD_F_PHYS_ADDR,
	RECORD_F_DATA_PAGE_SIZE,
};

/* Where each of them goes in struct record_sample.  {pid, tid} and {cpu,
 * res} go as 8 bytes in the record's memory order: on a little-endian
 * host the same as record_sample_fill's low and high halves, and res
 * lands in the padding after cpu. */
static const uint16_t replay_dst[RECORD_F__N] = {
	[RECORD_F_IDENTIFIER] = offsetof(struct record_sample, identifier),
	[RECORD_F_IP] = offsetof(struct record_sample, ip),
	[RECORD_F_TID] = offsetof(struct record_sample, pid),
	[RECORD_F_TIME] = offsetof(struct record_sample, time),
	[RECORD_F_ADDR] = offsetof(struct record_sample, addr),
	[RECORD_F_ID] = offsetof(struct record_sample, id),
	[RECORD_F_CPU] = offsetof(struct record_sample, cpu),
	[RECORD_F_PERIOD] = offsetof(struct record_sample, period),
	[RECORD_F_WEIGHT] = offsetof(struct record_sample, weight),
	[RECORD_F_DATA_SRC] = offsetof(struct record_sample, data_src),
	[RECORD_F_PHYS_ADDR] = offsetof(struct record_sample, phys_addr),
	[RECORD_F_DATA_PAGE_SIZE] = offsetof(struct record_sample,
					     data_page_size),
};

_Static_assert(offsetof(struct record_sample, tid) ==
	       offsetof(struct record_sample, pid) + 4, "pid, tid adjacent");
_Static_assert(offsetof(struct record_sample, period) >=
	       offsetof(struct record_sample, cpu) + 8, "8 bytes at cpu");

/* One copy of field f at off (RAW of 0 bytes) to dst. */
static void
replay_fixed_add(struct replay_fixed *fx, enum record_field f, int32_t off,
		 uint16_t dst)
{
	if (f < RECORD_F_RAW)
		fx->n_before++;
	fx->off[fx->n] = (uint16_t)off;
	fx->dst[fx->n++] = dst;
}

void
replay_fixed_build(struct replay_fixed *fx, const struct record_layout *l)
{
	int32_t off[RECORD_F__N];

	memset(fx, 0, sizeof(*fx));
	fx->raw = -1;
	/* The copies take {pid, tid} in memory order: little-endian only
	 * (elsewhere every record is walked). */
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return;
	/* RAW's offset and the size without its data: RAW of 0 bytes. */
	fx->size = record_fixed_layout(l, 0, off);
	if (fx->size == 0)
		return;
	fx->raw = off[RECORD_F_RAW];
	for (size_t i = 0; i < ARRAY_SIZE(replay_read); i++) {
		enum record_field f = replay_read[i];

		if (off[f] < 0)
			continue;
		replay_fixed_add(fx, f, off[f], replay_dst[f]);
		/* Without IDENTIFIER, ID is the identifier too. */
		if (f == RECORD_F_ID && off[RECORD_F_IDENTIFIER] < 0)
			replay_fixed_add(fx, f, off[f],
					 offsetof(struct record_sample,
						  identifier));
	}
	/* Without RAW every field reads from the record's start: one loop. */
	if (fx->raw < 0)
		fx->n_before = fx->n;
	fx->weight_struct = off[RECORD_F_WEIGHT] >= 0 &&
			    (l->sample_type & PERF_SAMPLE_WEIGHT_STRUCT);
	fx->rs.present = l->sample_type;
}
