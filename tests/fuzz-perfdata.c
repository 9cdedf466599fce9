#include "config.h"

/*
 * Fuzz target for the perf.data reader and the replay: open the input as
 * a file image, build the topology its features describe, read every
 * record, decode samples with the event's layout, look up physical
 * addresses; then replay it (batch) and check every frame.  Any
 * input must end in an error or the end of the data, without a crash, a
 * hang or an oversized allocation (ASan and the fuzzer's -rss_limit_mb
 * catch those); invariants that must hold for any input are checked with
 * __builtin_trap().
 *
 * Built with -DMEMTOP_LIBFUZZER and -fsanitize=fuzzer it is a libFuzzer
 * target (scripts/test runs it for a minute over tests/corpus/perfdata).
 * Otherwise main() replays every file of the directories or files given,
 * and for each also every 8-byte prefix of its first 2 KiB and a fixed
 * set of pseudo-random byte changes, so the plain test suite already
 * walks the error paths.
 */

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "frame.h"
#include "perfdata_read.h"
#include "queue.h"
#include "record.h"
#include "replay.h"
#include "topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_record(const struct perfdata_reader *r, const struct perfdata_record *rec)
{
	const struct perf_event_header *h = rec->hdr;
	const struct perfdata_event *ev;
	struct record_sample s;
	struct record_task task;
	uint32_t pid, tid;
	char comm[16];
	uint64_t v;

	if (h->size < sizeof(*h) || ((uintptr_t)h & 7) != 0)
		__builtin_trap();
	if (rec->event_idx != PERFDATA_NO_EVENT &&
	    rec->event_idx >= perfdata_reader_n_events(r))
		__builtin_trap();
	ev = perfdata_reader_event(r, rec->event_idx);
	if (h->type == PERF_RECORD_SAMPLE && ev &&
	    record_parse_sample(&ev->layout, h, &s) == 0) {
		const unsigned char *end = (const unsigned char *)h + h->size;

		if (s.raw && ((const unsigned char *)s.raw <
			      (const unsigned char *)h ||
			      (const unsigned char *)s.raw + s.raw_size > end))
			__builtin_trap();
		perfdata_info_phys_node(perfdata_reader_info(r), s.phys_addr);
	}
	record_parse_task(h, &task);
	record_parse_lost(h, &v);
	if (record_parse_comm(h, &pid, &tid, comm) == 0 && strlen(comm) > 15)
		__builtin_trap();
}

/*
 * The same input through the replay thread (batch: every frame kept):
 * it must end with a final frame, within a number of frames the input
 * bounds (each sample may close at most REPLAY_MAX_EMPTY + 2 frames), and
 * every frame must pass frame_check().
 */
