#include "config.h"

/*
 * PEBS and IBS samples, byte for byte, through the code a real run uses:
 * the sources are built from the recorded sysfs trees (tests/fixtures/sysfs-pmu),
 * SAMPLE records are laid out by hand for exactly the sample_type each
 * event requests (fields in perf_output_sample() order: docs/kernel.md,
 * "SAMPLE records"), written into a synthetic mmap ring that wraps,
 * drained with ring_drain, dispatched by IDENTIFIER with
 * channel_event_by_id, parsed with record_parse_sample and turned into
 * samples by source_decode.  Checked:
 * kind, address, weight (latency), data_src and what datasrc.c makes of
 * it, and the drops: aux leader samples ignored (-1), samples without an
 * address, from pid -1 or (IBS without swfilt) at kernel addresses
 * unattributed (0).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "channel.h"
#include "datasrc.h"
#include "record.h"
#include "ring.h"
#include "source.h"
#include "testlib.h"

#define ID_BASE 0x5000

/* What one synthetic sample carries; the builder writes what sample_type
 * asks for and nothing else. */
struct fields {
	uint64_t id, ip;
	uint32_t pid, tid;
	uint64_t time, addr;
	uint32_t cpu;
	uint64_t period, weight, data_src;
};

struct rec {
	uint64_t buf[32];
	size_t len;
};

static void
rec_u64(struct rec *r, uint64_t v)
{
	memcpy((unsigned char *)r->buf + r->len, &v, 8);
	r->len += 8;
}

static void
rec_u32x2(struct rec *r, uint32_t a, uint32_t b)
{
	memcpy((unsigned char *)r->buf + r->len, &a, 4);
	memcpy((unsigned char *)r->buf + r->len + 4, &b, 4);
	r->len += 8;
}

/* The bits this builder knows how to lay out. */
#define BUILDABLE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		   PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | \
		   PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT | \
		   PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC)

/* Lays out a SAMPLE in kernel order; 0, or -1 for an unknown bit. */
static int
rec_build(struct rec *r, uint64_t st, const struct fields *f)
{
	struct perf_event_header hdr = { .type = PERF_RECORD_SAMPLE,
					 .misc = PERF_RECORD_MISC_USER |
						 PERF_RECORD_MISC_EXACT_IP };

	if (st & ~(uint64_t)BUILDABLE)
		return -1;
	memset(r, 0, sizeof(*r));
	r->len = sizeof(hdr);
	if (st & PERF_SAMPLE_IDENTIFIER)
		rec_u64(r, f->id);
	if (st & PERF_SAMPLE_IP)
		rec_u64(r, f->ip);
	if (st & PERF_SAMPLE_TID)
		rec_u32x2(r, f->pid, f->tid);
	if (st & PERF_SAMPLE_TIME)
		rec_u64(r, f->time);
	if (st & PERF_SAMPLE_ADDR)
		rec_u64(r, f->addr);
	if (st & PERF_SAMPLE_CPU)
		rec_u32x2(r, f->cpu, 0);
	if (st & PERF_SAMPLE_PERIOD)
		rec_u64(r, f->period);
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		rec_u64(r, f->weight);
	if (st & PERF_SAMPLE_DATA_SRC)
		rec_u64(r, f->data_src);
	hdr.size = (uint16_t)r->len;
	memcpy(r->buf, &hdr, sizeof(hdr));
	return 0;
}

/* A ring of 2 data pages whose producer starts 24 bytes before the end,
 * so the first record straddles it. */
struct tring {
	void *base;
	size_t len, page;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size, head;
};

static int
tring_new(struct tring *t)
{
	t->page = (size_t)sysconf(_SC_PAGESIZE);
	t->len = 3 * t->page;
	t->base = mmap(NULL, t->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->base == MAP_FAILED)
		return -errno;
	t->meta = t->base;
	t->data = (unsigned char *)t->base + t->page;
	t->size = 2 * t->page;
	t->meta->data_offset = t->page;
	t->meta->data_size = t->size;
	t->head = t->size - 24 + 4 * t->size;	/* free-running u64 */
	t->meta->data_head = t->meta->data_tail = t->head;
	return 0;
}

