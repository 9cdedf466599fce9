#include "config.h"

/*
 * perf.data reader and writer: round trips in both byte orders, pipe mode
 * and compressed data built by hand, and the topology features.  Hostile
 * inputs are tested in test-perfdata-hostile.c, replay's own decoders in
 * tests/unit/replay/test-perfdata-replay.c; the records and the reference file come from
 * perfdata-build.c.  The reader's agreement with perf itself is tested
 * end to end in e2e-replay.sh (perf script on the same files).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "perfdata-build.h"
#include "perfdata_read.h"
#include "perfdata_swap.h"
#include "perfdata_write.h"
#include "record.h"
#include "testlib.h"
#include "topo.h"

static void
check_info(const struct perfdata_info *info)
{
	struct topo *t;
	char err[256];

	check_eq_u64(info->n_nodes, 4);
	if (info->n_nodes == 4) {
		check_eq_i64(info->nodes[2].node, 2);
		check_eq_str(info->nodes[2].cpus, "2,6");
	}
	check_eq_u64(info->nr_cpus_avail, 8);
	check_eq_u64(info->mem_block_size, 1 << 20);
	check_eq_i64(perfdata_info_phys_node(info, 0), 0);
	check_eq_i64(perfdata_info_phys_node(info, (4 << 20) + 5), 1);
	check_eq_i64(perfdata_info_phys_node(info, 5 << 20), -1);
	check_eq_i64(perfdata_info_phys_node(info, 15 << 20), 3);
	check_eq_i64(perfdata_info_phys_node(info, 16 << 20), -1);
	check_eq_u64(info->n_pmus, 1);
	if (info->n_pmus == 1)
		check_eq_str(info->pmus[0].name, "ibs_op");
	check(info->hostname[0] != '\0');

	t = perfdata_info_topo(info, err, sizeof(err));
	check(t != NULL);
	if (!t)
		return;
	check_eq_i64(topo_n_nodes(t), 4);
	check_eq_i64(topo_n_cpus(t), 8);
	check_eq_i64(topo_cpu_node(t, 5), 1);
	topo_free(t);
}

/* Reads the reference file back, record by record. */
static void
read_file(const char *path, bool swapped)
{
	struct perfdata_reader *r;
	struct perfdata_record rec;
	uint64_t types[32] = { 0 };
	unsigned samples = 0;
	char err[256];
	int ret;

	ret = perfdata_reader_open(&r, path, err, sizeof(err));
	check_eq_i64(ret, 0);
	if (ret < 0) {
		printf("# %s\n", err);
		return;
	}
	check_eq_u64(perfdata_reader_is_swapped(r), swapped);
	check_eq_u64(perfdata_reader_is_pipe(r), false);
	check_eq_u64(perfdata_reader_n_events(r), 2);
	check_eq_str(perfdata_reader_event(r, 0)->name, "cpu/mem-loads/P");
	check_eq_str(perfdata_reader_event(r, 1)->name, "second");
	check_eq_u64(perfdata_reader_event(r, 0)->attr.sample_type, ST_SAMPLE);
	check_eq_u64(perfdata_reader_event(r, 0)->attr.config, 0x1cd);
	check_eq_u64(perfdata_reader_event(r, 0)->attr.sample_id_all, 1);
	check_eq_u64(perfdata_reader_event(r, 0)->attr.exclude_kernel, 1);
	check_eq_u64(perfdata_reader_event(r, 0)->n_ids, 2);
	check_eq_u64(perfdata_reader_event(r, 1)->ids[0], 201);
	check_info(perfdata_reader_info(r));

	while ((ret = perfdata_reader_next(r, &rec, err, sizeof(err))) == 1) {
		const struct perfdata_event *ev;
		struct record_sample s;
		struct record_id id;

		types[rec.hdr->type < 32 ? rec.hdr->type : 0]++;
		ev = perfdata_reader_event(r, rec.event_idx);
		check(ev != NULL);
		if (!ev)
			continue;
		if (rec.hdr->type != PERF_RECORD_SAMPLE) {
			size_t body = rec.hdr->type == PERF_RECORD_COMM ? 16 :
				      rec.hdr->type == PERF_RECORD_LOST ? 16 :
				      24;

			check_eq_i64(record_parse_id(&ev->layout, rec.hdr,
						     body, &id), 0);
			check(id.time >= 10 && id.time <= 300);
			continue;
		}
		check_eq_i64(record_parse_sample(&ev->layout, rec.hdr, &s), 0);
		if (rec.event_idx == 1) {
			check_eq_u64(s.addr, 0x5000);
			check_eq_u64(s.raw_size, 12);
			check_eq_u64(s.tid, 78);
			continue;
		}
		check_eq_u64(s.addr, 0x7f0000001000 + 4096 * (uint64_t)samples);
		check_eq_u64(s.time, 100 + (uint64_t)samples);
		check_eq_u64(s.pid, 1000);
		check_eq_u64(s.tid, 1001);
		check_eq_u64(s.cpu, 3);
		check_eq_u64(s.weight, 250);
		check_eq_u64(s.phys_addr, (uint64_t)samples << 20);
		check_eq_u64(s.identifier, samples % 2 ? 102 : 101);
		samples++;
	}
	check_eq_i64(ret, 0);
	check_eq_u64(samples, 10);
	check_eq_u64(types[PERF_RECORD_SAMPLE], 11);
	check_eq_u64(types[PERF_RECORD_COMM], 1);
	check_eq_u64(types[PERF_RECORD_FORK], 1);
	check_eq_u64(types[PERF_RECORD_EXIT], 1);
	check_eq_u64(types[PERF_RECORD_LOST], 1);
	check_eq_u64(types[PERF_RECORD_THROTTLE], 1);
	check_eq_u64(perfdata_reader_stats(r)->unmatched, 0);
	/* Done means done. */
	check_eq_i64(perfdata_reader_next(r, &rec, err, sizeof(err)), 0);
	perfdata_reader_free(r);
}

