/*
 * The allocation records of the producers (src/aggr/allocs.c)
 * from hand-built byte buffers laid out as the kernel writes them for the
 * events of collector/sources/source_alloc.c: mmap makes an object (named
 * by its call chain when there is no stack to unwind), munmap splits it,
 * mremap moves it, brk growth makes one and shrinking ends it (with
 * more processes than slots too, a move from a break no longer known
 * counted untracked), a file
 * mapping replaces what was there, a failed call changes nothing, a
 * truncated record or a length that wraps is counted bad, an object
 * whose site finds no memory (tests/lib/failalloc.h) counts untracked,
 * and records read late spare any number of newer objects.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocs.h"
#include "failalloc.h"
#include "objtab.h"
#include "testlib.h"

#define RAW_SIZE 28		/* u32 size + 28 bytes: 8-aligned */
#define NR_OFF 8		/* raw_syscalls:sys_exit: common fields, */
#define RET_OFF 16		/* id, ret */
#define NR_MMAP 9
#define NR_MUNMAP 11
#define NR_BRK 12
#define NR_MREMAP 25

/* A function of this executable that a call chain can name. */
__attribute__((noinline)) int allocs_test_site(int x);
__attribute__((noinline)) int
allocs_test_site(int x)
{
	return x * 3 + 1;
}

static struct allocs_event
spec(void)
{
	struct allocs_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_RAW |
			 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_CALLCHAIN |
			 PERF_SAMPLE_STACK_USER;
	ev.regs_user = ALLOCS_REGS_MASK;
	ev.ret_off = RET_OFF;
	ev.id_off = NR_OFF;
	return ev;
}

/* The TIME of the records build() makes. */
static uint64_t rec_time = 1000;

struct rec {
	uint64_t buf[128];
	size_t n;		/* u64s */
};

static void
put(struct rec *r, uint64_t v)
{
	r->buf[r->n++] = v;
}

/*
 * A record of ev for syscall nr: ret, the syscall arguments (rdi, rsi,
 * rdx, r10) in the user registers, a call chain of nchain ips, no stack
 * copy.
 */
static const struct perf_event_header *
build(struct rec *r, const struct allocs_event *ev, int64_t nr, int32_t pid,
      int64_t ret,
      uint64_t rdi, uint64_t rsi, uint64_t rdx, uint64_t r10,
      const uint64_t *chain, size_t nchain)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE };
	unsigned char raw[4 + RAW_SIZE] = { 0 };
	uint64_t regs[17] = { 0 };

	r->n = 1;			/* the header */
	put(r, 1);			/* IDENTIFIER */
	put(r, (uint64_t)(uint32_t)pid | (uint64_t)(uint32_t)pid << 32);
	put(r, rec_time);		/* TIME */
	put(r, nchain);
	for (size_t i = 0; i < nchain; i++)
		put(r, chain[i]);
	{
		uint32_t size = RAW_SIZE;

		memcpy(raw, &size, sizeof(size));
	}
	memcpy(raw + 4 + RET_OFF, &ret, 8);
	memcpy(raw + 4 + NR_OFF, &nr, 8);
	memcpy(&r->buf[r->n], raw, sizeof(raw));
	r->n += sizeof(raw) / 8;
	/* perf order: AX BX CX DX SI DI BP SP IP R8 R9 R10 ... */
	regs[3] = rdx;
	regs[4] = rsi;
	regs[5] = rdi;
	regs[11] = r10;
	put(r, PERF_SAMPLE_REGS_ABI_64);
	for (size_t i = 0; i < 17; i++)
		put(r, regs[i]);
	put(r, 0);			/* no stack copied */
	h.size = (uint16_t)(r->n * 8);
	memcpy(&r->buf[0], &h, sizeof(h));
	return (const void *)r->buf;
}

static const char *
site_at(struct allocs *a, int32_t pid, uint64_t addr)
{
	const struct obj *o = objtab_find(a->objs, pid, addr);

	return o ? objtab_site(a->objs, o->site)->site : "(none)";
}

