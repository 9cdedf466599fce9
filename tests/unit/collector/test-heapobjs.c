/*
 * The heap probes' records (src/aggr/heapobjs.c) from hand-built
 * byte buffers laid out as the kernel writes them for the events of
 * collector/sources/source_heap.c (made by source_heap_add itself, on a
 * fake sysfs holding the uprobe PMU): malloc's entry and return make an
 * object named by its caller, free ends it, realloc ends the old block
 * and names the new one by its own caller, a call made inside another
 * (realloc's malloc) is not an object, calloc multiplies, posix_memalign
 * reads its pointer from the caller's frame, a return without its entry
 * changes nothing, a late free spares a newer object, --heap-objects=SIZE
 * skips small ones, a truncated record is counted bad, an object whose
 * site finds no memory (tests/lib/failalloc.h) counts untracked, and the
 * names --record gives the probes read back as their functions.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocs_live.h"
#include "failalloc.h"
#include "heapobjs.h"
#include "objtab.h"
#include "source.h"
#include "testlib.h"
#include "unwind.h"

#define SP0 0x7ffd00001000ull

/* Callers of this executable that a return address names. */
__attribute__((noinline)) int heap_site_a(int x);
__attribute__((noinline)) int heap_site_b(int x);
__attribute__((noinline)) int
heap_site_a(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int
heap_site_b(int x)
{
	return x * 5 + 2;
}

static uint64_t rec_time = 1000;
/* libc's malloc, not a sanitizer's interceptor: the entry's pc. */
static uint64_t libc_malloc;

struct rec {
	uint64_t buf[256];
	size_t n;
};

static void
put(struct rec *r, uint64_t v)
{
	r->buf[r->n++] = v;
}

/* A record of probe ev: regs[] by perf's numbering, for the registers
 * ev asks; a stack copy of `stack` words when ev asks for one. */
static const struct perf_event_header *
build(struct rec *r, const struct event_spec *ev, const uint64_t regs[24],
      const uint64_t *stack, size_t n_stack)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE };
	int32_t pid = (int32_t)getpid();

	r->n = 1;
	put(r, 1);
	put(r, (uint64_t)(uint32_t)pid | (uint64_t)(uint32_t)pid << 32);
	put(r, rec_time++);
	put(r, PERF_SAMPLE_REGS_ABI_64);
	for (unsigned b = 0; b < 24; b++)
		if ((ev->attr.sample_regs_user >> b) & 1)
			put(r, regs[b]);
	if (ev->attr.sample_type & PERF_SAMPLE_STACK_USER) {
		size_t words = ev->attr.sample_stack_user / 8;

		put(r, ev->attr.sample_stack_user);
		for (size_t i = 0; i < words; i++)
			put(r, i < n_stack ? stack[i] : 0);
		put(r, n_stack * 8);
	}
	h.size = (uint16_t)(r->n * 8);
	memcpy(&r->buf[0], &h, sizeof(h));
	return (const void *)r->buf;
}

struct probes {
	struct source src;
	const struct event_spec *entry[8], *ret[8];
};

/* An entry of fn at sp, called from ra, with rdi, rsi, rdx. */
static void
enter(struct heapobjs *h, const struct event_spec *ev, uint64_t sp,
      uint64_t ra, uint64_t di, uint64_t si, uint64_t dx)
{
	uint64_t regs[24] = { 0 };
	struct heap_event he;
	struct rec r;

	regs[7] = sp;
	regs[8] = libc_malloc;
	regs[5] = di;
	regs[4] = si;
	regs[3] = dx;
	he = heap_event_of(ev);
	heapobjs_record(h, &he, build(&r, ev, regs, &ra, 1));
}

static void
leave(struct heapobjs *h, const struct event_spec *ev, uint64_t sp,
      uint64_t ax, const uint64_t *stack, size_t n_stack)
{
	uint64_t regs[24] = { 0 };
	struct heap_event he = heap_event_of(ev);
	struct rec r;

	regs[7] = sp + 8;
	regs[0] = ax;
	heapobjs_record(h, &he, build(&r, ev, regs, stack, n_stack));
}

