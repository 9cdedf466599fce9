#include "config.h"

/*
 * Test helper around memtop's perf.data reader and writer:
 *
 *   perfdata-tool dump FILE [--addrs]
 *       what the reader sees: mode, byte order, events, features, record
 *       counts; --addrs adds one "addr" line per sample with an address
 *       (the same as `perf script -F addr`)
 *   perfdata-tool swap IN OUT
 *       rewrites IN in the other byte order (events, ids, the kernel
 *       records memtop writes, NUMA/MEM topology, PMU names)
 *   perfdata-tool gen OUT [--samples N] [--nodes K] [--cpus C]
 *       [--pages P] [--pids N] [--no-phys] [--swap] [--seconds S]
 *       [--truth FILE] [--lost N] [--lost-samples N] [--lost-truth FILE]
 *       a synthetic capture (perfdata-synth.h)
 *
 * Exit status: 0 done, 1 the reader or writer failed, 2 usage.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata-synth.h"
#include "perfdata_read.h"
#include "perfdata_write.h"
#include "record.h"
#include "topo.h"

static int
tool_usage(void)
{
	fprintf(stderr, "usage: perfdata-tool dump FILE [--addrs] | swap IN "
		"OUT | gen OUT [options]\n");
	return 2;
}

static void
tool_dump_info(const struct perfdata_reader *r)
{
	const struct perfdata_info *info = perfdata_reader_info(r);

	printf("mode %s\nswapped %d\n", perfdata_reader_is_pipe(r) ?
	       "pipe" : "file", perfdata_reader_is_swapped(r));
	for (size_t i = 0; i < perfdata_reader_n_events(r); i++) {
		const struct perfdata_event *ev = perfdata_reader_event(r, i);

		printf("event %zu name %s type %u config 0x%llx sample_type "
		       "0x%llx ids %zu attr_size %u\n", i, ev->name,
		       ev->attr.type, (unsigned long long)ev->attr.config,
		       (unsigned long long)ev->attr.sample_type, ev->n_ids,
		       ev->file_attr_size);
	}
	printf("hostname %s\nnrcpus %u\n", info->hostname,
	       info->nr_cpus_avail);
	for (size_t i = 0; i < info->n_nodes; i++)
		printf("node %d total_kb %llu cpus %s\n", info->nodes[i].node,
		       (unsigned long long)info->nodes[i].mem_total_kb,
		       info->nodes[i].cpus);
	printf("mem_block_size 0x%llx mem_nodes %zu\n",
	       (unsigned long long)info->mem_block_size, info->n_mem);
	for (size_t i = 0; i < info->n_pmus; i++)
		printf("pmu %u %s\n", info->pmus[i].type, info->pmus[i].name);
	printf("compressed %d\nunknown_features %llu bad_features %llu\n",
	       info->compressed, (unsigned long long)info->unknown_features,
	       (unsigned long long)info->bad_features);
}

static int
tool_dump(const char *path, bool addrs)
{
	uint64_t by_type[128] = { 0 }, other = 0;
	struct perfdata_reader *r;
	struct perfdata_record rec;
	char err[256];
	int ret;

	ret = perfdata_reader_open(&r, path, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "perfdata-tool: %s: %s\n", path, err);
		return 1;
	}
	if (!addrs)
		tool_dump_info(r);
	while ((ret = perfdata_reader_next(r, &rec, err, sizeof(err))) == 1) {
		const struct perfdata_event *ev;
		struct record_sample s;

		if (rec.hdr->type < 128)
			by_type[rec.hdr->type]++;
		else
			other++;
		if (!addrs || rec.hdr->type != PERF_RECORD_SAMPLE)
			continue;
		ev = perfdata_reader_event(r, rec.event_idx);
		if (ev && record_parse_sample(&ev->layout, rec.hdr, &s) == 0 &&
		    (s.present & PERF_SAMPLE_ADDR))
			printf("%16llx\n", (unsigned long long)s.addr);
	}
	if (!addrs) {
		const struct perfdata_stats *st = perfdata_reader_stats(r);

		for (int t = 0; t < 128; t++)
			if (by_type[t])
				printf("records type %d: %llu\n", t,
				       (unsigned long long)by_type[t]);
		printf("skipped %llu unknown %llu unmatched %llu bad %llu "
		       "compressed %llu decompressed_bytes %llu\n",
		       (unsigned long long)st->skipped_records,
		       (unsigned long long)st->unknown_records,
		       (unsigned long long)st->unmatched,
		       (unsigned long long)st->bad_records,
		       (unsigned long long)st->compressed_records,
		       (unsigned long long)st->decompressed_bytes);
	}
	if (ret < 0)
		fprintf(stderr, "perfdata-tool: %s: %s\n", path, err);
	perfdata_reader_free(r);
	return ret < 0 ? 1 : 0;
}

/* MEM_TOPOLOGY bitmaps back to a block -> node array. */
static int
tool_copy_mem(const struct perfdata_info *info, struct perfdata_writer *w)
{
	uint64_t n = 0;
	int16_t *map;
	int ret;

	for (size_t i = 0; i < info->n_mem; i++)
		if (info->mem[i].nr_bits > n)
			n = info->mem[i].nr_bits;
	if (n == 0 || n > (1u << 24))
		return 0;
	map = malloc(n * sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (uint64_t b = 0; b < n; b++)
		map[b] = -1;
	for (size_t i = 0; i < info->n_mem; i++)
		for (uint64_t b = 0; b < info->mem[i].nr_bits; b++)
			if (info->mem[i].bitmap[b / 64] >> (b % 64) & 1)
				map[b] = (int16_t)info->mem[i].node;
	ret = perfdata_writer_set_mem_topology(w, info->mem_block_size, map,
					       (size_t)n);
	free(map);
	return ret;
}

static int
tool_swap(const char *in, const char *out)
{
	struct perfdata_writer_opts wo = { .force = true };
	struct perfdata_writer *w = NULL;
	struct perfdata_reader *r;
	const struct perfdata_info *info;
	struct perfdata_record rec;
	struct topo *topo = NULL;
	char err[256];
	int ret;

	ret = perfdata_reader_open(&r, in, err, sizeof(err));
	if (ret < 0)
		goto out_err;
	info = perfdata_reader_info(r);
	wo.swap = !perfdata_reader_is_swapped(r);
	if (info->n_nodes) {
		topo = perfdata_info_topo(info, err, sizeof(err));
		if (!topo) {
			ret = -EINVAL;
			goto out_err;
		}
	}
	wo.topo = topo;
	ret = perfdata_writer_open(&w, out, &wo, err, sizeof(err));
	if (ret < 0)
		goto out_err;
	for (size_t i = 0; i < perfdata_reader_n_events(r); i++) {
		const struct perfdata_event *ev = perfdata_reader_event(r, i);

		if (ev->attr.sample_type & PERF_SAMPLE_RAW) {
			/* The payload's fields would need its format. */
			snprintf(err, sizeof(err), "%s has RAW payloads, which "
				 "this converter cannot swap", ev->name);
			ret = -EINVAL;
			goto out_err;
		}
		ret = perfdata_writer_add_event(w, &ev->attr, ev->name);
		for (size_t k = 0; ret >= 0 && k < ev->n_ids; k++)
			ret = perfdata_writer_add_id(w, i, ev->ids[k]);
		if (ret < 0)
			goto out_errno;
	}
	for (size_t i = 0; i < info->n_pmus; i++)
		perfdata_writer_add_pmu(w, info->pmus[i].type,
					info->pmus[i].name);
	ret = tool_copy_mem(info, w);
	if (ret < 0)
		goto out_errno;
	while ((ret = perfdata_reader_next(r, &rec, err, sizeof(err))) == 1) {
		ret = perfdata_writer_write(w, rec.hdr);
		if (ret < 0)
			goto out_errno;
	}
	if (ret < 0)
		goto out_err;
	ret = perfdata_writer_close(w, err, sizeof(err));
	if (ret < 0)
		goto out_err;
	goto out;
out_errno:
	snprintf(err, sizeof(err), "%s", strerror(-ret));
out_err:
	fprintf(stderr, "perfdata-tool: swap %s: %s\n", in, err);
out:
	perfdata_writer_free(w);
	perfdata_reader_free(r);
	topo_free(topo);
	return ret < 0 ? 1 : 0;
}

static int
tool_gen(int argc, char **argv)
{
	struct synth_opts o;
	char err[256];
	int ret;

	synth_defaults(&o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--no-phys") == 0) {
			o.phys = false;
			continue;
		}
		if (strcmp(a, "--swap") == 0) {
			o.swap = true;
			continue;
		}
		if (!v)
			return tool_usage();
		i++;
		if (strcmp(a, "--samples") == 0)
			o.samples = strtoull(v, NULL, 0);
		else if (strcmp(a, "--nodes") == 0)
			o.nodes = atoi(v);
		else if (strcmp(a, "--cpus") == 0)
			o.cpus = atoi(v);
		else if (strcmp(a, "--pages") == 0)
			o.pages = strtoull(v, NULL, 0);
		else if (strcmp(a, "--pids") == 0)
			o.pids = atoi(v);
		else if (strcmp(a, "--seconds") == 0)
			o.seconds = atof(v);
		else if (strcmp(a, "--truth") == 0)
			o.truth = fopen(v, "w");
		else if (strcmp(a, "--lost") == 0)
			o.lost = (unsigned)strtoul(v, NULL, 0);
		else if (strcmp(a, "--lost-samples") == 0)
			o.lost_samples = (unsigned)strtoul(v, NULL, 0);
		else if (strcmp(a, "--lost-truth") == 0)
			o.lost_truth = fopen(v, "w");
		else
			return tool_usage();
	}
	ret = synth_write(argv[0], &o, err, sizeof(err));
	if (o.truth && fclose(o.truth) != 0)
		ret = -EIO;
	if (o.lost_truth && fclose(o.lost_truth) != 0)
		ret = -EIO;
	if (ret < 0) {
		fprintf(stderr, "perfdata-tool: gen %s: %s\n", argv[0], err);
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "dump") == 0)
		return tool_dump(argv[2], argc > 3 &&
				 strcmp(argv[3], "--addrs") == 0);
	if (argc == 4 && strcmp(argv[1], "swap") == 0)
		return tool_swap(argv[2], argv[3]);
	if (argc >= 3 && strcmp(argv[1], "gen") == 0)
		return tool_gen(argc - 2, argv + 2);
	return tool_usage();
}
