#include "config.h"

/*
 * perf.data reader and writer: round trips in both byte orders, pipe mode
 * and compressed data built by hand, the topology features, and hostile
 * inputs (every prefix of a file, bad counts and offsets) that must give
 * an error, never a crash or an allocation the input does not justify.
 * The reader's agreement with perf itself is tested end to end in
 * e2e-replay.sh (perf script on the same files).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "perfdata_format.h"
#include "perfdata_read.h"
#include "perfdata_swap.h"
#include "perfdata_write.h"
#include "physnode.h"
#include "record.h"
#include "replay_int.h"
#include "testlib.h"
#include "topo.h"

#define ST_SAMPLE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |		\
		   PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |	\
		   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |			\
		   PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |		\
		   PERF_SAMPLE_PHYS_ADDR)
/* The second event: different sample_type, told apart by IDENTIFIER. */
#define ST_SAMPLE2 (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |		\
		    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |	\
		    PERF_SAMPLE_RAW)

static char tmpdir[] = "/tmp/memtop-test-perfdata.XXXXXX";

/* A record under construction, 8-byte aligned. */
struct rb {
	uint64_t w[64];
	size_t n;		/* u64 words, header included */
};

static struct perf_event_header *
rb_begin(struct rb *b, uint32_t type)
{
	struct perf_event_header *h = (void *)b->w;

	memset(b, 0, sizeof(*b));
	h->type = type;
	b->n = 1;
	return h;
}

static void
rb_u64(struct rb *b, uint64_t v)
{
	b->w[b->n++] = v;
}

static void
rb_u32s(struct rb *b, uint32_t lo, uint32_t hi)
{
	uint32_t p[2] = { lo, hi };

	memcpy(&b->w[b->n++], p, 8);
}

static const struct perf_event_header *
rb_end(struct rb *b)
{
	struct perf_event_header *h = (void *)b->w;

	h->size = (uint16_t)(8 * b->n);
	return h;
}

/* The sample_id_all trailer of ST_SAMPLE / ST_SAMPLE2: tid, time, cpu,
 * identifier. */
static void
rb_trailer(struct rb *b, uint32_t pid, uint64_t time, uint64_t id)
{
	rb_u32s(b, pid, pid);
	rb_u64(b, time);
	rb_u32s(b, 1, 0);
	rb_u64(b, id);
}

static const struct perf_event_header *
mk_sample(struct rb *b, uint64_t id, uint32_t pid, uint64_t time,
	  uint64_t addr, uint64_t phys)
{
	rb_begin(b, PERF_RECORD_SAMPLE);
	rb_u64(b, id);
	rb_u64(b, 0x401000);
	rb_u32s(b, pid, pid + 1);
	rb_u64(b, time);
	rb_u64(b, addr);
	rb_u32s(b, 3, 0);
	rb_u64(b, 1000);
	rb_u64(b, 250);
	rb_u64(b, PERF_MEM_OP_LOAD);
	rb_u64(b, phys);
	return rb_end(b);
}

/* ST_SAMPLE2 with a 12-byte RAW payload (u32 size 12 + 12 = 16). */
static const struct perf_event_header *
mk_sample2(struct rb *b, uint64_t id, uint64_t addr)
{
	uint32_t raw[4] = { 12, 0x11111111, 0x22222222, 0x33333333 };

	rb_begin(b, PERF_RECORD_SAMPLE);
	rb_u64(b, id);
	rb_u32s(b, 77, 78);
	rb_u64(b, 5000);
	rb_u64(b, addr);
	rb_u32s(b, 2, 0);
	memcpy(&b->w[b->n], raw, 16);
	b->n += 2;
	return rb_end(b);
}

static struct perf_event_attr
mk_attr(uint64_t sample_type, uint64_t config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_RAW;
	a.size = sizeof(a);
	a.config = config;
	a.sample_type = sample_type;
	a.sample_period = 1000;
	a.sample_id_all = 1;
	a.disabled = 1;
	a.exclude_kernel = 1;
	return a;
}