static void
tring_put(struct tring *t, const struct rec *r)
{
	for (size_t i = 0; i < r->len; i++)
		t->data[(t->head + i) & (t->size - 1)] =
			((const unsigned char *)r->buf)[i];
	t->head += r->len;
	__atomic_store_n(&t->meta->data_head, t->head, __ATOMIC_RELEASE);
}

/* One expected outcome per record, in ring order. */
struct want {
	int ret;		/* source_decode's answer */
	int kind;
	uint64_t addr, weight, data_src, period;
	const char *event;	/* the event the IDENTIFIER must map to */
	enum datasrc_level level;
	int remote;
};

struct drain {
	const struct source *src;
	struct channel_events *ch;
	const struct want *want;
	size_t n, seen, bad;
};

static int
on_record(const struct perf_event_header *hdr, void *ctx)
{
	struct drain *d = ctx;
	const struct want *w = &d->want[d->seen];
	const struct event_spec *ev;
	struct record_layout l;
	struct record_sample rs;
	struct sample s;
	uint64_t id;
	int ret;

	if (d->seen >= d->n) {
		d->bad++;
		return 1;
	}
	d->seen++;
	if (!check_eq_i64(record_identifier(hdr, &id), 0))
		return 0;
	ev = channel_events_find(d->ch, id);
	if (!check(ev != NULL))
		return 0;
	check_eq_str(ev->name, w->event);
	source_layout(ev, &l);
	if (!check_eq_i64(record_parse_sample(&l, hdr, &rs), 0))
		return 0;
	memset(&s, 0, sizeof(s));
	ret = source_decode(d->src, ev, &rs, 1, &s);
	check_eq_i64(ret, w->ret);
	if (ret < 0)
		return 0;
	check_eq_i64(s.kind, w->kind);
	check_eq_u64(s.addr, w->addr);
	check_eq_u64(s.weight, w->weight);
	check_eq_u64(s.data_src, w->data_src);
	check_eq_u64(s.period, w->period);
	check_eq_i64(datasrc_level(s.data_src), w->level);
	check_eq_i64(datasrc_is_remote(s.data_src), w->remote);
	return 0;
}

/* Builds `machine`'s source as `release`; 0 or skips/fails. */
static int
load_source(const char *machine, const char *release, const char *which,
	    struct source *src)
{
	const char *srcdir = getenv("MEMTOP_SRCDIR");
	char root[1024], why[512];
	int ret;

	if (!srcdir)
		test_skip("MEMTOP_SRCDIR not set (run through meson test)");
	snprintf(root, sizeof(root), "%s/tests/fixtures/sysfs-pmu/%s", srcdir,
		 machine);
	setenv("MEMTOP_SYSFS_ROOT", root, 1);
	setenv("MEMTOP_KERNEL_RELEASE", release, 1);
	ret = strcmp(which, "pebs") == 0 ?
	      source_pebs_init(src, 0, why, sizeof(why)) :
	      source_ibs_init(src, why, sizeof(why));
	if (!check_eq_i64(ret, 0))
		fprintf(stderr, "  %s: %s\n", machine, why);
	return ret;
}

