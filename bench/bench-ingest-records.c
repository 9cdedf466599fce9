/*
 * The ingest benchmarks' kernel-format records (bench-ingest.c's top
 * comment): the three layouts' sources and each sample's record, with
 * its thread, CPU, cache line and code address drawn from a hash of its
 * index.  Shared by bench-ingest and bench-drain.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bench-ingest.h"
#include "benchlib.h"

const char *const bench_layout_names[BENCH_N_LAYOUTS] = {
	"faults-tp", "faults-sw", "pebs",
};

const char *const bench_ips_names[BENCH_N_IPS] = {
	"sites", "uniform",
};

/* Cumulative weights (of 65536) of a page's sites when it has k + 1:
 * site j is drawn with weight 1 / (j + 1). */
static uint32_t bench_site_cum[BENCH_PAGE_SITES][BENCH_PAGE_SITES];

void
bench_sites_init(void)
{
	for (unsigned k = 0; k < BENCH_PAGE_SITES; k++) {
		double sum = 0, acc = 0;

		for (unsigned j = 0; j <= k; j++)
			sum += 1.0 / (j + 1);
		for (unsigned j = 0; j <= k; j++) {
			acc += 1.0 / (j + 1);
			bench_site_cum[k][j] = (uint32_t)(acc / sum * 65536);
		}
		bench_site_cum[k][k] = 65536;
	}
}

void
bench_source(struct bench_case *bc)
{
	struct source *src = &bc->src;
	struct event_spec *ev = &src->events[0];
	const uint64_t common = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
				PERF_SAMPLE_TID | PERF_SAMPLE_CPU;

	memset(src, 0, sizeof(*src));
	memset(&bc->ch, 0, sizeof(bc->ch));
	src->n_events = 1;
	src->default_period = 1;
	ev->leader = -1;
	ev->tp_addr_off = ev->tp_ip_off = ev->tp_error_off = -1;
	switch (bc->layout) {
	case BENCH_FAULTS_TP:
		snprintf(src->name, sizeof(src->name), "faults");
		ev->attr.sample_type = common | PERF_SAMPLE_TIME |
				       PERF_SAMPLE_RAW;
		ev->role = ROLE_FAULT_TP;
		ev->tp_addr_off = BENCH_TP_ADDR;
		ev->tp_ip_off = BENCH_TP_IP;
		ev->tp_error_off = BENCH_TP_ERROR;
		src->has_kinds = true;
		break;
	case BENCH_FAULTS_SW:
		snprintf(src->name, sizeof(src->name), "faults");
		ev->attr.sample_type = common | PERF_SAMPLE_TIME |
				       PERF_SAMPLE_ADDR;
		ev->role = ROLE_FAULT;
		break;
	case BENCH_PEBS:
	default:
		snprintf(src->name, sizeof(src->name), "pebs");
		src->n_events = 2;
		src->has_kinds = true;
		src->period_in_sample = true;
		src->default_period = 10007;
		ev->attr.sample_type = common | PERF_SAMPLE_ADDR |
				       PERF_SAMPLE_PERIOD |
				       PERF_SAMPLE_WEIGHT_STRUCT |
				       PERF_SAMPLE_DATA_SRC;
		ev->role = ROLE_LOAD;
		src->events[1] = *ev;
		src->events[1].role = ROLE_STORE;
		bc->ch.ids[0] = BENCH_ID_LOADS;
		bc->ch.ids[1] = BENCH_ID_STORES;
		break;
	}
	bc->ch.src = src;
	bc->ch.n = src->n_events;
}

static size_t
bench_put_u64(unsigned char *rec, size_t at, uint64_t v)
{
	memcpy(rec + at, &v, sizeof(v));
	return at + sizeof(v);
}

static size_t
bench_put_u32x2(unsigned char *rec, size_t at, uint32_t a, uint32_t b)
{
	memcpy(rec + at, &a, sizeof(a));
	memcpy(rec + at + 4, &b, sizeof(b));
	return at + 8;
}

/* The code address of a sample of page index p (see the top comment);
 * u: random bits of the sample. */
