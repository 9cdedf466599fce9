#include "config.h"

/*
 * Synthetic perf.data writer for tests and bench-replay.  See
 * perfdata-synth.h.  Deterministic for a seed.
 *
 * Page k of a process lives on node k % nodes; with phys its physical
 * address is inside node's range of memory blocks (MEM_TOPOLOGY lists
 * blocks [node * per_node, (node + 1) * per_node) on node).  Samples pick
 * a page with a skew (half of them among the first 1/16 of the pages),
 * are loads 70 % of the time, and run on cpu i % cpus.
 */

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata-synth.h"
#include "perfdata_write.h"
#include "topo.h"

#define SYNTH_BASE	UINT64_C(0x7f0000000000)
#define SYNTH_BLOCK	(UINT64_C(128) << 20)
#define SYNTH_PAGE	4096
#define SYNTH_T0	UINT64_C(1000000000000)
#define SYNTH_ST	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |	\
			 PERF_SAMPLE_TID | PERF_SAMPLE_TIME |		\
			 PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |		\
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT |	\
			 PERF_SAMPLE_DATA_SRC)

struct synth_page {
	uint64_t loads;
	uint64_t stores;
};

struct synth {
	const struct synth_opts *o;
	struct perfdata_writer *w;
	uint64_t rng;
	uint64_t per_node;	/* memory blocks per node */
	struct synth_page *pages;	/* pids x pages */
};

void
synth_defaults(struct synth_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->samples = 100000;
	o->nodes = 4;
	o->cpus = 8;
	o->pages = 4096;
	o->pids = 2;
	o->phys = true;
	o->seconds = 10.0;
	o->seed = 0x6d656d746f70ull;
}