static const char *
site_at(struct heapobjs *h, uint64_t addr)
{
	const struct obj *o = objtab_find(h->objs, (int32_t)getpid(), addr);
	static char buf[128];
	char *plus;

	if (!o)
		return "(none)";
	snprintf(buf, sizeof(buf), "%s", objtab_site(h->objs, o->site)->site);
	plus = strchr(buf, '+');
	if (plus)
		*plus = '\0';
	return buf;
}

/* No memory for a malloc's site: a fresh site table's first needs its
 * index, refused at the entry.  The object its return makes is not kept
 * and counts untracked, not bad. */
static void
test_site_nomem(struct unwinder *unw, struct probes *p, uint64_t a)
{
	struct objtab *sites = objtab_new(0);
	unsigned long before;
	struct heapobjs h;

	check(sites != NULL);
	/* The thread first (a small call), so the refusal hits the site. */
	check_eq_i64(heapobjs_init(&h, sites, unw, 0, 128), 0);
	enter(&h, p->entry[HEAP_MALLOC], SP0, a, 64, 0, 0);
	leave(&h, p->ret[HEAP_MALLOC], SP0, 0x4000, NULL, 0);
	h.min_size = 0;
	before = failalloc_refused;
	failalloc_on = true;
	enter(&h, p->entry[HEAP_MALLOC], SP0, a, 64, 0, 0);
	failalloc_on = false;
	check(failalloc_refused > before);
	leave(&h, p->ret[HEAP_MALLOC], SP0, 0x4000, NULL, 0);
	check_eq_u64(objtab_n_sites(sites), 0);
	check_eq_u64(objtab_untracked(h.objs), 1);
	check_eq_u64(h.st.bad, 0);
	check_eq_str(site_at(&h, 0x4000), "(none)");
	/* With memory it is kept. */
	enter(&h, p->entry[HEAP_MALLOC], SP0, a, 64, 0, 0);
	leave(&h, p->ret[HEAP_MALLOC], SP0, 0x4000, NULL, 0);
	check_eq_str(site_at(&h, 0x4000), "heap_site_a");
	check_eq_u64(objtab_untracked(h.objs), 1);
	heapobjs_fini(&h);
	objtab_free(sites);
}

/* A sysfs with the uprobe PMU (type 9, retprobe config:0), and the
 * probes source_heap_add makes on it. */
static void
fake_pmu(struct probes *p, char *dir)
{
	static const enum heap_fn fns[] = { HEAP_MALLOC, HEAP_CALLOC,
		HEAP_REALLOC, HEAP_MEMALIGN };
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/bus/event_source/devices/uprobe/"
		 "format", dir);
	for (char *s = path + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0700);
		*s = '/';
	}
	mkdir(path, 0700);
	strcat(path, "/retprobe");
	f = fopen(path, "w");
	fputs("config:0\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/sys/bus/event_source/devices/uprobe/"
		 "type", dir);
	f = fopen(path, "w");
	fputs("9\n", f);
	fclose(f);
	setenv("MEMTOP_SYSFS_ROOT", dir, 1);
	memset(&p->src, 0, sizeof(p->src));
	p->src.n_alloc = 1;
	snprintf(p->src.heap_paths[0], sizeof(p->src.heap_paths[0]), "/libc");
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		check_eq_i64(source_heap_add(&p->src, 0, 0x100 * i, fns[i],
					     false, 1), 0);
		p->entry[fns[i]] = &p->src.alloc[p->src.n_alloc - 1];
		check_eq_i64(source_heap_add(&p->src, 0, 0x100 * i, fns[i],
					     true, 1), 0);
		p->ret[fns[i]] = &p->src.alloc[p->src.n_alloc - 1];
	}
	check_eq_i64(source_heap_add(&p->src, 0, 0x900, HEAP_FREE, false, 1),
		     0);
	p->entry[HEAP_FREE] = &p->src.alloc[p->src.n_alloc - 1];
	check(p->ret[HEAP_MALLOC]->attr.config == 1);
	check(p->entry[HEAP_MALLOC]->attr.type == 9);
}