/* Lengths that wrap (a crafted recording): rounded up to pages, or past
 * the address.  No object, counted bad. */
static void
test_wrap(struct allocs *ap, const struct allocs_event *mm, int32_t pid)
{
	uint64_t bad = ap->st.bad;
	struct rec r;

	allocs_record(ap, mm, build(&r, mm, NR_MMAP, pid, 0x7f3000000000, 0,
				    UINT64_MAX - 0x100, 3, 0x22, NULL, 0));
	allocs_record(ap, mm, build(&r, mm, NR_MMAP, pid,
				    (int64_t)0x7ff0000000000000, 0,
				    0x8010000000000000, 3, 0x22, NULL, 0));
	check_eq_u64(ap->st.bad, bad + 2);
	check_eq_str(site_at(ap, pid, 0x7f3000000000), "(none)");
	check_eq_u64(objtab_untracked(ap->objs), 0);
}

/* No memory for the site: a fresh table's first site needs its index,
 * refused.  The object is not kept (no site was interned, so not for want
 * of its own memory) and counts untracked. */
static void
test_site_nomem(const struct allocs_event *mm, int32_t pid)
{
	uint64_t base = 0x7f6000000000;
	unsigned long before = failalloc_refused;
	struct allocs b;
	struct rec r;

	check_eq_i64(allocs_init(&b, 0), 0);
	build(&r, mm, NR_MMAP, pid, (int64_t)base, 0, 0x1000, 3, 0x22, NULL, 0);
	failalloc_on = true;
	allocs_record(&b, mm, (const void *)r.buf);
	failalloc_on = false;
	check(failalloc_refused > before);
	check_eq_u64(objtab_n_sites(b.objs), 0);
	check_eq_u64(objtab_untracked(b.objs), 1);
	check_eq_str(site_at(&b, pid, base), "(none)");
	/* With memory it is kept. */
	allocs_record(&b, mm, (const void *)r.buf);
	check_eq_str(site_at(&b, pid, base), "[unknown]");
	check_eq_u64(objtab_untracked(b.objs), 1);
	allocs_fini(&b);
}

/*
 * More processes than ALLOCS_BRKS slots (-a): the newest takes the slot
 * of the process idle longest, whose next move, from a break no longer
 * known, counts an object untracked; the others' growths stay objects.
 */
static void
test_brk_many(const struct allocs_event *mm)
{
	const int32_t first = 1000, newest = first + ALLOCS_BRKS;
	struct allocs b;
	struct rec r;

	check_eq_i64(allocs_init(&b, 0), 0);
	for (int32_t pid = first; pid < newest; pid++)
		allocs_record(&b, mm, build(&r, mm, NR_BRK, pid, 0x600000, 0,
					    0, 0, 0, NULL, 0));
	/* first grows: now first + 1 is the one idle longest. */
	allocs_record(&b, mm, build(&r, mm, NR_BRK, first, 0x611000, 0x611000,
				    0, 0, 0, NULL, 0));
	allocs_record(&b, mm, build(&r, mm, NR_BRK, newest, 0x600000, 0, 0, 0,
				    0, NULL, 0));
	allocs_record(&b, mm, build(&r, mm, NR_BRK, newest, 0x621000, 0x621000,
				    0, 0, 0, NULL, 0));
	check_eq_str(site_at(&b, newest, 0x620000), "[unknown]");
	allocs_record(&b, mm, build(&r, mm, NR_BRK, first, 0x631000, 0x631000,
				    0, 0, 0, NULL, 0));
	check_eq_str(site_at(&b, first, 0x630000), "[unknown]");
	check_eq_u64(objtab_untracked(b.objs), 0);
	/* first + 1 lost its slot: its growth is not kept, but counted, and
	 * its break is known again for the next one. */
	allocs_record(&b, mm, build(&r, mm, NR_BRK, first + 1, 0x641000,
				    0x641000, 0, 0, 0, NULL, 0));
	check_eq_str(site_at(&b, first + 1, 0x640000), "(none)");
	check_eq_u64(objtab_untracked(b.objs), 1);
	allocs_record(&b, mm, build(&r, mm, NR_BRK, first + 1, 0x651000,
				    0x651000, 0, 0, 0, NULL, 0));
	check_eq_str(site_at(&b, first + 1, 0x650000), "[unknown]");
	check_eq_str(site_at(&b, first + 2, 0x600000), "(none)");
	check_eq_u64(objtab_untracked(b.objs), 1);
	/* A process that exited gives its slot first, though it is not the
	 * one idle longest (first + 3 is; first + 2 went above): first + 3
	 * keeps its break. */
	allocs_exit(&b, first + 10);
	allocs_record(&b, mm, build(&r, mm, NR_BRK, newest + 1, 0x600000, 0,
				    0, 0, 0, NULL, 0));
	allocs_record(&b, mm, build(&r, mm, NR_BRK, first + 3, 0x661000,
				    0x661000, 0, 0, 0, NULL, 0));
	check_eq_str(site_at(&b, first + 3, 0x660000), "[unknown]");
	check_eq_u64(objtab_untracked(b.objs), 1);
	allocs_fini(&b);
}

