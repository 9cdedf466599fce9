#include "config.h"

/*
 * Decoding of kernel perf records.  Pure functions over bytes; any thread.
 *
 * Record bytes come from the ring (or a file) and are not trusted: every
 * field is bounds-checked against header.size before it is read, and every
 * read goes through memcpy so that a misaligned record is not undefined
 * behaviour.  Host byte order throughout, as the kernel writes it.
 */

#include <errno.h>
#include <string.h>

#include "record.h"

/* Bits 0..24: every sample_type bit that Linux 6.1 defines. */
#define RECORD_SAMPLE_KNOWN	((UINT64_C(1) << 25) - 1)

/* Fields whose size depends on what they hold: no fixed layout. */
#define RECORD_SAMPLE_VARIABLE						\
	((uint64_t)(PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_BRANCH_STACK |	\
		    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |	\
		    PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_AUX))

/* Bits 0..4: TOTAL_TIME_ENABLED/RUNNING, ID, GROUP, LOST. */
#define RECORD_READ_KNOWN	((UINT64_C(1) << 5) - 1)

/* The sample_id_all trailer fields, each one u64 wide. */
#define RECORD_ID_FIELDS						\
	((uint64_t)(PERF_SAMPLE_TID | PERF_SAMPLE_TIME |		\
		    PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |		\
		    PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER))

struct record_cursor {
	const unsigned char *p;
	const unsigned char *end;
};

static void
record_cursor_init(struct record_cursor *c,
		   const struct perf_event_header *hdr, size_t skip)
{
	c->p = (const unsigned char *)hdr + skip;
	c->end = (const unsigned char *)hdr + hdr->size;
}

static size_t
record_left(const struct record_cursor *c)
{
	return (size_t)(c->end - c->p);
}

static int
record_take_u64(struct record_cursor *c, uint64_t *v)
{
	if (record_left(c) < sizeof(*v))
		return -EINVAL;
	memcpy(v, c->p, sizeof(*v));
	c->p += sizeof(*v);
	return 0;
}

/* Two u32 in one u64 slot ({pid, tid}, {cpu, res}), first one first. */
static int
record_take_u32_pair(struct record_cursor *c, uint32_t *a, uint32_t *b)
{
	if (record_left(c) < 2 * sizeof(uint32_t))
		return -EINVAL;
	memcpy(a, c->p, sizeof(*a));
	memcpy(b, c->p + sizeof(*a), sizeof(*b));
	c->p += 2 * sizeof(uint32_t);
	return 0;
}

static int
record_skip(struct record_cursor *c, uint64_t len)
{
	if (record_left(c) < len)
		return -EINVAL;
	c->p += len;
	return 0;
}

/*
 * PERF_SAMPLE_READ, per read_format:
 *   !GROUP: u64 value; [time_enabled]; [time_running]; [id]; [lost]
 *    GROUP: u64 nr; [time_enabled]; [time_running];
 *           nr x { u64 value; [id]; [lost] }
 */
static int
record_skip_read(struct record_cursor *c, uint64_t read_format)
{
	uint64_t times = 0, entry = 8, nr;
	int err;

	if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
		times += 8;
	if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
		times += 8;
	if (read_format & PERF_FORMAT_ID)
		entry += 8;
	if (read_format & PERF_FORMAT_LOST)
		entry += 8;

	if (!(read_format & PERF_FORMAT_GROUP))
		return record_skip(c, times + entry);

	err = record_take_u64(c, &nr);
	if (err)
		return err;
	err = record_skip(c, times);
	if (err)
		return err;
	/* Divide rather than multiply: nr is untrusted and may overflow. */
	if (nr > record_left(c) / entry)
		return -EINVAL;
	return record_skip(c, nr * entry);
}

/* n things of `each` bytes in place (n untrusted: divided, not
 * multiplied). */
static int
record_take_span(struct record_cursor *c, uint64_t n, uint64_t each,
		 struct record_span *out)
{
	if (n > record_left(c) / each)
		return -EINVAL;
	out->p = c->p;
	out->n = n;
	return record_skip(c, n * each);
}