static void
test_realloc_nested(struct heapobjs *h, struct probes *p, uint64_t a,
		    uint64_t b)
{
	/* realloc moves 0x5000 (site a) to 0x6000 from site b; its own
	 * malloc inside is not an object. */
	enter(h, p->entry[HEAP_MALLOC], SP0, a, 64, 0, 0);
	leave(h, p->ret[HEAP_MALLOC], SP0, 0x5000, NULL, 0);
	check_eq_str(site_at(h, 0x5000), "heap_site_a");
	enter(h, p->entry[HEAP_REALLOC], SP0, b, 0x5000, 256, 0);
	enter(h, p->entry[HEAP_MALLOC], SP0 - 0x40, 0x1234, 256, 0, 0);
	leave(h, p->ret[HEAP_MALLOC], SP0 - 0x40, 0x6000, NULL, 0);
	check_eq_u64(h->st.nested, 1);
	leave(h, p->ret[HEAP_REALLOC], SP0, 0x6000, NULL, 0);
	check_eq_str(site_at(h, 0x5000), "(none)");
	check_eq_str(site_at(h, 0x6000), "heap_site_b");
	check(objtab_find(h->objs, (int32_t)getpid(), 0x60ff) != NULL);
	check_eq_u64(objtab_count(h->objs), 1);
}

static void
test_others(struct heapobjs *h, struct probes *p, uint64_t a)
{
	uint64_t frame[4] = { 0, 0, 0x9000, 0 };
	const struct obj *o;

	/* calloc(10, 24): 240 bytes. */
	enter(h, p->entry[HEAP_CALLOC], SP0, a, 10, 24, 0);
	leave(h, p->ret[HEAP_CALLOC], SP0, 0x7000, NULL, 0);
	o = objtab_find(h->objs, (int32_t)getpid(), 0x7000);
	check(o && o->size == 240);
	/* posix_memalign(&p, 64, 128), p at the caller's rsp + 16. */
	enter(h, p->entry[HEAP_MEMALIGN], SP0, a, SP0 + 8 + 16, 64, 128);
	leave(h, p->ret[HEAP_MEMALIGN], SP0, 0, frame, 4);
	o = objtab_find(h->objs, (int32_t)getpid(), 0x9000);
	check(o && o->size == 128);
	/* A return without its entry. */
	leave(h, p->ret[HEAP_MALLOC], SP0, 0xa000, NULL, 0);
	check_eq_str(site_at(h, 0xa000), "(none)");
	check_eq_u64(h->st.unpaired, 1);
	/* A free read late (older than the object at its address). */
	rec_time = 10;
	enter(h, p->entry[HEAP_FREE], SP0, a, 0x7000, 0, 0);
	check_eq_str(site_at(h, 0x7000), "heap_site_a");
	rec_time = 100000;
	enter(h, p->entry[HEAP_FREE], SP0, a, 0x7000, 0, 0);
	check_eq_str(site_at(h, 0x7000), "(none)");
}

/* posix_memalign's out pointer just below 2^64 with the return's rsp at
 * 0 (a crafted recording): where - rsp + 8 wraps; the pointer is not
 * taken from before the stack copy (bytes of the record's own header). */
static void
test_memalign_wrap(struct heapobjs *h, struct probes *p, uint64_t a)
{
	uint64_t frame[4] = { 0x9000, 0, 0, 0 };
	size_t before = objtab_count(h->objs);

	enter(h, p->entry[HEAP_MEMALIGN], (uint64_t)-8, a, (uint64_t)-4, 64,
	      128);
	leave(h, p->ret[HEAP_MEMALIGN], (uint64_t)-8, 0, frame, 4);
	check_eq_u64(objtab_count(h->objs), before);
	check(objtab_find(h->objs, (int32_t)getpid(), 0x900000000000ull) ==
	      NULL);
}

/* The names --record gives the probes, and replay reads back. */
static void
test_names(void)
{
	struct heap_event ev;
	char name[64];

	for (int fn = HEAP_MALLOC; fn <= HEAP_FREE; fn++)
		for (int ret = 0; ret < 2; ret++) {
			memset(&ev, 0, sizeof(ev));
			heapobjs_event_name((enum heap_fn)fn, ret, name,
					    sizeof(name));
			if (fn == HEAP_FREE && ret) {
				check(!heapobjs_event_parse(name, &ev));
				continue;
			}
			check(heapobjs_event_parse(name, &ev));
			check_eq_i64(ev.fn, fn);
			check_eq_i64(ev.ret, ret);
		}
	heapobjs_event_name(HEAP_MALLOC, true, name, sizeof(name));
	check_eq_str(name, "memtop_heap:malloc__return");
	check(!heapobjs_event_parse("memtop_heap:mallocx", &ev));
	check(!heapobjs_event_parse("probe_libc:malloc", &ev));
	check(!heapobjs_event_parse("memtop_heap:", &ev));
}