static void
path_in_tmp(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

/* Writes the reference file: 2 events, 4 nodes, every record type. */
static int
write_file(const char *path, bool swap)
{
	static const int cpu_node[8] = { 0, 1, 2, 3, 0, 1, 2, 3 };
	int16_t blocks[16];
	struct perfdata_writer_opts o = { .force = true, .swap = swap };
	struct perfdata_writer *w;
	struct perf_event_attr a0 = mk_attr(ST_SAMPLE, 0x1cd);
	struct perf_event_attr a1 = mk_attr(ST_SAMPLE2, 0x2cd);
	struct topo *topo = topo_new_fake(8, cpu_node);
	struct rb b;
	char err[256];
	int ret;

	o.topo = topo;
	ret = perfdata_writer_open(&w, path, &o, err, sizeof(err));
	check_eq_i64(ret, 0);
	if (ret < 0) {
		topo_free(topo);
		return ret;
	}
	check_eq_i64(perfdata_writer_add_event(w, &a0, "cpu/mem-loads/P"), 0);
	check_eq_i64(perfdata_writer_add_event(w, &a1, "second"), 1);
	check_eq_i64(perfdata_writer_add_id(w, 0, 101), 0);
	check_eq_i64(perfdata_writer_add_id(w, 0, 102), 0);
	check_eq_i64(perfdata_writer_add_id(w, 0, 101), 0);	/* repeat */
	check_eq_i64(perfdata_writer_add_id(w, 1, 201), 0);
	check_eq_i64(perfdata_writer_add_id(w, 7, 999), -EINVAL);
	for (int i = 0; i < 16; i++)
		blocks[i] = (int16_t)(i / 4);	/* 4 blocks per node */
	blocks[5] = -1;				/* a hole */
	check_eq_i64(perfdata_writer_set_mem_topology(w, 1 << 20, blocks, 16),
		     0);
	check_eq_i64(perfdata_writer_add_pmu(w, 11, "ibs_op"), 0);

	rb_begin(&b, PERF_RECORD_COMM);
	rb_u32s(&b, 1000, 1000);
	memcpy(&b.w[b.n], "bench\0\0\0", 8);
	b.n++;
	rb_trailer(&b, 1000, 10, 101);
	perfdata_writer_write(w, rb_end(&b));
	rb_begin(&b, PERF_RECORD_FORK);
	rb_u32s(&b, 1000, 1);
	rb_u32s(&b, 1001, 1);
	rb_u64(&b, 11);
	rb_trailer(&b, 1000, 11, 101);
	perfdata_writer_write(w, rb_end(&b));
	for (int i = 0; i < 10; i++)
		perfdata_writer_write(w, mk_sample(&b, i % 2 ? 102 : 101, 1000,
						   100 + (uint64_t)i,
						   0x7f0000001000 +
						   4096 * (uint64_t)i,
						   (uint64_t)i << 20));
	perfdata_writer_write(w, mk_sample2(&b, 201, 0x5000));
	rb_begin(&b, PERF_RECORD_LOST);
	rb_u64(&b, 101);
	rb_u64(&b, 7);
	rb_trailer(&b, 1000, 200, 101);
	perfdata_writer_write(w, rb_end(&b));
	rb_begin(&b, PERF_RECORD_THROTTLE);
	rb_u64(&b, 201);
	rb_u64(&b, 201);
	rb_u64(&b, 201);
	rb_trailer(&b, 77, 201, 201);
	perfdata_writer_write(w, rb_end(&b));
	rb_begin(&b, PERF_RECORD_EXIT);
	rb_u32s(&b, 1000, 1);
	rb_u32s(&b, 1000, 1);
	rb_u64(&b, 300);
	rb_trailer(&b, 1000, 300, 101);
	perfdata_writer_write(w, rb_end(&b));
	rb_begin(&b, PERF_RECORD_SWITCH);	/* not written: counted */
	perfdata_writer_write(w, rb_end(&b));

	check_eq_u64(perfdata_writer_stats(w)->samples, 11);
	check_eq_u64(perfdata_writer_stats(w)->records, 16);
	check_eq_u64(perfdata_writer_stats(w)->skipped, 1);
	ret = perfdata_writer_close(w, err, sizeof(err));
	check_eq_i64(ret, 0);
	perfdata_writer_free(w);
	topo_free(topo);
	return ret;
}

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

/* Appends a record (pipe mode or data) to a byte buffer. */
struct buf {
	unsigned char p[1 << 16];
	size_t len;
};

static void
buf_put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void
buf_u64(struct buf *b, uint64_t v)
{
	buf_put(b, &v, 8);
}

static void
buf_u32(struct buf *b, uint32_t v)
{
	buf_put(b, &v, 4);
}

static void
buf_hdr(struct buf *b, uint32_t type, size_t size)
{
	struct perf_event_header h = { .type = type, .size = (uint16_t)size };

	buf_put(b, &h, sizeof(h));
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

	/* A bomb: 64 MiB of zeros in one small record must stop. */
	{
		size_t big = 64u << 20;
		unsigned char *zeros = calloc(1, big);
		size_t bomb = ZSTD_compress(z, 1 << 16, zeros, big, 19);

		check(!ZSTD_isError(bomb) && bomb < 60000);
		b->len = 16 + 8 + sizeof(a) + 8;
		buf_hdr(b, PERFDATA_REC_COMPRESSED, 8 + bomb);
		buf_put(b, z, bomb);
		ret = perfdata_reader_open_mem(&r, b->p, b->len, err,
					       sizeof(err));
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
	free(z);
	free(plain);
	free(b);
}

/* Reads all of an image; returns the first error or 0. */
static int
read_all(const void *p, size_t len)
{
	struct perfdata_reader *r;
	struct perfdata_record rec;
	char err[256];
	int ret;

	ret = perfdata_reader_open_mem(&r, p, len, err, sizeof(err));
	if (ret < 0) {
		check(err[0] != '\0' && strchr(err, '\n') == NULL);
		return ret;
	}
	while ((ret = perfdata_reader_next(r, &rec, err, sizeof(err))) == 1)
		;
	if (ret < 0)
		check(err[0] != '\0' && strchr(err, '\n') == NULL);
	perfdata_reader_free(r);
	return ret;
}

static unsigned char *
load(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *p;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st) < 0) {
		if (f)
			fclose(f);
		return NULL;
	}
	p = malloc((size_t)st.st_size + 1);
	*len = fread(p, 1, (size_t)st.st_size, f);
	fclose(f);
	return p;
}