static uint64_t
synth_rand(struct synth *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static uint64_t
synth_id(int event, int cpu)
{
	return (uint64_t)(event + 1) * 1000 + (uint64_t)cpu + 1;
}

static int
synth_events(struct synth *s)
{
	static const char *const names[] = {
		"cpu/mem-loads,ldlat=30/P", "cpu/mem-stores/P",
	};
	static const uint64_t configs[] = { 0x1cd, 0x2cd };
	int ret;

	for (int e = 0; e < 2; e++) {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.type = PERF_TYPE_RAW;
		a.size = sizeof(a);
		a.config = configs[e];
		a.config1 = e == 0 ? 30 : 0;
		a.sample_period = 1000;
		a.sample_type = SYNTH_ST |
			(s->o->phys ? PERF_SAMPLE_PHYS_ADDR : 0);
		a.precise_ip = 2;
		a.sample_id_all = 1;
		a.exclude_kernel = 1;
		ret = perfdata_writer_add_event(s->w, &a, names[e]);
		if (ret < 0)
			return ret;
		for (int cpu = 0; cpu < s->o->cpus; cpu++) {
			ret = perfdata_writer_add_id(s->w, (size_t)e,
						     synth_id(e, cpu));
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

static int
synth_mem_topology(struct synth *s)
{
	size_t n = (size_t)s->per_node * (size_t)s->o->nodes;
	int16_t *map = malloc(n * sizeof(*map));
	int ret;

	if (!map)
		return -ENOMEM;
	for (size_t b = 0; b < n; b++)
		map[b] = (int16_t)(b / s->per_node);
	ret = perfdata_writer_set_mem_topology(s->w, SYNTH_BLOCK, map, n);
	free(map);
	return ret;
}

/* COMM { u32 pid, tid; char comm[16] } + trailer { tid, time, cpu, id }. */
static int
synth_comm(struct synth *s, uint32_t pid)
{
	uint64_t rec[2 + 2 + 4];
	struct perf_event_header *h = (void *)rec;
	uint32_t ids[2] = { pid, pid };

	memset(rec, 0, sizeof(rec));
	h->type = PERF_RECORD_COMM;
	h->size = sizeof(rec);
	memcpy(&rec[1], ids, sizeof(ids));
	snprintf((char *)&rec[2], 16, "synth-%u", pid % 100000u);
	memcpy(&rec[4], ids, sizeof(ids));
	rec[5] = SYNTH_T0;
	rec[6] = 0;
	rec[7] = synth_id(0, 0);
	return perfdata_writer_write(s->w, h);
}

/*
 * LOST { u64 id, lost } or LOST_SAMPLES { u64 lost } + trailer { tid,
 * time, cpu, id }, as the kernel writes them with sample_id_all.
 */
static int
synth_loss(struct synth *s, uint32_t type, uint64_t time, uint64_t count)
{
	uint64_t rec[1 + 2 + 4];
	struct perf_event_header *h = (void *)rec;
	uint32_t ids[2] = { 1000, 1000 };
	size_t n = 1;

	memset(rec, 0, sizeof(rec));
	if (type == PERF_RECORD_LOST)
		rec[n++] = synth_id(0, 0);
	rec[n++] = count;
	memcpy(&rec[n++], ids, sizeof(ids));
	rec[n++] = time;
	rec[n++] = 0;
	rec[n++] = synth_id(0, 0);
	h->type = (uint16_t)type;
	h->size = (uint16_t)(8 * n);
	if (s->o->lost_truth)
		fprintf(s->o->lost_truth, "%s %llu %llu\n",
			type == PERF_RECORD_LOST ? "LOST" : "LOST_SAMPLES",
			(unsigned long long)time, (unsigned long long)count);
	return perfdata_writer_write(s->w, h);
}

/* Loss records due after sample i: the k-th of n sits after sample
 * (2k + 1) * samples / (2n). */
static int
synth_losses_after(struct synth *s, uint64_t i)
{
	const struct synth_opts *o = s->o;
	uint64_t time = SYNTH_T0 + (uint64_t)((double)i * o->seconds * 1e9 /
					      (double)o->samples);
	int ret = 0;

	for (unsigned k = 0; ret == 0 && k < o->lost; k++)
		if ((2 * k + 1) * o->samples / (2 * o->lost) == i)
			ret = synth_loss(s, PERF_RECORD_LOST, time,
					 3 * (uint64_t)(k + 1));
	for (unsigned k = 0; ret == 0 && k < o->lost_samples; k++)
		if ((2 * k + 1) * o->samples / (2 * o->lost_samples) == i)
			ret = synth_loss(s, PERF_RECORD_LOST_SAMPLES, time,
					 100 + (uint64_t)k + 1);
	return ret;
}

static uint64_t
synth_data_src(bool store, bool remote)
{
	uint64_t op = store ? PERF_MEM_OP_STORE : PERF_MEM_OP_LOAD;
	uint64_t lvl = store ? PERF_MEM_LVLNUM_L1 : PERF_MEM_LVLNUM_RAM;

	return op | (uint64_t)PERF_MEM_SNOOP_NA << 19 |
	       (uint64_t)PERF_MEM_LOCK_NA << 24 |
	       (uint64_t)PERF_MEM_TLB_NA << 26 | lvl << 33 |
	       (uint64_t)(remote && !store) << 37;
}

static int
synth_sample(struct synth *s, uint64_t i)
{
	const struct synth_opts *o = s->o;
	uint64_t rec[12];
	struct perf_event_header *h = (void *)rec;
	uint64_t r = synth_rand(s), k, addr;
	uint32_t pid = 1000 + (uint32_t)(r % (uint64_t)o->pids);
	uint32_t tid = pid + 5000 * (uint32_t)((r >> 8) & 1);
	uint32_t pair[2];
	int cpu = (int)(i % (uint64_t)o->cpus);
	bool store = (r >> 16) % 10 >= 7;
	size_t n = 1;
	int node;

	if ((r >> 24) & 1)
		k = (r >> 32) % (o->pages / 16 ? o->pages / 16 : 1);
	else
		k = (r >> 32) % o->pages;
	node = (int)(k % (uint64_t)o->nodes);
	addr = SYNTH_BASE + ((uint64_t)(pid - 1000) << 32) +
	       k * SYNTH_PAGE + ((r >> 4) & 0xff8);

	rec[n++] = synth_id(store, cpu);
	rec[n++] = 0x401000 + ((r >> 12) & 0xfff0);
	pair[0] = pid;
	pair[1] = tid;
	memcpy(&rec[n++], pair, sizeof(pair));
	rec[n++] = SYNTH_T0 + (uint64_t)((double)i * o->seconds * 1e9 /
					 (double)o->samples);
	rec[n++] = addr;
	pair[0] = (uint32_t)cpu;
	pair[1] = 0;
	memcpy(&rec[n++], pair, sizeof(pair));
	rec[n++] = 1000;
	rec[n++] = store ? 0 : 100 + ((r >> 40) & 0xff);
	rec[n++] = synth_data_src(store, cpu % o->nodes != node);
	if (o->phys)
		rec[n++] = (uint64_t)node * s->per_node * SYNTH_BLOCK +
			   (k / (uint64_t)o->nodes) * SYNTH_PAGE +
			   (addr & (SYNTH_PAGE - 1));
	memset(h, 0, sizeof(*h));
	h->type = PERF_RECORD_SAMPLE;
	h->misc = PERF_RECORD_MISC_USER;
	h->size = (uint16_t)(8 * n);
	if (store)
		s->pages[(pid - 1000) * o->pages + k].stores++;
	else
		s->pages[(pid - 1000) * o->pages + k].loads++;
	return perfdata_writer_write(s->w, h);
}

static void
synth_truth(const struct synth *s)
{
	const struct synth_opts *o = s->o;

	for (int p = 0; p < o->pids; p++) {
		for (uint64_t k = 0; k < o->pages; k++) {
			const struct synth_page *pg = &s->pages[p * o->pages +
								k];

			if (pg->loads + pg->stores == 0)
				continue;
			fprintf(o->truth, "%d 0x%llx %llu %llu %llu %d\n",
				1000 + p, (unsigned long long)(SYNTH_BASE +
				((uint64_t)p << 32) + k * SYNTH_PAGE),
				(unsigned long long)(pg->loads + pg->stores),
				(unsigned long long)pg->loads,
				(unsigned long long)pg->stores,
				o->phys ? (int)(k % (uint64_t)o->nodes) : -1);
		}
	}
}

int
synth_write(const char *path, const struct synth_opts *o, char *err,
	    size_t errlen)
{
	struct perfdata_writer_opts wo = { .force = true, .swap = o->swap };
	struct synth s = { .o = o, .rng = o->seed | 1 };
	int *cpu_node = NULL;
	struct topo *topo = NULL;
	int ret = -EINVAL;

	if (o->nodes < 1 || o->nodes > 16 || o->cpus < o->nodes ||
	    o->pids < 1 || o->pids > 64 || o->pages < 1 || o->samples < 1) {
		snprintf(err, errlen, "synth: options out of range");
		return -EINVAL;
	}
	s.per_node = o->pages * SYNTH_PAGE / (uint64_t)o->nodes /
		     SYNTH_BLOCK + 1;
	s.pages = calloc((size_t)o->pids * o->pages, sizeof(*s.pages));
	cpu_node = malloc((size_t)o->cpus * sizeof(*cpu_node));
	if (!s.pages || !cpu_node) {
		ret = -ENOMEM;
		snprintf(err, errlen, "synth: out of memory");
		goto out;
	}
	for (int c = 0; c < o->cpus; c++)
		cpu_node[c] = c % o->nodes;
	topo = topo_new_fake(o->cpus, cpu_node);
	if (!topo) {
		ret = -ENOMEM;
		snprintf(err, errlen, "synth: out of memory");
		goto out;
	}
	wo.topo = topo;
	ret = perfdata_writer_open(&s.w, path, &wo, err, errlen);
	if (ret < 0)
		goto out;
	ret = synth_events(&s);
	if (ret == 0 && o->phys)
		ret = synth_mem_topology(&s);
	for (int p = 0; ret == 0 && p < o->pids; p++)
		ret = synth_comm(&s, 1000 + (uint32_t)p);
	for (uint64_t i = 0; ret == 0 && i < o->samples; i++) {
		ret = synth_sample(&s, i);
		if (ret == 0 && (o->lost || o->lost_samples))
			ret = synth_losses_after(&s, i);
	}
	if (ret < 0) {
		snprintf(err, errlen, "synth: %s", strerror(-ret));
		goto out;
	}
	ret = perfdata_writer_close(s.w, err, errlen);
	if (ret == 0 && o->truth)
		synth_truth(&s);
out:
	perfdata_writer_free(s.w);
	topo_free(topo);
	free(cpu_node);
	free(s.pages);
	return ret;
}
