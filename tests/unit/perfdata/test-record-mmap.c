#include "config.h"

/*
 * MMAP and MMAP2 records (record_mmap.c), hand-built byte by byte as the
 * kernel's perf_event_mmap_output() writes them: both MMAP2 kinds (device
 * and inode, or build id), MMAP with the data bit, truncated and
 * unterminated ones; record_build_mmap2() read back; and the BUILD_ID
 * feature the writer makes from MMAP2 build ids, read back by the reader
 * in both byte orders.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfdata_feat.h"
#include "perfdata_read.h"
#include "perfdata_write.h"
#include "record-build.h"
#include "record_mmap.h"
#include "testlib.h"

static const uint8_t bid[20] = { 0xd6, 0x98, 0x48, 0x61, 0xf2, 0xae, 0x1f,
				 0x86, 0xc3, 0x63, 0x99, 0x68, 0x8d, 0x20,
				 0xd6, 0x95, 0xdd, 0xf6, 0x97, 0x38 };

/* pid 7, tid 8, [0x400000, +0x3000) at file offset 0x1000. */
static void
rm_head(struct rb *b, uint32_t type)
{
	rb_begin(b, type);
	rb_u32(b, 7);
	rb_u32(b, 8);
	rb_u64(b, 0x400000);
	rb_u64(b, 0x3000);
	rb_u64(b, 0x1000);
}

static void
test_parse(void)
{
	struct record_mmap m;
	struct rb b;

	/* MMAP2, device and inode; name "/bin/x" padded to 8; a trailer. */
	rm_head(&b, PERF_RECORD_MMAP2);
	rb_u32(&b, 0xfe);
	rb_u32(&b, 1);
	rb_u64(&b, 4242);
	rb_u64(&b, 9);
	rb_u32(&b, PROT_READ | PROT_WRITE);
	rb_u32(&b, MAP_PRIVATE);
	rb_bytes(&b, "/bin/x\0\0", 8);
	rb_u64(&b, 0xabcdef);		/* sample_id trailer */
	check_eq_i64(record_parse_mmap(rb_end(&b), &m), 0);
	check(m.mmap2 && !m.has_build_id && m.pid == 7 && m.tid == 8);
	check_eq_u64(m.addr, 0x400000);
	check_eq_u64(m.len, 0x3000);
	check_eq_u64(m.pgoff, 0x1000);
	check(m.maj == 0xfe && m.min == 1 && m.ino == 4242 &&
	      m.ino_generation == 9);
	check(m.prot == (PROT_READ | PROT_WRITE) && m.flags == MAP_PRIVATE);
	check(!m.exec);
	check_eq_str(m.filename, "/bin/x");
	check_eq_u64(m.body_end, 8 + 64 + 8);

	/* MMAP2 with a 20-byte build id. */
	rm_head(&b, PERF_RECORD_MMAP2);
	rb_hdr(&b)->misc = PERF_RECORD_MISC_MMAP_BUILD_ID;
	rb_bytes(&b, "\x14\0\0\0", 4);
	rb_bytes(&b, bid, 20);
	rb_u32(&b, PROT_READ | PROT_EXEC);
	rb_u32(&b, MAP_PRIVATE);
	rb_bytes(&b, "/lib/libc.so.6\0\0", 16);
	check_eq_i64(record_parse_mmap(rb_end(&b), &m), 0);
	check(m.has_build_id && m.build_id_size == 20 && m.ino == 0);
	check(memcmp(m.build_id, bid, 20) == 0 && m.exec);
	check_eq_str(m.filename, "/lib/libc.so.6");

	/* A build id longer than 20 bytes is malformed. */
	rm_head(&b, PERF_RECORD_MMAP2);
	rb_hdr(&b)->misc = PERF_RECORD_MISC_MMAP_BUILD_ID;
	rb_bytes(&b, "\x15\0\0\0", 4);
	rb_bytes(&b, bid, 20);
	rb_u64(&b, 0);
	rb_bytes(&b, "/x\0\0\0\0\0\0", 8);
	check_eq_i64(record_parse_mmap(rb_end(&b), &m), -EINVAL);

	/* MMAP of data: no protection but read, no exec. */
	rm_head(&b, PERF_RECORD_MMAP);
	rb_hdr(&b)->misc = PERF_RECORD_MISC_MMAP_DATA;
	rb_bytes(&b, "//anon\0\0", 8);
	check_eq_i64(record_parse_mmap(rb_end(&b), &m), 0);
	check(!m.mmap2 && !m.exec && m.prot == PROT_READ);
	check_eq_str(m.filename, "//anon");

	/* A name without its NUL inside the record. */
	rm_head(&b, PERF_RECORD_MMAP);
	rb_bytes(&b, "abcdefgh", 8);
	check_eq_i64(record_parse_mmap(rb_end(&b), &m), -EINVAL);
	/* Shorter than the fixed fields. */
	rb_begin(&b, PERF_RECORD_MMAP2);
	rb_u64(&b, 1);
	check_eq_i64(record_parse_mmap(rb_end(&b), &m), -EINVAL);
	/* Not a mapping record. */
	rm_head(&b, PERF_RECORD_COMM);
	rb_bytes(&b, "x\0\0\0\0\0\0\0", 8);
	check_eq_i64(record_parse_mmap(rb_end(&b), &m), -EINVAL);
}