/* u64 nr; nr things of `each` bytes (CALLCHAIN's ips, AUX's bytes). */
static int
record_take_counted(struct record_cursor *c, uint64_t each,
		    struct record_span *out)
{
	uint64_t nr;
	int err = record_take_u64(c, &nr);

	return err ? err : record_take_span(c, nr, each, out);
}

/*
 * BRANCH_STACK: u64 nr; [u64 hw_idx] (HW_INDEX); nr x {from, to, flags};
 * [u64 counters[nr]] (COUNTERS), as branch_sample_type asked.
 */
static int
record_take_branches(struct record_cursor *c, const struct record_layout *l,
		     struct record_sample *out)
{
	uint64_t nr;
	int err = record_take_u64(c, &nr);

	if (!err && (l->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX))
		err = record_take_u64(c, &out->branch_hw_idx);
	if (!err)
		err = record_take_span(c, nr, 24, &out->branches);
	if (!err && (l->branch_sample_type & RECORD_BRANCH_COUNTERS))
		err = record_take_span(c, nr, 8, &out->branch_counters);
	return err;
}

/* REGS_USER, REGS_INTR: u64 abi; abi ? u64 regs[popcount(mask)]. */
static int
record_take_regs(struct record_cursor *c, uint64_t mask, uint64_t *abi,
		 struct record_span *regs)
{
	int err = record_take_u64(c, abi);

	if (err || *abi == 0)
		return err;
	return record_take_span(c, (uint64_t)__builtin_popcountll(mask), 8,
				regs);
}

/* STACK_USER: u64 size; size bytes; size ? u64 dyn_size (<= size). */
static int
record_take_stack(struct record_cursor *c, struct record_sample *out)
{
	int err = record_take_counted(c, 1, &out->stack_user);

	if (err || out->stack_user.n == 0)
		return err;
	err = record_take_u64(c, &out->stack_user_dyn);
	return err ? err : out->stack_user_dyn > out->stack_user.n ?
	       -EINVAL : 0;
}

/*
 * PERF_SAMPLE_RAW: u32 size; u8 data[size].  The kernel pads the data so
 * that 4 + size is a multiple of 8 and counts the padding in size, so the
 * fields after RAW stay u64-aligned.  A size that breaks this is drift.
 */
static int
record_take_raw(struct record_cursor *c, const void **raw, uint32_t *size)
{
	uint32_t len;

	if (record_left(c) < sizeof(len))
		return -EINVAL;
	memcpy(&len, c->p, sizeof(len));
	c->p += sizeof(len);
	if ((sizeof(len) + (uint64_t)len) % 8 != 0)
		return -EINVAL;
	*raw = c->p;
	*size = len;
	return record_skip(c, len);
}

/*
 * The fields in the order of perf_output_sample() in kernel/events/core.c,
 * which differs from the old uapi comment for those after REGS_INTR, with
 * the bit that puts each in and its size (0: it depends on the record).
 */
static const struct {
	uint64_t bit;
	unsigned size;
} record_fields[RECORD_F__N] = {
	[RECORD_F_IDENTIFIER] = { PERF_SAMPLE_IDENTIFIER, 8 },
	[RECORD_F_IP] = { PERF_SAMPLE_IP, 8 },
	[RECORD_F_TID] = { PERF_SAMPLE_TID, 8 },
	[RECORD_F_TIME] = { PERF_SAMPLE_TIME, 8 },
	[RECORD_F_ADDR] = { PERF_SAMPLE_ADDR, 8 },
	[RECORD_F_ID] = { PERF_SAMPLE_ID, 8 },
	[RECORD_F_STREAM_ID] = { PERF_SAMPLE_STREAM_ID, 8 },
	[RECORD_F_CPU] = { PERF_SAMPLE_CPU, 8 },
	[RECORD_F_PERIOD] = { PERF_SAMPLE_PERIOD, 8 },
	[RECORD_F_READ] = { PERF_SAMPLE_READ, 0 },
	[RECORD_F_CALLCHAIN] = { PERF_SAMPLE_CALLCHAIN, 0 },
	[RECORD_F_RAW] = { PERF_SAMPLE_RAW, 0 },
	[RECORD_F_BRANCH_STACK] = { PERF_SAMPLE_BRANCH_STACK, 0 },
	[RECORD_F_REGS_USER] = { PERF_SAMPLE_REGS_USER, 0 },
	[RECORD_F_STACK_USER] = { PERF_SAMPLE_STACK_USER, 0 },
	[RECORD_F_WEIGHT] = { PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT,
			      8 },
	[RECORD_F_DATA_SRC] = { PERF_SAMPLE_DATA_SRC, 8 },
	[RECORD_F_TRANSACTION] = { PERF_SAMPLE_TRANSACTION, 8 },
	[RECORD_F_REGS_INTR] = { PERF_SAMPLE_REGS_INTR, 0 },
	[RECORD_F_PHYS_ADDR] = { PERF_SAMPLE_PHYS_ADDR, 8 },
	[RECORD_F_CGROUP] = { PERF_SAMPLE_CGROUP, 8 },
	[RECORD_F_DATA_PAGE_SIZE] = { PERF_SAMPLE_DATA_PAGE_SIZE, 8 },
	[RECORD_F_CODE_PAGE_SIZE] = { PERF_SAMPLE_CODE_PAGE_SIZE, 8 },
	[RECORD_F_AUX] = { PERF_SAMPLE_AUX, 0 },
};