static void
poke_u64(unsigned char *img, size_t off, uint64_t v)
{
	memcpy(img + off, &v, 8);
}

static void
test_hostile(void)
{
	unsigned char *img, *copy;
	char path[256];
	size_t len, prefix_ok = 0;

	path_in_tmp(path, sizeof(path), "native.data");
	write_file(path, false);
	img = load(path, &len);
	check(img != NULL);
	if (!img)
		return;
	check_eq_i64(read_all(img, len), 0);
	/* Every strict prefix fails cleanly (attrs and features are at the
	 * end, the data section's bounds are in the header). */
	for (size_t n = 0; n < len; n++)
		prefix_ok += read_all(img, n) == 0;
	check_eq_u64(prefix_ok, 0);

	copy = malloc(len);
	/* Header fields. */
	static const struct {
		size_t off;
		uint64_t v;
	} pokes[] = {
		{ 8, 105 },			/* header size */
		{ 16, 0 },			/* attr_size */
		{ 16, UINT64_MAX },
		{ 24, UINT64_MAX - 8 },		/* attrs offset overflow */
		{ 32, 7 },			/* attrs size not a multiple */
		{ 32, 0 },			/* no attrs */
		{ 40, UINT64_MAX - 4 },		/* data offset */
		{ 48, 0 },			/* data size 0 */
		{ 48, UINT64_MAX },
		{ 72, UINT64_MAX },		/* every feature bit */
	};
	for (size_t i = 0; i < sizeof(pokes) / sizeof(pokes[0]); i++) {
		memcpy(copy, img, len);
		poke_u64(copy, pokes[i].off, pokes[i].v);
		check(read_all(copy, len) < 0);
	}
	/* First record's size: 0, and past the data. */
	memcpy(copy, img, len);
	copy[104 + 6] = 0;
	copy[104 + 7] = 0;
	check_eq_i64(read_all(copy, len), -EPROTO);
	memcpy(copy, img, len);
	copy[104 + 6] = 0xf8;
	copy[104 + 7] = 0xff;
	check_eq_i64(read_all(copy, len), -EPROTO);
	/* Version 1 and garbage magic. */
	memcpy(copy, img, len);
	memcpy(copy, "PERFFILE", 8);
	check_eq_i64(read_all(copy, len), -EINVAL);
	memcpy(copy, "GARBAGE!", 8);
	check_eq_i64(read_all(copy, len), -EINVAL);
	/* Flipping every byte of the feature and attr area, one at a time,
	 * never crashes (results vary: most flips are harmless). */
	for (size_t off = 104; off < len; off++) {
		memcpy(copy, img, len);
		copy[off] ^= 0xff;
		read_all(copy, len);
	}
	free(copy);
	free(img);
}