int
main(void)
{
	char dir[] = "/tmp/memtop-test-heapobjs-XXXXXX";
	struct unwinder *unw = unwinder_new();
	struct objtab *sites = objtab_new(0);
	uint64_t a = (uint64_t)(uintptr_t)&heap_site_a + 5;
	uint64_t b = (uint64_t)(uintptr_t)&heap_site_b + 5;
	struct probes *p = calloc(1, sizeof(*p));
	struct heapobjs h;
	struct rec r;
	char cmd[64];

	check(mkdtemp(dir) != NULL && unw && sites && p);
	{
		void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

		check(libc != NULL);
		libc_malloc = (uint64_t)(uintptr_t)(libc ? dlsym(libc, "malloc") :
							   NULL);
	}
	fake_pmu(p, dir);
	test_names();
	check_eq_i64(heapobjs_init(&h, sites, unw, 0, 0), 0);
	/* malloc(64) from a, then free. */
	enter(&h, p->entry[HEAP_MALLOC], SP0, a, 64, 0, 0);
	leave(&h, p->ret[HEAP_MALLOC], SP0, 0x4000, NULL, 0);
	check_eq_str(site_at(&h, 0x4000), "heap_site_a");
	check(objtab_find(h.objs, (int32_t)getpid(), 0x4040) == NULL);
	check_eq_u64(objtab_n_sites(sites), 1);
	enter(&h, p->entry[HEAP_FREE], SP0, a, 0x4000, 0, 0);
	check_eq_str(site_at(&h, 0x4000), "(none)");
	check_eq_u64(h.st.frees, 1);
	test_realloc_nested(&h, p, a, b);
	test_others(&h, p, a);
	test_memalign_wrap(&h, p, a);
	/* A truncated record. */
	build(&r, p->entry[HEAP_MALLOC], (uint64_t[24]){ 0 }, &a, 1);
	{
		uint16_t size = 40;	/* header.size, after type and misc */

		memcpy((char *)r.buf + 6, &size, sizeof(size));
	}
	{
		struct heap_event he = heap_event_of(p->entry[HEAP_MALLOC]);

		heapobjs_record(&h, &he, (const void *)r.buf);
	}
	check_eq_u64(h.st.bad, 1);
	/* A recording's return probe without rax (another attr than
	 * source_heap.c's): counted bad, not read as a NULL return. */
	{
		struct event_spec e = *p->ret[HEAP_MALLOC];
		struct heap_event he;

		e.attr.sample_regs_user &= ~UINT64_C(1);
		he = heap_event_of(&e);
		enter(&h, p->entry[HEAP_MALLOC], SP0, a, 64, 0, 0);
		heapobjs_record(&h, &he, build(&r, &e, (uint64_t[24]){
			[0] = 0xb000, [7] = SP0 + 8 }, NULL, 0));
		check_eq_u64(h.st.bad, 2);
	}
	/* A malloc whose size wraps the address space past its pointer (a
	 * crafted recording): no object, counted bad. */
	enter(&h, p->entry[HEAP_MALLOC], SP0, a, UINT64_MAX - 0x100, 0, 0);
	leave(&h, p->ret[HEAP_MALLOC], SP0, 0xc000, NULL, 0);
	check_eq_str(site_at(&h, 0xc000), "(none)");
	check_eq_u64(h.st.bad, 3);
	heapobjs_fini(&h);
	/* --heap-objects=128: a malloc(64) is no object. */
	check_eq_i64(heapobjs_init(&h, sites, unw, 0, 128), 0);
	enter(&h, p->entry[HEAP_MALLOC], SP0, a, 64, 0, 0);
	leave(&h, p->ret[HEAP_MALLOC], SP0, 0x4000, NULL, 0);
	check_eq_str(site_at(&h, 0x4000), "(none)");
	check_eq_u64(h.st.small, 1);
	heapobjs_fini(&h);
	test_site_nomem(unw, p, a);
	objtab_free(sites);
	unwinder_free(unw);
	free(p);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)system(cmd);
	return test_result();
}