/* An MMAP2 of /opt/app with bid, built by record_build_mmap2. */
static size_t
rm_build(uint64_t *buf, bool with_id)
{
	struct record_mmap m = { .pid = 7, .tid = 7, .addr = 0x1000,
				 .len = 0x2000, .pgoff = 0, .ino = 77,
				 .prot = PROT_READ, .flags = MAP_PRIVATE };
	uint64_t trailer[2] = { 7 | (uint64_t)7 << 32, 99 };

	if (with_id) {
		m.has_build_id = true;
		m.build_id_size = 20;
		memcpy(m.build_id, bid, 20);
	}
	return record_build_mmap2(buf, &m, "/opt/app", trailer,
				  sizeof(trailer));
}

static void
test_build(void)
{
	uint64_t buf[64];
	struct record_mmap m;
	size_t n = rm_build(buf, true);

	check_eq_u64(n, 8 + 64 + 16 + 16);
	check_eq_i64(record_parse_mmap((void *)buf, &m), 0);
	check(m.has_build_id && memcmp(m.build_id, bid, 20) == 0);
	check(m.addr == 0x1000 && m.len == 0x2000 && !m.exec);
	check_eq_str(m.filename, "/opt/app");
	check_eq_u64(m.body_end, 8 + 64 + 16);
	n = rm_build(buf, false);
	check_eq_i64(record_parse_mmap((void *)buf, &m), 0);
	check(!m.has_build_id && m.ino == 77);
}

/* The writer lists the build id of an MMAP2 once; the reader finds it. */
static void
test_feature(bool swap)
{
	struct perfdata_writer_opts o = { .force = true, .swap = swap };
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER,
		.sample_id_all = 1, .mmap2 = 1 };
	char path[] = "/tmp/memtop-test-mmap-XXXXXX", err[256];
	const struct perfdata_info *info;
	struct perfdata_writer *w;
	struct perfdata_reader *r;
	uint64_t buf[64];
	int fd = mkstemp(path);

	check(fd >= 0);
	close(fd);
	check_eq_i64(perfdata_writer_open(&w, path, &o, err, sizeof(err)), 0);
	check(perfdata_writer_add_event(w, &attr, "ev") == 0);
	check_eq_i64(perfdata_writer_add_id(w, 0, 99), 0);
	rm_build(buf, true);
	check_eq_i64(perfdata_writer_write(w, (void *)buf), 0);
	check_eq_i64(perfdata_writer_write(w, (void *)buf), 0);	/* again */
	check_eq_i64(perfdata_writer_close(w, err, sizeof(err)), 0);
	perfdata_writer_free(w);
	check_eq_i64(perfdata_reader_open(&r, path, err, sizeof(err)), 0);
	info = perfdata_reader_info(r);
	check_eq_u64(info->n_build_ids, 1);
	if (info->n_build_ids == 1) {
		check_eq_str(info->build_ids[0].path, "/opt/app");
		check(info->build_ids[0].size == 20 &&
		      memcmp(info->build_ids[0].id, bid, 20) == 0);
		check(info->build_ids[0].pid == 7);
	}
	perfdata_reader_free(r);
	unlink(path);
}

int
main(void)
{
	test_parse();
	test_build();
	test_feature(false);
	test_feature(true);
	return test_result();
}