static uint64_t
bench_ip(enum bench_ips mode, size_t p, uint64_t u)
{
	struct benchlib_rng pr = { BENCH_SEED ^ ((uint64_t)p << 20) };
	uint64_t ph, x = u & 0xffff;
	unsigned k, j = 0;

	if (mode == BENCH_IPS_UNIFORM)
		return 0x400000 + (u >> 16) % BENCH_IPS * 16;
	ph = benchlib_rand(&pr);
	k = (unsigned)(ph % BENCH_PAGE_SITES);	/* k + 1 sites */
	while (x >= bench_site_cum[k][j])
		j++;
	/* Site j of the page: ph's bits, mixed again per site. */
	ph ^= (uint64_t)(j + 1) * 0x9e3779b97f4a7c15ull;
	ph ^= ph >> 29;
	return 0x400000 + (ph * 0xbf58476d1ce4e5b9ull >> 40) % BENCH_IPS * 16;
}

/*
 * Record i of the stream.  Everything but the page comes from a hash of
 * i: thread, CPU, cache line, code address (bench_ip), 30 % stores.
 */
size_t
bench_record(const struct bench_case *bc, const struct bench_stream *st,
	     size_t i, unsigned char *rec)
{
	struct benchlib_rng r = { BENCH_SEED ^ (uint64_t)i };
	uint64_t h = benchlib_rand(&r), page, addr, ip;
	struct perf_event_header hdr = { .type = PERF_RECORD_SAMPLE };
	uint32_t tid, cpu = bc->fixed_cpu >= 0 ? (uint32_t)bc->fixed_cpu :
						 (uint32_t)(h % BENCH_CPUS);
	bool store = (h >> 8) % 10 < 3;
	int32_t pid;
	size_t at = sizeof(hdr);

	bench_page_key(st->page[i], &pid, &page);
	tid = (uint32_t)pid + (uint32_t)((h >> 16) % BENCH_THREADS);
	addr = page << 12 | ((h >> 24) & 0xfc0) | ((h >> 40) & 0x38);
	ip = bench_ip(bc->ips, st->page[i], benchlib_rand(&r));
	switch (bc->layout) {
	case BENCH_FAULTS_TP: {
		unsigned char raw[40] = { 0 };
		uint32_t raw_size = 36;	/* 4 + 36: 8-aligned */
		uint64_t err = store ? 0x6 : 0x4;

		memcpy(raw + BENCH_TP_ADDR, &addr, 8);
		memcpy(raw + BENCH_TP_IP, &ip, 8);
		memcpy(raw + BENCH_TP_ERROR, &err, 8);
		at = bench_put_u64(rec, at, 0);
		at = bench_put_u64(rec, at, 0xffffffff81000000ull);
		at = bench_put_u32x2(rec, at, (uint32_t)pid, tid);
		at = bench_put_u64(rec, at, BENCH_TIME0 + i * 50);
		at = bench_put_u32x2(rec, at, cpu, 0);
		memcpy(rec + at, &raw_size, 4);
		memcpy(rec + at + 4, raw, raw_size);
		at += 4 + raw_size;
		break;
	}
	case BENCH_FAULTS_SW:
		at = bench_put_u64(rec, at, 0);
		at = bench_put_u64(rec, at, ip);
		at = bench_put_u32x2(rec, at, (uint32_t)pid, tid);
		at = bench_put_u64(rec, at, BENCH_TIME0 + i * 50);
		at = bench_put_u64(rec, at, addr);
		at = bench_put_u32x2(rec, at, cpu, 0);
		break;
	case BENCH_PEBS:
	default:
		at = bench_put_u64(rec, at, store ? BENCH_ID_STORES :
						    BENCH_ID_LOADS);
		at = bench_put_u64(rec, at, ip);
		at = bench_put_u32x2(rec, at, (uint32_t)pid, tid);
		at = bench_put_u64(rec, at, addr);
		at = bench_put_u32x2(rec, at, cpu, 0);
		at = bench_put_u64(rec, at, 10007);
		at = bench_put_u64(rec, at, store ? 0 : 30 + (h >> 56));
		at = bench_put_u64(rec, at, store ? 0x5080144 : 0x68100142);
		break;
	}
	hdr.size = (uint16_t)at;
	memcpy(rec, &hdr, sizeof(hdr));
	return at;
}