/* A chain that ends in 0 (a frame-pointer walk off the stack) ends
 * there: 0 is no site, whatever follows it. */
static void
test_chain_zero(struct allocs *ap, const struct allocs_event *mm, int32_t pid,
		uint64_t site_ip)
{
	const uint64_t zero[] = { (uint64_t)PERF_CONTEXT_USER, 0, site_ip };
	struct rec r;

	allocs_record(ap, mm, build(&r, mm, NR_MMAP, pid, 0x7f5000000000, 0,
				    0x1000, 3, 0x22, zero, 3));
	check_eq_str(site_at(ap, pid, 0x7f5000000000), "[unknown]");
	allocs_record(ap, mm, build(&r, mm, NR_MUNMAP, pid, 0, 0x7f5000000000,
				    0x1000, 0, 0, NULL, 0));
}

/* Per-CPU rings: an munmap read after a newer mmap of the same range
 * (drained from another CPU's ring) spares the newer object, and an
 * older mmap read late does not replace it. */
static void
test_order(struct allocs *ap, const struct allocs_event *mm, int32_t pid,
	   const uint64_t *chain)
{
	struct rec r;
	const struct obj *o;

	rec_time = 3000;
	allocs_record(ap, mm, build(&r, mm, NR_MMAP, pid, 0x7f4000000000, 0,
				     0x4000, 3, 0x22, chain, 2));
	rec_time = 2000;
	allocs_record(ap, mm, build(&r, mm, NR_MUNMAP, pid, 0, 0x7f4000000000,
				     0x4000, 0, 0, NULL, 0));
	allocs_record(ap, mm, build(&r, mm, NR_MMAP, pid, 0x7f4000000000, 0,
				     0x4000, 3, 0x22, NULL, 0));
	o = objtab_find(ap->objs, pid, 0x7f4000001000);
	check(o && o->birth == 3000 && o->size == 0x4000);
	check_eq_str(site_at(ap, pid, 0x7f4000003000), "allocs_test_site+0x4");
}

/*
 * More newer objects than allocs.c looks at on its stack (ALLOCS_KEEP, 8)
 * under an older record's range: an munmap read late spares all twelve
 * and ends the older object among them, an older mmap read late is cut
 * around them.  Without memory to look at them (tests/lib/failalloc.h)
 * an older munmap changes nothing and an older mmap's object is not
 * kept, counted untracked; no newer object is lost either way.
 */
#define MANY_NEWER	12