static void
fuzz_replay(const uint8_t *data, size_t size)
{
	struct replay_config cfg = { 0 };
	struct perfdata_reader *r = NULL;
	struct replay *rp = NULL;
	struct topo *t = NULL;
	uint64_t frames = 0, bound = 110 * (size / 8 + 2);
	char err[256];
	bool final = false;

	cfg.frames = queue_new(256, sizeof(struct frame *));
	cfg.cmds = queue_new(4, sizeof(struct cmd));
	if (!cfg.frames || !cfg.cmds ||
	    perfdata_reader_open_mem(&r, data, size, err, sizeof(err)) < 0)
		goto out;
	t = perfdata_info_topo(perfdata_reader_info(r), err, sizeof(err));
	if (!t)
		goto out;
	cfg.reader = r;
	cfg.topo = t;
	cfg.path = "fuzz";
	cfg.interval_s = 0.5;
	cfg.top_k = 4;
	cfg.max_pages = 4096;
	cfg.batch = true;
	if (replay_new(&rp, &cfg, err, sizeof(err)) < 0 ||
	    replay_start(rp) < 0)
		goto out;
	while (!final) {
		struct pollfd pfd = { .fd = queue_fd(cfg.frames),
				      .events = POLLIN };
		struct frame *f;
		char why[256];

		if (queue_pop(cfg.frames, &f) < 0) {
			poll(&pfd, 1, 1000);
			continue;
		}
		final = f->final;
		if (frame_check(f, why, sizeof(why)) != 0 || ++frames > bound)
			__builtin_trap();
		frame_free(f);
	}
out:
	replay_free(rp);
	perfdata_reader_free(r);
	topo_free(t);
	queue_free(cfg.frames);
	queue_free(cfg.cmds);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfdata_reader *r;
	struct perfdata_record rec;
	struct topo *t;
	char err[256];
	uint64_t n = 0;
	int ret;

	if (perfdata_reader_open_mem(&r, data, size, err, sizeof(err)) < 0)
		return 0;
	t = perfdata_info_topo(perfdata_reader_info(r), err, sizeof(err));
	if (t && topo_n_nodes(t) < 1)
		__builtin_trap();
	topo_free(t);
	while ((ret = perfdata_reader_next(r, &rec, err, sizeof(err))) == 1) {
		fuzz_record(r, &rec);
		/* Each record takes at least 8 bytes of input or of bounded
		 * decompressed output. */
		if (++n > size + (perfdata_reader_stats(r)->decompressed_bytes))
			__builtin_trap();
	}
	if (ret < 0 && (err[0] == '\0' || strchr(err, '\n')))
		__builtin_trap();
	perfdata_reader_free(r);
	fuzz_replay(data, size);
	return 0;
}

#ifndef MEMTOP_LIBFUZZER
static unsigned long fuzz_inputs;

/* An exact-size copy, so that ASan sees a read past the input. */
static void
fuzz_one(const uint8_t *data, size_t size)
{
	uint8_t *exact = malloc(size ? size : 1);

	if (!exact)
		return;
	memcpy(exact, data, size);
	LLVMFuzzerTestOneInput(exact, size);
	free(exact);
	fuzz_inputs++;
}

/* The file as is, its prefixes, and changed copies. */
static void
fuzz_variants(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	uint64_t x = 0x9e3779b97f4a7c15ull ^ size;

	if (!copy)
		return;
	fuzz_one(data, size);
	for (size_t n = 0; n < size && n < 2048; n += 8)
		fuzz_one(data, n);
	for (int i = 0; i < 300 && size > 0; i++) {
		memcpy(copy, data, size);
		for (int k = 0; k < 1 + i % 4; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* Half the changes land in the first 512 bytes,
			 * where the header, attrs and sizes usually are. */
			size_t off = (x >> 1) % ((x & 1) && size > 512 ?
						 512 : size);

			copy[off] = (uint8_t)(x >> 32);
		}
		fuzz_one(copy, size);
	}
	free(copy);
}

static int
fuzz_file(const char *path)
{
	struct stat st;
	uint8_t *buf;
	size_t got;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st) < 0) {
		fprintf(stderr, "fuzz-perfdata: %s: %s\n", path,
			strerror(errno));
		if (f)
			fclose(f);
		return 1;
	}
	buf = malloc((size_t)st.st_size + 1);
	got = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
	fclose(f);
	if (buf)
		fuzz_variants(buf, got);
	free(buf);
	return buf ? 0 : 1;
}

static int
fuzz_path(const char *path)
{
	struct dirent **names;
	struct stat st;
	int n, err = 0;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return fuzz_file(path);
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "fuzz-perfdata: %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char full[4096];

		if (names[i]->d_name[0] != '.' &&
		    snprintf(full, sizeof(full), "%s/%s", path,
			     names[i]->d_name) < (int)sizeof(full))
			err |= fuzz_file(full);
		free(names[i]);
	}
	free(names);
	return err;
}

int
main(int argc, char **argv)
{
	int err = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: fuzz-perfdata DIR|FILE...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++)
		err |= fuzz_path(argv[i]);
	printf("%lu inputs, no invariant broken\n", fuzz_inputs);
	return err;
}
#endif