/* Whether record_parse_sample can walk records of l at all. */
static int
record_walkable(const struct record_layout *l)
{
	const uint64_t st = l->sample_type;

	if (st & ~RECORD_SAMPLE_KNOWN)
		return -ENOTSUP;
	if ((st & PERF_SAMPLE_READ) && (l->read_format & ~RECORD_READ_KNOWN))
		return -ENOTSUP;
	/* perf_event_open() refuses both; a record claiming both is junk. */
	if ((st & PERF_SAMPLE_WEIGHT) && (st & PERF_SAMPLE_WEIGHT_STRUCT))
		return -EINVAL;
	return 0;
}

/* PERF_SAMPLE_READ's size without GROUP (with it, it has none fixed). */
static unsigned
record_read_size(uint64_t read_format)
{
	return 8 * (1 + !!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		    !!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) +
		    !!(read_format & PERF_FORMAT_ID) +
		    !!(read_format & PERF_FORMAT_LOST));
}

uint32_t
record_fixed_layout(const struct record_layout *l, uint32_t raw_size,
		    int32_t off[RECORD_F__N])
{
	const uint64_t st = l->sample_type;
	uint64_t at = sizeof(struct perf_event_header);

	if (record_walkable(l) < 0 || (st & RECORD_SAMPLE_VARIABLE) ||
	    ((st & PERF_SAMPLE_READ) && (l->read_format & PERF_FORMAT_GROUP)))
		return 0;
	for (int f = 0; f < RECORD_F__N; f++) {
		off[f] = -1;
		if (!(st & record_fields[f].bit))
			continue;
		off[f] = (int32_t)at;
		if (f == RECORD_F_READ)
			at += record_read_size(l->read_format);
		else if (f == RECORD_F_RAW)
			at += 4 + (uint64_t)raw_size;
		else
			at += record_fields[f].size;
	}
	return at > UINT16_MAX ? 0 : (uint32_t)at;
}

/* One field f of a SAMPLE: a u64 into *v, or what it holds into out. */
static int
record_take_field(struct record_cursor *c, const struct record_layout *l,
		  int f, uint64_t *v, struct record_sample *out)
{
	const unsigned char *at = c->p;
	int err;

	switch (f) {
	case RECORD_F_READ:
		err = record_skip_read(c, l->read_format);
		out->read.p = at;
		out->read.n = (uint64_t)(c->p - at) / 8;
		return err;
	case RECORD_F_CALLCHAIN:
		return record_take_counted(c, 8, &out->callchain);
	case RECORD_F_RAW:
		return record_take_raw(c, &out->raw, &out->raw_size);
	case RECORD_F_BRANCH_STACK:
		return record_take_branches(c, l, out);
	case RECORD_F_REGS_USER:
		return record_take_regs(c, l->sample_regs_user,
					&out->regs_user_abi, &out->regs_user);
	case RECORD_F_STACK_USER:
		return record_take_stack(c, out);
	case RECORD_F_REGS_INTR:
		return record_take_regs(c, l->sample_regs_intr,
					&out->regs_intr_abi, &out->regs_intr);
	case RECORD_F_AUX:
		return record_take_counted(c, 1, &out->aux);
	default:
		return record_take_u64(c, v);
	}
}

