#include "config.h"

/*
 * The record_* decoders for records other than samples: FORK and EXIT,
 * LOST and LOST_SAMPLES, COMM, with their sample_id_all trailers, and
 * record_identifier().
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "record-build.h"
#include "record.h"
#include "testlib.h"

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

/* FORK with every field of the sample_id trailer. */
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
}

/* EXIT with a partial trailer: time and {cpu, res} only, ID stands in;
 * records too short for the body or the trailer, and of another type. */
static void
test_task_exit(void)
{
	struct record_layout l = {
		.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_ID,
		.sample_id_all = true,
	};
	const struct perf_event_header *hdr;
	struct record_task task;
	struct record_id rid;
	struct rb b;

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
	test_task();
	test_task_exit();
	test_lost();
	test_comm();
	return test_result();
}