/* Writes the records, drains them and checks each against want[]. */
static void
run(const char *what, const struct source *src, const struct fields *f,
    const struct want *want, size_t n, size_t expect_len)
{
	struct channel_events ch;
	struct tring t = { 0 };
	struct ring r;
	struct ring_stats st = { 0 };
	struct drain d = { .src = src, .ch = &ch, .want = want, .n = n };

	fprintf(stderr, "%s\n", what);
	memset(&ch, 0, sizeof(ch));
	ch.src = src;
	ch.n = src->n_events;
	for (size_t i = 0; i < src->n_events; i++)
		ch.ids[i] = ID_BASE + i;
	if (!check_eq_i64(tring_new(&t), 0))
		return;
	for (size_t i = 0; i < n; i++) {
		const struct event_spec *ev = NULL;
		struct rec rec;

		for (size_t e = 0; e < src->n_events; e++)
			if (strcmp(src->events[e].name, want[i].event) == 0)
				ev = &src->events[e];
		if (!check(ev != NULL) ||
		    !check_eq_i64(rec_build(&rec, ev->attr.sample_type,
					    &f[i]), 0))
			goto out;
		/* The record size follows from the layout alone. */
		check_eq_u64(rec.len, expect_len);
		tring_put(&t, &rec);
	}
	if (!check_eq_i64(ring_init(&r, t.base, t.len, t.page), 0))
		goto out;
	check_eq_u64(ring_drain(&r, on_record, &d, &st), n);
	check_eq_u64(d.seen, n);
	check_eq_u64(d.bad, 0);
	check_eq_u64(st.bad_size, 0);
	ring_fini(&r);
out:
	munmap(t.base, t.len);
}

static uint64_t
id_of(const struct source *src, const char *name)
{
	for (size_t i = 0; i < src->n_events; i++)
		if (strcmp(src->events[i].name, name) == 0)
			return ID_BASE + i;
	return 0;
}

#define DS(a, s) PERF_MEM_S(a, s)
/* The kernel's PERF_MEM_NA (include/linux/perf_event.h, not uapi). */
#define MEM_NA (DS(OP, NA) | DS(LVL, NA) | DS(SNOOP, NA) | DS(LOCK, NA) | \
		DS(TLB, NA) | DS(LVLNUM, NA))
/* Intel remote DRAM load (as intel/ds.c encodes it with mem_lvl_num). */
#define DS_INTEL_REMOTE_RAM (DS(OP, LOAD) | DS(LVL, REM_RAM1) | DS(LVL, HIT) | \
			     DS(LVLNUM, RAM) | DS(REMOTE, REMOTE) | \
			     DS(SNOOP, HIT) | DS(TLB, L1) | DS(TLB, HIT))
#define DS_INTEL_STORE_L1 (DS(OP, STORE) | DS(LVL, L1) | DS(LVL, HIT))
#define DS_INTEL_L3_HITM (DS(OP, LOAD) | DS(LVL, L3) | DS(LVL, HIT) | \
			  DS(SNOOP, HITM))
/* IBS (amd/ibs.c g_zen4_data_src / g_data_src). */
#define IBS_L(x) (DS(LVL, x) | DS(LVL, HIT))
#define DS_IBS_LOCAL_RAM (DS(OP, LOAD) | IBS_L(LOC_RAM) | DS(LVLNUM, RAM))
#define DS_IBS_REMOTE_RAM (DS(OP, LOAD) | IBS_L(REM_RAM1) | DS(LVLNUM, RAM) | \
			   DS(REMOTE, REMOTE) | DS(HOPS, 1))
#define DS_IBS_NEAR_CCX (DS(OP, LOAD) | IBS_L(REM_CCE1) | \
			 DS(LVLNUM, ANY_CACHE) | DS(REMOTE, REMOTE) | \
			 DS(HOPS, 0))
#define DS_IBS_STORE (DS(OP, STORE) | IBS_L(L1) | DS(LVLNUM, L1))
#define DS_IBS_NOT_MEM MEM_NA