/*
 * Walks the fields in record_fields order.  A variable-sized field's
 * length depends on what it holds, so a failure stops the walk before the
 * next one is sized.
 */
int
record_parse_sample(const struct record_layout *l,
		    const struct perf_event_header *hdr,
		    struct record_sample *out)
{
	const uint64_t st = l->sample_type;
	uint64_t v[RECORD_F__N] = { 0 };
	struct record_cursor c;
	int err;

	*out = (struct record_sample){ 0 };
	err = record_walkable(l);
	if (err)
		return err;
	if (hdr->type != PERF_RECORD_SAMPLE || hdr->size < sizeof(*hdr))
		return -EINVAL;
	record_cursor_init(&c, hdr, sizeof(*hdr));
	for (int f = 0; f < RECORD_F__N && !err; f++) {
		if (st & record_fields[f].bit)
			err = record_take_field(&c, l, f, &v[f], out);
	}
	/* Bytes left over mean the attr and this layout disagree. */
	if (err || record_left(&c) != 0) {
		*out = (struct record_sample){ 0 };
		return -EINVAL;
	}
	record_sample_fill(v, st, out);
	if (out->callchain.p)
		out->caller = record_callchain_caller(out->callchain.p,
						      out->callchain.n,
						      out->ip);
	return 0;
}

uint64_t
record_callchain_caller(const void *ips, uint64_t n, uint64_t ip)
{
	const unsigned char *p = ips;
	/* -1: before any marker; 1 in user context; 0 in another. */
	int user = -1;
	bool first = true;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t v;

		memcpy(&v, p + 8 * i, sizeof(v));
		if (v >= (uint64_t)PERF_CONTEXT_MAX) {
			user = v == (uint64_t)PERF_CONTEXT_USER;
			first = true;
			continue;
		}
		if (user == 0 || (user < 0 && (int64_t)v < 0))
			continue;
		if (first && v == ip) {
			first = false;
			continue;
		}
		return v;
	}
	return 0;
}

int
record_time(const struct record_layout *l,
	    const struct perf_event_header *hdr, uint64_t *time)
{
	struct record_id id;
	uint64_t at;

	if (!(l->sample_type & PERF_SAMPLE_TIME))
		return -ENOENT;
	if (hdr->type == PERF_RECORD_SAMPLE) {
		/* Only IDENTIFIER, IP and TID (u64 each) come before it. */
		/* Three bits counted as such: a popcount builtin is a
		 * library call on baseline x86-64. */
		at = sizeof(*hdr) +
		     8 * (uint64_t)(!!(l->sample_type & PERF_SAMPLE_IDENTIFIER) +
				    !!(l->sample_type & PERF_SAMPLE_IP) +
				    !!(l->sample_type & PERF_SAMPLE_TID));
		if (hdr->size < at + sizeof(*time))
			return -ENOENT;
		memcpy(time, (const unsigned char *)hdr + at, sizeof(*time));
		return 0;
	}
	if (record_parse_id(l, hdr, 0, &id) < 0)
		return -ENOENT;
	*time = id.time;
	return 0;
}

/*
 * Valid only when IDENTIFIER is in the event's sample_type (and, for
 * non-sample records, sample_id_all is set): then it is the first u64 of a
 * SAMPLE body and the last u64 of every other record.
 */
int
record_identifier(const struct perf_event_header *hdr, uint64_t *id)
{
	const unsigned char *rec = (const void *)hdr;

	if (hdr->size < sizeof(*hdr) + sizeof(*id))
		return -EINVAL;
	if (hdr->type == PERF_RECORD_SAMPLE)
		memcpy(id, rec + sizeof(*hdr), sizeof(*id));
	else
		memcpy(id, rec + hdr->size - sizeof(*id), sizeof(*id));
	return 0;
}

/*
 * The trailer is found from the end of the record, as its size follows
 * from sample_type alone; body_size is the fixed part of the body, so a
 * variable body (COMM's name) passes its minimum and the record must hold
 * at least header + body_size + trailer.  identifier is IDENTIFIER when
 * present, else ID, as in struct record_sample.
 */