/* Two events with different sample_type and no IDENTIFIER are refused. */
static void
test_ambiguous(void)
{
	struct perf_event_attr a = mk_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID,
					   1);
	struct perf_event_attr b = mk_attr(PERF_SAMPLE_IP | PERF_SAMPLE_ADDR,
					   2);
	struct buf *buf = calloc(1, sizeof(*buf));
	struct perfdata_reader *r;
	char err[256];

	buf_put(buf, "PERFILE2", 8);
	buf_u64(buf, 16);
	buf_hdr(buf, PERFDATA_REC_HEADER_ATTR, 8 + sizeof(a));
	buf_put(buf, &a, sizeof(a));
	buf_hdr(buf, PERFDATA_REC_HEADER_ATTR, 8 + sizeof(b));
	buf_put(buf, &b, sizeof(b));
	check_eq_i64(perfdata_reader_open_mem(&r, buf->p, buf->len, err,
					      sizeof(err)), -EPROTO);
	check(strstr(err, "IDENTIFIER") != NULL);
	free(buf);
}

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
	static const uint64_t fixable[] = {
		PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID,
		PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD,
		PERF_SAMPLE_RAW, PERF_SAMPLE_WEIGHT, PERF_SAMPLE_DATA_SRC,
		PERF_SAMPLE_TRANSACTION, PERF_SAMPLE_PHYS_ADDR,
		PERF_SAMPLE_CGROUP, PERF_SAMPLE_DATA_PAGE_SIZE,
		PERF_SAMPLE_CODE_PAGE_SIZE, PERF_SAMPLE_WEIGHT_STRUCT,
	};
	const size_t n_fixable = sizeof(fixable) / sizeof(fixable[0]);
	uint64_t rec[1024 / 8];
	unsigned fast = 0, agree = 0, fixed_layouts = 0, bad = 0;

	for (int round = 0; round < 4000; round++) {
		struct record_layout l = { 0 };
		struct replay_fixed fx;
		struct record_sample a, b;
		struct perf_event_header *hdr = (void *)rec;
		uint64_t st = 0, walk_size = sizeof(*hdr);
		uint32_t raw_len = 0;
		int how = round % 8, fa, fb;

		for (size_t i = 0; i < n_fixable; i++)
			if (fx_rand() % 3 == 0)
				st |= fixable[i];
		/* One in 8: a field of variable size (no fixed layout). */
		if (how == 7)
			st |= fx_rand() & 1 ? PERF_SAMPLE_CALLCHAIN :
			      PERF_SAMPLE_READ;
		l.sample_type = st;
		replay_fixed_build(&fx, &l);
		if (fx.size)
			fixed_layouts++;
		if (how == 7 || ((st & PERF_SAMPLE_WEIGHT) &&
				 (st & PERF_SAMPLE_WEIGHT_STRUCT)))
			check_eq_u64(fx.size, 0);
		for (size_t i = 0; i < n_fixable; i++)
			if ((st & fixable[i]) && fixable[i] != PERF_SAMPLE_RAW &&
			    fixable[i] != PERF_SAMPLE_WEIGHT_STRUCT)
				walk_size += 8;
		if ((st & PERF_SAMPLE_WEIGHT_STRUCT) &&
		    !(st & PERF_SAMPLE_WEIGHT))
			walk_size += 8;
		if (st & PERF_SAMPLE_RAW) {
			/* 4 + len a multiple of 8, or (how 5) not. */
			raw_len = 4 + 8 * (uint32_t)(fx_rand() % 6);
			if (how == 5)
				raw_len += 1 + (uint32_t)(fx_rand() % 7);
			walk_size += 4 + raw_len;
		}
		if (how == 6)	/* a record 8 bytes too long or short */
			walk_size += fx_rand() & 1 ? 8 : (uint64_t)-8;
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
		memset(&a, 0xa5, sizeof(a));
		fa = replay_fixed_parse(&fx, hdr, &a);
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
	char cmd[300];

	if (!mkdtemp(tmpdir))
		test_skip("mkdtemp: %s", strerror(errno));
	test_attr_swap();
	test_round_trip();
	test_no_overwrite();
	test_pipe();
	test_compressed();
	test_hostile();
	test_ambiguous();
	test_fixed_layout();
	test_replay_physnode();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	return test_result();
}