static void
test_pebs_spr(void)
{
	struct source src;
	struct fields f[5];
	uint64_t loads, stores, aux;

	if (load_source("sapphire-rapids", "6.8.0", "pebs", &src) < 0)
		return;
	loads = id_of(&src, "mem-loads");
	stores = id_of(&src, "mem-stores");
	aux = id_of(&src, "mem-loads-aux");
	check(src.events[1].attr.sample_type & PERF_SAMPLE_WEIGHT_STRUCT);
	f[0] = (struct fields){ loads, 0x401000, 100, 101, 0, 0x7f0000001040,
				3, 10007, 250 | (UINT64_C(12) << 32),
				DS_INTEL_REMOTE_RAM };
	f[1] = (struct fields){ stores, 0x401010, 100, 102, 0,
				0x7f0000002008, 1, 10007, 0,
				DS_INTEL_STORE_L1 };
	f[2] = (struct fields){ aux, 0x401020, 100, 101, 0, 0x7f0000003000,
				3, 10007, 0, 0 };
	f[3] = (struct fields){ loads, 0x401030, 100, 101, 0, 0, 3, 20011,
				90, DS_INTEL_L3_HITM };
	f[4] = (struct fields){ loads, 0x401040, (uint32_t)-1, (uint32_t)-1,
				0, 0x7f0000004000, 0, 10007, 60,
				DS_INTEL_L3_HITM };
	const struct want w[5] = {
		{ 1, SAMPLE_LOAD, 0x7f0000001040, 250, DS_INTEL_REMOTE_RAM,
		  10007, "mem-loads", DATASRC_LVL_REMOTE_RAM, 1 },
		{ 1, SAMPLE_STORE, 0x7f0000002008, 0, DS_INTEL_STORE_L1,
		  10007, "mem-stores", DATASRC_LVL_L1, 0 },
		{ -1, 0, 0, 0, 0, 0, "mem-loads-aux", 0, 0 },
		/* no data address: unattributed, fields still decoded */
		{ 0, SAMPLE_LOAD, 0, 90, DS_INTEL_L3_HITM, 20011,
		  "mem-loads", DATASRC_LVL_L3, 0 },
		{ 0, SAMPLE_LOAD, 0x7f0000004000, 60, DS_INTEL_L3_HITM,
		  10007, "mem-loads", DATASRC_LVL_L3, 0 },
	};
	/* 8 header + 8 fields of 8: IDENTIFIER IP TID ADDR CPU PERIOD
	 * WEIGHT_STRUCT DATA_SRC. */
	run("pebs sapphire-rapids", &src, f, w, 5, 72);
}

static void
test_pebs_skl_weight(void)
{
	struct source src;
	struct fields f[1];

	if (load_source("skylake-sp", "5.10.0", "pebs", &src) < 0)
		return;
	check(src.events[0].attr.sample_type & PERF_SAMPLE_WEIGHT);
	check(!(src.events[0].attr.sample_type & PERF_SAMPLE_WEIGHT_STRUCT));
	/* Plain WEIGHT is the whole u64. */
	f[0] = (struct fields){ id_of(&src, "mem-loads"), 0x400000, 7, 7, 0,
				0x601000, 0, 10007, 0x1234567, DS_INTEL_L3_HITM };
	const struct want w[1] = {
		{ 1, SAMPLE_LOAD, 0x601000, 0x1234567, DS_INTEL_L3_HITM, 10007,
		  "mem-loads", DATASRC_LVL_L3, 0 },
	};
	run("pebs skylake-sp (WEIGHT)", &src, f, w, 1, 72);
}

static void
test_pebs_hybrid(void)
{
	struct source src;
	struct fields f[2];

	if (load_source("alderlake-hybrid", "6.6.30", "pebs", &src) < 0)
		return;
	check_eq_u64(src.n_events, 5);
	f[0] = (struct fields){ id_of(&src, "cpu_atom/mem-loads"), 0x400000,
				9, 10, 0, 0x602000, 12, 10007, 40,
				DS_INTEL_L3_HITM };
	f[1] = (struct fields){ id_of(&src, "cpu_core/mem-stores"), 0x400010,
				9, 11, 0, 0x603000, 1, 10007, 0,
				DS_INTEL_STORE_L1 };
	const struct want w[2] = {
		{ 1, SAMPLE_LOAD, 0x602000, 40, DS_INTEL_L3_HITM, 10007,
		  "cpu_atom/mem-loads", DATASRC_LVL_L3, 0 },
		{ 1, SAMPLE_STORE, 0x603000, 0, DS_INTEL_STORE_L1, 10007,
		  "cpu_core/mem-stores", DATASRC_LVL_L1, 0 },
	};
	run("pebs alderlake-hybrid", &src, f, w, 2, 72);
}