int
record_parse_id(const struct record_layout *l,
		const struct perf_event_header *hdr, size_t body_size,
		struct record_id *out)
{
	const uint64_t st = l->sample_type & RECORD_ID_FIELDS;
	struct record_cursor c;
	uint64_t trailer, v;
	int err = 0;

	*out = (struct record_id){ 0 };
	if (!l->sample_id_all || hdr->type == PERF_RECORD_SAMPLE)
		return -EINVAL;
	trailer = 8 * (uint64_t)__builtin_popcountll(st);
	if (hdr->size < sizeof(*hdr) ||
	    body_size > hdr->size - sizeof(*hdr) ||
	    hdr->size - sizeof(*hdr) - body_size < trailer)
		return -EINVAL;
	record_cursor_init(&c, hdr, hdr->size - trailer);

	if (st & PERF_SAMPLE_TID)
		err |= record_take_u32_pair(&c, &out->pid, &out->tid);
	if (st & PERF_SAMPLE_TIME)
		err |= record_take_u64(&c, &out->time);
	if (st & PERF_SAMPLE_ID)
		err |= record_take_u64(&c, &out->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		err |= record_take_u64(&c, &out->stream_id);
	if (st & PERF_SAMPLE_CPU) {
		uint32_t res;

		err |= record_take_u32_pair(&c, &out->cpu, &res);
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		err |= record_take_u64(&c, &v);
	else
		v = out->id;
	if (err) {
		*out = (struct record_id){ 0 };
		return -EINVAL;
	}
	out->identifier = v;
	return 0;
}

/* FORK and EXIT: u32 pid, ppid, tid, ptid; u64 time; [sample_id]. */
int
record_parse_task(const struct perf_event_header *hdr,
		  struct record_task *out)
{
	const unsigned char *body = (const unsigned char *)hdr + sizeof(*hdr);

	if ((hdr->type != PERF_RECORD_FORK && hdr->type != PERF_RECORD_EXIT) ||
	    hdr->size < sizeof(*hdr) + RECORD_FORK_BODY)
		return -EINVAL;
	memcpy(&out->pid, body, 4);
	memcpy(&out->ppid, body + 4, 4);
	memcpy(&out->tid, body + 8, 4);
	memcpy(&out->ptid, body + 12, 4);
	memcpy(&out->time, body + 16, 8);
	return 0;
}

/* LOST: u64 id, lost.  LOST_SAMPLES: u64 lost.  Either: [sample_id]. */
int
record_parse_lost(const struct perf_event_header *hdr, uint64_t *lost)
{
	const unsigned char *body = (const unsigned char *)hdr + sizeof(*hdr);

	if (hdr->type == PERF_RECORD_LOST &&
	    hdr->size >= sizeof(*hdr) + RECORD_LOST_BODY) {
		memcpy(lost, body + 8, sizeof(*lost));
		return 0;
	}
	if (hdr->type == PERF_RECORD_LOST_SAMPLES &&
	    hdr->size >= sizeof(*hdr) + RECORD_LOST_SAMPLES_BODY) {
		memcpy(lost, body, sizeof(*lost));
		return 0;
	}
	return -EINVAL;
}

/*
 * COMM: u32 pid, tid; char comm[] NUL-terminated and padded to 8 bytes;
 * [sample_id].  The kernel's name is at most 15 characters; a longer or
 * unterminated one is cut there, never read past the record.
 */
int
record_parse_comm(const struct perf_event_header *hdr, uint32_t *pid,
		  uint32_t *tid, char comm[16])
{
	const unsigned char *body = (const unsigned char *)hdr + sizeof(*hdr);
	size_t room, len;

	/* Header, pid/tid, and at least one 8-byte slot for the name. */
	if (hdr->type != PERF_RECORD_COMM || hdr->size < sizeof(*hdr) + 16)
		return -EINVAL;
	memcpy(pid, body, 4);
	memcpy(tid, body + 4, 4);
	room = hdr->size - sizeof(*hdr) - 8;
	if (room > 15)
		room = 15;
	for (len = 0; len < room && body[8 + len] != '\0'; len++)
		;
	memcpy(comm, body + 8, len);
	comm[len] = '\0';
	return 0;
}
