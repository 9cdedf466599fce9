#include "config.h"

/* See perfdata-build.h. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata-build.h"
#include "perfdata_write.h"
#include "testlib.h"
#include "topo.h"

static char tmpdir[] = "/tmp/memtop-test-perfdata.XXXXXX";

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

const struct perf_event_header *
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

struct perf_event_attr
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

void
path_in_tmp(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

void
tmpdir_make(void)
{
	if (!mkdtemp(tmpdir))
		test_skip("mkdtemp: %s", strerror(errno));
}

void
tmpdir_remove(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
}

/* Writes the reference file: 2 events, 4 nodes, every record type. */
int
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

void
buf_put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void
buf_u64(struct buf *b, uint64_t v)
{
	buf_put(b, &v, 8);
}

void
buf_u32(struct buf *b, uint32_t v)
{
	buf_put(b, &v, 4);
}

void
buf_hdr(struct buf *b, uint32_t type, size_t size)
{
	struct perf_event_header h = { .type = type, .size = (uint16_t)size };

	buf_put(b, &h, sizeof(h));
}