static void
test_order_many(const struct allocs_event *mm, int32_t pid)
{
	const uint64_t base = 0x7f7000000000, len = (MANY_NEWER + 1) * 0x1000;
	struct obj seen[MANY_NEWER + 1];
	struct allocs b;
	struct rec r;
	uint64_t untracked;

	check_eq_i64(allocs_init(&b, 0), 0);
	rec_time = 1500;	/* an older object past the newer ones */
	allocs_record(&b, mm, build(&r, mm, NR_MMAP, pid,
				    (int64_t)(base + MANY_NEWER * 0x1000), 0,
				    0x1000, 3, 0x22, NULL, 0));
	for (int i = 0; i < MANY_NEWER; i++) {
		rec_time = 3000 + (uint64_t)i;
		allocs_record(&b, mm, build(&r, mm, NR_MMAP, pid,
					    (int64_t)(base + (uint64_t)i *
						      0x1000),
					    0, 0x1000, 3, 0x22, NULL, 0));
	}
	check_eq_u64(objtab_count(b.objs), MANY_NEWER + 1);
	untracked = objtab_untracked(b.objs);
	/* No memory: the older munmap and mmap change nothing kept. */
	rec_time = 2000;
	failalloc_on = true;
	allocs_record(&b, mm, build(&r, mm, NR_MUNMAP, pid, 0, base, len, 0,
				    0, NULL, 0));
	failalloc_on = false;
	check_eq_u64(objtab_count(b.objs), MANY_NEWER + 1);
	check_eq_u64(objtab_untracked(b.objs), untracked);
	build(&r, mm, NR_MMAP, pid, (int64_t)base, 0, len, 3, 0x22, NULL, 0);
	failalloc_on = true;
	allocs_record(&b, mm, (const void *)r.buf);
	failalloc_on = false;
	check_eq_u64(objtab_untracked(b.objs), untracked + 1);
	check_eq_u64(objtab_count(b.objs), MANY_NEWER + 1);
	/* With memory: the older object ends, every newer one stays. */
	allocs_record(&b, mm, build(&r, mm, NR_MUNMAP, pid, 0, base, len, 0,
				    0, NULL, 0));
	check_eq_u64(objtab_count(b.objs), MANY_NEWER);
	check_eq_u64(objtab_overlap(b.objs, pid, base, len, seen,
				    MANY_NEWER + 1), MANY_NEWER);
	for (int i = 0; i < MANY_NEWER; i++)
		check(seen[i].birth == 3000 + (uint64_t)i &&
		      seen[i].base == base + (uint64_t)i * 0x1000 &&
		      seen[i].size == 0x1000);
	check_eq_str(site_at(&b, pid, base + MANY_NEWER * 0x1000), "(none)");
	/* The older mmap keeps only what no newer object holds. */
	allocs_record(&b, mm, build(&r, mm, NR_MMAP, pid, (int64_t)base, 0,
				    len, 3, 0x22, NULL, 0));
	check_eq_u64(objtab_count(b.objs), MANY_NEWER + 1);
	check_eq_u64(objtab_overlap(b.objs, pid, base, len, seen,
				    MANY_NEWER + 1), MANY_NEWER + 1);
	for (int i = 0; i < MANY_NEWER; i++)
		check(seen[i].birth == 3000 + (uint64_t)i);
	check(seen[MANY_NEWER].birth == 2000 &&
	      seen[MANY_NEWER].base == base + MANY_NEWER * 0x1000);
	check_eq_u64(objtab_untracked(b.objs), untracked + 1);
	/* A munmap in order over them all needs no memory: none is newer. */
	rec_time = 9000;
	failalloc_on = true;
	allocs_record(&b, mm, build(&r, mm, NR_MUNMAP, pid, 0, base, len, 0,
				    0, NULL, 0));
	failalloc_on = false;
	check_eq_u64(objtab_count(b.objs), 0);
	allocs_fini(&b);
}

