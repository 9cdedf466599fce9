#include "config.h"

/*
 * Fuzz target for the perf.data reader and the replay: open the input as
 * a file image, build the topology its features describe, read every
 * record, decode samples with the event's layout (every field: each one
 * of variable size inside its record), look up physical addresses; read
 * it again in time order through a small reorder window; then replay it
 * (batch) and check every frame.  Any
 * input must end in an error or the end of the data, without a crash, a
 * hang or an oversized allocation (ASan and the fuzzer's -rss_limit_mb
 * catch those); invariants that must hold for any input are checked with
 * __builtin_trap().
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target (scripts/test
 * runs it for a minute over tests/fuzz/corpus/perfdata).  Otherwise
 * tests/fuzz/fuzzmain.c replays every file of the directories or files given,
 * and for each also every 8-byte prefix of its first 2 KiB and a fixed
 * set of pseudo-random byte changes, so the plain test suite already
 * walks the error paths.
 */

#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "frame.h"
#include "fuzzmain.h"
#include "perfdata_order.h"
#include "perfdata_read.h"
#include "producer.h"
#include "queue.h"
#include "record.h"
#include "replay.h"
#include "topo.h"

/* A field of variable size lies inside its record. */
static void
fuzz_span(const struct perf_event_header *h, const struct record_span *sp,
	  uint64_t each)
{
	const unsigned char *p = sp->p, *end = (const unsigned char *)h +
					       h->size;

	if (p && (p < (const unsigned char *)h ||
		  sp->n > (uint64_t)(end - p) / each))
		__builtin_trap();
}

static void
fuzz_sample(const struct perf_event_header *h, const struct record_sample *s)
{
	fuzz_span(h, &s->read, 8);
	fuzz_span(h, &s->callchain, 8);
	fuzz_span(h, &s->branches, 24);
	fuzz_span(h, &s->branch_counters, 8);
	fuzz_span(h, &s->regs_user, 8);
	fuzz_span(h, &s->stack_user, 1);
	fuzz_span(h, &s->regs_intr, 8);
	fuzz_span(h, &s->aux, 1);
	if (s->stack_user_dyn > s->stack_user.n)
		__builtin_trap();
	/* A caller is one of the chain's entries. */
	if (s->caller) {
		bool found = false;

		for (uint64_t i = 0; i < s->callchain.n && !found; i++) {
			uint64_t v;

			memcpy(&v, (const unsigned char *)s->callchain.p + 8 * i,
			       8);
			found = v == s->caller;
		}
		if (!found)
			__builtin_trap();
	}
}

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
		fuzz_sample(h, &s);
		perfdata_info_phys_node(perfdata_reader_info(r), s.phys_addr);
	}
	record_parse_task(h, &task);
	record_parse_lost(h, &v);
	if (record_parse_comm(h, &pid, &tid, comm) == 0 && strlen(comm) > 15)
		__builtin_trap();
}

/*
 * The records again in time order, through a window of 4 KiB (so that a
 * corpus file fills it): the same records come out, each whole, and
 * every one older than one before it is counted in `unordered`.
 */
static void
fuzz_order(const uint8_t *data, size_t size, uint64_t n_read)
{
	struct perfdata_reader *r;
	struct perfdata_order *o;
	struct perfdata_record rec;
	uint64_t n = 0, late = 0, newest = 0, t;
	char err[256];
	int ret;

	if (perfdata_reader_open_mem(&r, data, size, err, sizeof(err)) < 0)
		return;
	if (perfdata_order_new(&o, 4096) < 0) {
		perfdata_reader_free(r);
		return;
	}
	while ((ret = perfdata_order_next(o, r, &rec, err, sizeof(err))) ==
	       1) {
		const struct perfdata_event *ev =
			perfdata_reader_event(r, rec.event_idx);

		if (rec.hdr->size < sizeof(*rec.hdr) ||
		    ((uintptr_t)rec.hdr & 7) != 0 || rec.hdr->type == 68)
			__builtin_trap();
		n++;
		if (!ev || record_time(&ev->layout, rec.hdr, &t) < 0)
			continue;
		if (t < newest)
			late++;
		else
			newest = t;
	}
	if (ret < 0 && (err[0] == '\0' || strchr(err, '\n')))
		__builtin_trap();
	/* FINISHED_ROUND is the only record the order keeps to itself. */
	if (n + perfdata_order_stats(o)->rounds != n_read ||
	    late != perfdata_order_stats(o)->unordered)
		__builtin_trap();
	perfdata_order_free(o);
	perfdata_reader_free(r);
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
	/* The inputs name files of this machine: no ELF helper per input
	 * (fuzz-elf fuzzes that parse). */
	cfg.no_files = true;
	if (replay_new(&rp, &cfg, err, sizeof(err)) < 0 ||
	    producer_start(replay_producer(rp)) < 0)
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
	if (rp)
		producer_free(replay_producer(rp));
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
	fuzz_order(data, size, n);
	fuzz_replay(data, size);
	return 0;
}

/*
 * After the file itself: every 8-byte prefix of its first 2 KiB, and 300
 * copies with 1 to 4 bytes changed.
 */
static void
fuzz_perfdata_variants(const uint8_t *data, size_t size,
		       void (*run)(const uint8_t *data, size_t size))
{
	uint8_t *copy = malloc(size ? size : 1);
	uint64_t x = 0x9e3779b97f4a7c15ull ^ size;

	if (!copy)
		return;
	for (size_t n = 0; n < size && n < 2048; n += 8)
		run(data, n);
	for (int i = 0; i < 300 && size > 0; i++) {
		memcpy(copy, data, size);
		for (int k = 0; k < 1 + i % 4; k++) {
			fuzz_next(&x);
			/* Half the changes land in the first 512 bytes,
			 * where the header, attrs and sizes usually are. */
			size_t off = (x >> 1) % ((x & 1) && size > 512 ?
						 512 : size);

			copy[off] = (uint8_t)(x >> 32);
		}
		run(copy, size);
	}
	free(copy);
}

/* No generator of its own: the inputs come from the corpus. */
const struct fuzz_target fuzz_target = {
	.name = "fuzz-perfdata",
	.need_files = 1,
	.variants = fuzz_perfdata_variants,
};