static void
test_round_trip(void)
{
	char path[256];

	path_in_tmp(path, sizeof(path), "native.data");
	if (write_file(path, false) == 0)
		read_file(path, false);
	path_in_tmp(path, sizeof(path), "swapped.data");
	if (write_file(path, true) == 0)
		read_file(path, true);
}

static void
test_no_overwrite(void)
{
	struct perfdata_writer_opts o = { 0 };
	struct perfdata_writer *w = NULL;
	char path[256], err[256];
	int ret;

	path_in_tmp(path, sizeof(path), "native.data");
	ret = perfdata_writer_open(&w, path, &o, err, sizeof(err));
	check_eq_i64(ret, -EEXIST);
	check(strstr(err, "--force") != NULL);
	o.force = true;
	ret = perfdata_writer_open(&w, path, &o, err, sizeof(err));
	check_eq_i64(ret, 0);
	perfdata_writer_free(w);	/* never closed: the file goes */
	check(access(path, F_OK) < 0 && errno == ENOENT);
}

static void
test_attr_swap(void)
{
	struct perf_event_attr a = mk_attr(ST_SAMPLE, 0x1234), b = a;
	unsigned char bits[8];

	perfdata_swap_attr(&b, sizeof(b));
	check_eq_u64(b.config, __builtin_bswap64(0x1234));
	check_eq_u64(b.size, __builtin_bswap32(sizeof(a)));
	/* disabled is bit 0 of the bit-field word: bit 7 of its first byte
	 * on the other byte order. */
	memcpy(bits, (unsigned char *)&b + 40, 8);
	check_eq_u64(bits[0] & 0x80, 0x80);
	perfdata_swap_attr(&b, sizeof(b));
	check(memcmp(&a, &b, sizeof(a)) == 0);
}