int
main(void)
{
	struct allocs_event ev = spec(), *mm = &ev;
	int32_t pid = (int32_t)getpid();
	uint64_t chain[2] = { (uint64_t)PERF_CONTEXT_USER,
			      (uint64_t)(uintptr_t)&allocs_test_site + 4 };
	struct allocs a;
	struct rec r;
	const struct obj *o;

	check_eq_i64(allocs_init(&a, 0), 0);
	/* An anonymous mapping, named by its call chain. */
	allocs_record(&a, mm, build(&r, mm, NR_MMAP, pid, 0x7f0000000000, 0, 0x10000,
				     3, 0x22, chain, 2));
	check_eq_str(site_at(&a, pid, 0x7f0000000000), "allocs_test_site+0x4");
	check_eq_u64(a.st.chained, 1);
	/* Without a chain or a stack: [unknown]. */
	allocs_record(&a, mm, build(&r, mm, NR_MMAP, pid, 0x7f1000000000, 0, 0x1001,
				     3, 0x22, NULL, 0));
	o = objtab_find(a.objs, pid, 0x7f1000001000);
	check(o && o->size == 0x2000 && o->alloc_size == 0x1001);
	check_eq_str(site_at(&a, pid, 0x7f1000000000), "[unknown]");
	test_chain_zero(&a, mm, pid, chain[1]);
	/* munmap in the middle splits the first. */
	allocs_record(&a, mm, build(&r, mm, NR_MUNMAP, pid, 0, 0x7f0000004000, 0x1000,
				     0, 0, NULL, 0));
	check_eq_str(site_at(&a, pid, 0x7f0000004000), "(none)");
	check_eq_str(site_at(&a, pid, 0x7f0000005000), "allocs_test_site+0x4");
	check_eq_u64(objtab_count(a.objs), 3);
	/* A failed mmap changes nothing. */
	allocs_record(&a, mm, build(&r, mm, NR_MMAP, pid, -12, 0, 0x1000, 3, 0x22,
				     chain, 2));
	check_eq_u64(objtab_count(a.objs), 3);
	/* A file mapping over the second ends it. */
	allocs_record(&a, mm, build(&r, mm, NR_MMAP, pid, 0x7f1000000000, 0, 0x2000,
				     1, 0x02, NULL, 0));
	check_eq_str(site_at(&a, pid, 0x7f1000000000), "(none)");
	/* mremap moves the head of the first elsewhere. */
	allocs_record(&a, mm, build(&r, mm, NR_MREMAP, pid, 0x7f2000000000,
				     0x7f0000000000, 0x4000, 0x8000, 1,
				     chain, 2));
	check_eq_str(site_at(&a, pid, 0x7f0000000000), "(none)");
	o = objtab_find(a.objs, pid, 0x7f2000007000);
	check(o && o->size == 0x8000);
	/* brk: the first break is noted, growth is an object, shrinking
	 * ends it. */
	allocs_record(&a, mm, build(&r, mm, NR_BRK, pid, 0x600000, 0, 0, 0, 0,
				     chain, 2));
	check_eq_str(site_at(&a, pid, 0x600000), "(none)");
	allocs_record(&a, mm, build(&r, mm, NR_BRK, pid, 0x621000, 0x621000, 0, 0,
				     0, chain, 2));
	check_eq_str(site_at(&a, pid, 0x620000), "allocs_test_site+0x4");
	allocs_record(&a, mm, build(&r, mm, NR_BRK, pid, 0x610000, 0x610000, 0, 0,
				     0, chain, 2));
	check_eq_str(site_at(&a, pid, 0x620000), "(none)");
	check_eq_str(site_at(&a, pid, 0x600000), "allocs_test_site+0x4");
	/* A record cut short is counted bad and changes nothing. */
	build(&r, mm, NR_MMAP, pid, 0x7f3000000000, 0, 0x1000, 3, 0x22, chain,
	      2);
	{
		struct perf_event_header h;

		memcpy(&h, r.buf, sizeof(h));
		h.size -= 16;
		memcpy(r.buf, &h, sizeof(h));
	}
	allocs_record(&a, mm, (const void *)r.buf);
	check_eq_u64(a.st.bad, 1);
	check_eq_str(site_at(&a, pid, 0x7f3000000000), "(none)");
	test_wrap(&a, mm, pid);
	test_order(&a, mm, pid, chain);
	test_site_nomem(mm, pid);
	test_brk_many(mm);
	test_order_many(mm, pid);
	check_eq_i64(allocs_test_site(1), 4);
	allocs_fini(&a);
	allocs_fini(&a);
	return test_result();
}