static void
test_ibs(const char *machine, const char *release, bool swfilt)
{
	uint64_t kaddr = UINT64_C(0xffff888000001000);
	struct source src;
	struct fields f[6];
	uint64_t id;

	if (load_source(machine, release, "ibs", &src) < 0)
		return;
	check_eq_u64(src.events[0].attr.exclude_kernel, swfilt);
	id = id_of(&src, "ibs_op");
	/* IBS weight: var1 = DC miss latency, var2 = tag to retire. */
	f[0] = (struct fields){ id, 0x401000, 50, 51, 123456, 0x7f1000000010,
				5, 0x40000, 300 | (UINT64_C(40) << 32),
				DS_IBS_LOCAL_RAM };
	f[1] = (struct fields){ id, 0x401004, 50, 51, 123457, 0x7f1000001010,
				5, 0x40000, 700, DS_IBS_REMOTE_RAM };
	f[2] = (struct fields){ id, 0x401008, 50, 52, 123458, 0x7f1000002020,
				6, 0x40000, 0, DS_IBS_STORE };
	f[3] = (struct fields){ id, 0x40100c, 50, 52, 123459, 0, 6, 0x40000,
				0, DS_IBS_NOT_MEM };
	f[4] = (struct fields){ id, 0x401010, 50, 51, 123460, 0, 5, 0x40000,
				80, DS_IBS_NEAR_CCX };
	f[5] = (struct fields){ id, 0x401014, 50, 51, 123461, kaddr, 5,
				0x40000, 80, DS_IBS_NEAR_CCX };
	const struct want w[6] = {
		{ 1, SAMPLE_LOAD, 0x7f1000000010, 300, DS_IBS_LOCAL_RAM,
		  0x40000, "ibs_op", DATASRC_LVL_LOCAL_RAM, 0 },
		{ 1, SAMPLE_LOAD, 0x7f1000001010, 700, DS_IBS_REMOTE_RAM,
		  0x40000, "ibs_op", DATASRC_LVL_REMOTE_RAM, 1 },
		{ 1, SAMPLE_STORE, 0x7f1000002020, 0, DS_IBS_STORE, 0x40000,
		  "ibs_op", DATASRC_LVL_L1, 0 },
		/* a non-memory op: no address, no kind */
		{ 0, SAMPLE_OTHER, 0, 0, DS_IBS_NOT_MEM, 0x40000, "ibs_op",
		  DATASRC_LVL_NA, -1 },
		/* a load without a valid linear address */
		{ 0, SAMPLE_LOAD, 0, 80, DS_IBS_NEAR_CCX, 0x40000, "ibs_op",
		  DATASRC_LVL_PEER_CACHE, 0 },
		/* a kernel address: the kernel filters it with swfilt; without,
		 * memtop must leave it unattributed */
		{ swfilt ? 1 : 0, SAMPLE_LOAD, kaddr, 80, DS_IBS_NEAR_CCX,
		  0x40000, "ibs_op", DATASRC_LVL_PEER_CACHE, 0 },
	};
	/* 8 header + 9 fields: IDENTIFIER IP TID TIME ADDR CPU PERIOD
	 * WEIGHT_STRUCT DATA_SRC. */
	run(machine, &src, f, w, 6, 80);
}

int
main(void)
{
	test_pebs_spr();
	test_pebs_skl_weight();
	test_pebs_hybrid();
	test_ibs("zen3", "6.8.0", false);
	test_ibs("zen4", "6.15.2", true);
	return test_result();
}