/* Pipe mode by hand: attr, a NUMA_TOPOLOGY feature, samples. */
static void
test_pipe(void)
{
	struct perf_event_attr a = mk_attr(ST_SAMPLE, 0x1cd);
	struct perfdata_reader *r;
	struct perfdata_record rec;
	struct buf *b = calloc(1, sizeof(*b));
	struct rb s;
	char err[256];
	unsigned n = 0;
	int ret;

	buf_put(b, "PERFILE2", 8);
	buf_u64(b, 16);
	buf_hdr(b, PERFDATA_REC_HEADER_ATTR, 8 + sizeof(a) + 16);
	buf_put(b, &a, sizeof(a));
	buf_u64(b, 101);
	buf_u64(b, 102);
	/* NUMA_TOPOLOGY: 2 nodes; strings padded to 8. */
	buf_hdr(b, PERFDATA_REC_HEADER_FEATURE, 8 + 8 + 4 + 2 * (4 + 16 + 12));
	buf_u64(b, PERFDATA_FEAT_NUMA_TOPOLOGY);
	buf_u32(b, 2);
	for (uint32_t node = 0; node < 2; node++) {
		buf_u32(b, node * 2);		/* nodes 0 and 2 */
		buf_u64(b, 1024 * (node + 1));
		buf_u64(b, 512);
		buf_u32(b, 8);
		buf_put(b, node ? "1\0\0\0\0\0\0\0" : "0\0\0\0\0\0\0\0", 8);
	}
	buf_hdr(b, PERFDATA_REC_FINISHED_ROUND, 8);
	for (int i = 0; i < 3; i++) {
		const struct perf_event_header *h = mk_sample(&s, 102, 7, 1,
							      0x1000, 0);

		buf_put(b, h, h->size);
	}
	buf_hdr(b, 99, 16);		/* a user type from the future */
	buf_u64(b, 0);

	ret = perfdata_reader_open_mem(&r, b->p, b->len, err, sizeof(err));
	check_eq_i64(ret, 0);
	if (ret == 0) {
		check_eq_u64(perfdata_reader_is_pipe(r), true);
		check_eq_u64(perfdata_reader_n_events(r), 1);
		check_eq_u64(perfdata_reader_info(r)->n_nodes, 2);
		while ((ret = perfdata_reader_next(r, &rec, err,
						   sizeof(err))) == 1)
			n += rec.hdr->type == PERF_RECORD_SAMPLE;
		check_eq_i64(ret, 0);
		check_eq_u64(n, 3);
		check_eq_u64(perfdata_reader_stats(r)->unknown_records, 1);
		check_eq_str(perfdata_reader_event(r, 0)->name, "r1cd");
		perfdata_reader_free(r);
	}
	/* A pipe with no HEADER_ATTR before its data is refused. */
	ret = perfdata_reader_open_mem(&r, b->p, 16, err, sizeof(err));
	check_eq_i64(ret, -EPROTO);
	free(b);
}

/* A bomb: 64 MiB of zeros in one small record must stop.  b keeps its
 * first head_len bytes (header and attr); z is scratch for the record. */
static void
compressed_bomb(struct buf *b, size_t head_len, unsigned char *z)
{
	size_t big = 64u << 20;
	unsigned char *zeros = calloc(1, big);
	size_t bomb = ZSTD_compress(z, 1 << 16, zeros, big, 19);
	struct perfdata_reader *r;
	struct perfdata_record rec;
	char err[256];
	int ret;

	check(!ZSTD_isError(bomb) && bomb < 60000);
	b->len = head_len;
	buf_hdr(b, PERFDATA_REC_COMPRESSED, 8 + bomb);
	buf_put(b, z, bomb);
	ret = perfdata_reader_open_mem(&r, b->p, b->len, err, sizeof(err));
	check_eq_i64(ret, 0);
	if (ret == 0) {
		/* Zero bytes decode as records of size 0. */
		while ((ret = perfdata_reader_next(r, &rec, err,
						   sizeof(err))) == 1)
			;
		check_eq_i64(ret, -EPROTO);
		perfdata_reader_free(r);
	}
	free(zeros);
}

/*
 * Compressed data: samples zstd-compressed into three COMPRESSED records
 * with one record split between the second and third, then a COMPRESSED2.
 */
static void
test_compressed(void)
{
	struct perf_event_attr a = mk_attr(ST_SAMPLE, 0x1cd);
	struct buf *plain = calloc(1, sizeof(*plain));
	struct buf *b = calloc(1, sizeof(*b));
	size_t cuts[4], zlen, n_cuts = 0;
	unsigned char *z = malloc(1 << 16);
	struct perfdata_reader *r;
	struct perfdata_record rec;
	struct rb s;
	char err[256];
	unsigned n = 0;
	int ret;

	for (int i = 0; i < 20; i++) {
		const struct perf_event_header *h = mk_sample(&s, 101, 7, 1,
			0x1000 * (uint64_t)(i + 1), 0);

		buf_put(plain, h, h->size);
	}
	cuts[n_cuts++] = 0;
	cuts[n_cuts++] = 5 * 104;		/* after 5 records */
	cuts[n_cuts++] = 9 * 104 + 40;		/* inside the 10th */
	cuts[n_cuts++] = plain->len;
	buf_put(b, "PERFILE2", 8);
	buf_u64(b, 16);
	buf_hdr(b, PERFDATA_REC_HEADER_ATTR, 8 + sizeof(a) + 8);
	buf_put(b, &a, sizeof(a));
	buf_u64(b, 101);
	for (size_t i = 0; i + 1 < n_cuts; i++) {
		zlen = ZSTD_compress(z, 1 << 16, plain->p + cuts[i],
				     cuts[i + 1] - cuts[i], 1);
		check(!ZSTD_isError(zlen));
		if (i == 2) {
			size_t size = 8 + 8 + (zlen + 7) / 8 * 8;

			buf_hdr(b, PERFDATA_REC_COMPRESSED2, size);
			buf_u64(b, zlen);
			buf_put(b, z, zlen);
			memset(b->p + b->len, 0, size - 16 - zlen);
			b->len += size - 16 - zlen;
		} else {
			buf_hdr(b, PERFDATA_REC_COMPRESSED, 8 + zlen);
			buf_put(b, z, zlen);
		}
	}
	ret = perfdata_reader_open_mem(&r, b->p, b->len, err, sizeof(err));
	check_eq_i64(ret, 0);
	if (ret == 0) {
		while ((ret = perfdata_reader_next(r, &rec, err,
						   sizeof(err))) == 1) {
			struct record_sample rs;

			check_eq_i64(record_parse_sample(
				&perfdata_reader_event(r, 0)->layout, rec.hdr,
				&rs), 0);
			check_eq_u64(rs.addr, 0x1000 * (uint64_t)++n);
		}
		check_eq_i64(ret, 0);
		check_eq_u64(n, 20);
		check_eq_u64(perfdata_reader_stats(r)->compressed_records, 3);
		check_eq_u64(perfdata_reader_stats(r)->decompressed_bytes,
			     plain->len);
		perfdata_reader_free(r);
	}

	compressed_bomb(b, 16 + 8 + sizeof(a) + 8, z);
	free(z);
	free(plain);
	free(b);
}

/* Rounds: a FINISHED_ROUND after records, none for a round without
 * records, in either byte order; the reader hands them out where they
 * were written.  And the writer's CMDLINE: this test's own, read back
 * (a replay takes --heap-objects=SIZE from it). */
static void
test_rounds(bool swap)
{
	struct perfdata_writer_opts o = { .force = true, .swap = swap,
					  .cmdline = true };
	struct perf_event_attr a0 = mk_attr(ST_SAMPLE, 0x1cd);
	struct perfdata_writer *w;
	struct perfdata_reader *r;
	struct perfdata_record rec;
	char path[256], err[256], order[16] = "";
	struct rb b;
	size_t n = 0;

	path_in_tmp(path, sizeof(path), "rounds.data");
	if (perfdata_writer_open(&w, path, &o, err, sizeof(err)) < 0) {
		check(false);
		return;
	}
	check_eq_i64(perfdata_writer_add_event(w, &a0, "e"), 0);
	check_eq_i64(perfdata_writer_add_id(w, 0, 101), 0);
	check_eq_i64(perfdata_writer_round(w), 0);	/* nothing yet */
	perfdata_writer_write(w, mk_sample(&b, 101, 1000, 100, 0x1000, 0));
	check_eq_i64(perfdata_writer_round(w), 0);
	check_eq_i64(perfdata_writer_round(w), 0);	/* nothing since */
	perfdata_writer_write(w, mk_sample(&b, 101, 1000, 101, 0x2000, 0));
	perfdata_writer_write(w, mk_sample(&b, 101, 1000, 102, 0x3000, 0));
	check_eq_i64(perfdata_writer_round(w), 0);
	check_eq_i64(perfdata_writer_close(w, err, sizeof(err)), 0);
	perfdata_writer_free(w);

	if (perfdata_reader_open(&r, path, err, sizeof(err)) < 0) {
		check(false);
		return;
	}
	while (perfdata_reader_next(r, &rec, err, sizeof(err)) == 1 &&
	       n < sizeof(order) - 1)
		order[n++] = rec.hdr->type == PERFDATA_REC_FINISHED_ROUND ?
			     'R' : rec.hdr->type == PERF_RECORD_SAMPLE ? 'S' :
			     '?';
	check_eq_str(order, "SRSSR");
	check(strstr(perfdata_reader_info(r)->cmdline, "test-perfdata") !=
	      NULL);
	perfdata_reader_free(r);
}

int
main(void)
{
	tmpdir_make();
	test_rounds(false);
	test_rounds(true);
	test_attr_swap();
	test_round_trip();
	test_no_overwrite();
	test_pipe();
	test_compressed();
	tmpdir_remove();
	return test_result();
}
