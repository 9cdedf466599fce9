#include "config.h"

/*
 * Objects in replay without root (issue 18, item 5): a capture written
 * with memtop's own writer as --record writes it, a page-faults event and
 * the allocation event raw_syscalls:sys_exit, holding the MMAP2 records
 * of this test's executable, one mmap exit whose call chain is in
 * replay_test_site(), and fault samples on the mapping and off it.  The
 * replay must name the mapping's page by replay_test_site (unwound with
 * the capture's mappings, not /proc: the recorded pid is one that does
 * not exist), count the other page as of no object, and a munmap exit
 * must end the object.  With --heap-objects the file holds the heap
 * probes too (memtop_heap:malloc and memtop_heap:malloc__return, as
 * collector/live/recorder.c names them): an entry whose stack's return
 * address is in replay_test_heap() and its return make a 64-byte object
 * that names its page by that function, as live (src/aggr/heapobjs.c).
 */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocs.h"
#include "frame.h"
#include "perfdata-build.h"
#include "perfdata_write.h"
#include "replay-run.h"
#include "replay.h"
#include "replay_int.h"
#include "testlib.h"

#define PID 4000000		/* above pid_max: no such process here */
#define OBJ 0x7f0000000000ull
#define ST_FAULT (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		  PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR)
#define ST_ALLOC (ST_FAULT | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | \
		  PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)

__attribute__((noinline)) int replay_test_site(int x);
__attribute__((noinline)) int
replay_test_site(int x)
{
	return x * 5 + 2;
}

__attribute__((noinline)) int replay_test_heap(int x);
__attribute__((noinline)) int
replay_test_heap(int x)
{
	return x * 7 + 3;
}

/* libc's malloc, not a sanitizer's interceptor: the entry's pc. */
static uint64_t libc_malloc;

#define HEAPOBJ 0x6000040ull
#define HEAP_SP 0x7ffd00001000ull
#define ST_HEAP (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		 PERF_SAMPLE_REGS_USER)

static void
put(struct rb *b, uint64_t v)
{
	b->w[b->n++] = v;
}

static const struct perf_event_header *
done(struct rb *b, uint32_t type)
{
	struct perf_event_header h = { .type = type,
				       .misc = PERF_RECORD_MISC_USER,
				       .size = (uint16_t)(b->n * 8) };

	memcpy(&b->w[0], &h, sizeof(h));
	return (const void *)b->w;
}

/* An MMAP2 of [lo, hi) at pgoff of path (device maj:min, inode ino),
 * trailer of the fault event. */
static const struct perf_event_header *
mmap2(struct rb *b, uint64_t lo, uint64_t hi, uint64_t pgoff, char x,
      unsigned maj, unsigned min, uint64_t ino, const char *path)
{
	char name[256] = { 0 };
	size_t len = (strlen(path) + 8) & ~(size_t)7;

	b->n = 1;
	put(b, (uint64_t)PID | (uint64_t)PID << 32);
	put(b, lo);
	put(b, hi - lo);
	put(b, pgoff);
	put(b, (uint64_t)maj | (uint64_t)min << 32);
	put(b, ino);
	put(b, 0);			/* ino_generation */
	put(b, (uint64_t)(x == 'x' ? 5 : 1) | (uint64_t)2 << 32);
	snprintf(name, sizeof(name), "%s", path);
	memcpy(&b->w[b->n], name, len);
	b->n += len / 8;
	put(b, (uint64_t)PID | (uint64_t)PID << 32);	/* TID */
	put(b, 10);					/* TIME */
	put(b, 1);					/* IDENTIFIER */
	return done(b, PERF_RECORD_MMAP2);
}

/* A sys_exit sample of syscall nr returning ret, rdi and rsi the first
 * arguments, r10 the flags, its chain in replay_test_site. */
static const struct perf_event_header *
sys_exit(struct rb *b, int64_t nr, uint64_t ret, uint64_t rdi, uint64_t rsi,
	 uint64_t r10, uint64_t time)
{
	unsigned char raw[4 + 28] = { 0 };
	uint32_t raw_size = 28;
	uint64_t regs[17] = { 0 };

	b->n = 1;
	put(b, 2);
	put(b, 0);
	put(b, (uint64_t)PID | (uint64_t)PID << 32);
	put(b, time);
	put(b, 0);
	put(b, 2);
	put(b, (uint64_t)PERF_CONTEXT_USER);
	put(b, (uint64_t)(uintptr_t)replay_test_site + 4);
	memcpy(raw, &raw_size, 4);
	memcpy(raw + 4 + ALLOCS_SYS_EXIT_ID_OFF, &nr, 8);
	memcpy(raw + 4 + ALLOCS_SYS_EXIT_RET_OFF, &ret, 8);
	memcpy(&b->w[b->n], raw, sizeof(raw));
	b->n += sizeof(raw) / 8;
	regs[4] = rsi;		/* perf order: AX BX CX DX SI DI ... */
	regs[5] = rdi;
	regs[11] = r10;		/* R10, after IP and R8 R9 */
	put(b, PERF_SAMPLE_REGS_ABI_64);
	for (size_t i = 0; i < 17; i++)
		put(b, regs[i]);
	put(b, 0);		/* no stack copied */
	return done(b, PERF_RECORD_SAMPLE);
}

/* A heap probe's sample: malloc's entry (id 3: its 17 registers, rdi
 * 64, and a stack copy holding the return address), or its return (id
 * 4: rax the block, rsp past the return address). */
static const struct perf_event_header *
heap_probe(struct rb *b, bool ret, uint64_t time)
{
	b->n = 1;
	put(b, ret ? 4 : 3);
	put(b, (uint64_t)PID | (uint64_t)PID << 32);
	put(b, time);
	put(b, PERF_SAMPLE_REGS_ABI_64);
	if (ret) {
		put(b, HEAPOBJ);		/* AX */
		put(b, HEAP_SP + 8);		/* SP */
		return done(b, PERF_RECORD_SAMPLE);
	}
	for (size_t i = 0; i < 17; i++)	/* AX .. IP, R8 .. R15 */
		put(b, i == 5 ? 64 : i == 7 ? HEAP_SP : i == 8 ? libc_malloc :
		    0);
	put(b, 128);			/* a short copy: struct rb's room */
	put(b, (uint64_t)(uintptr_t)replay_test_heap + 5);
	for (size_t i = 1; i < 128 / 8; i++)
		put(b, 0);
	put(b, 8);			/* dyn_size */
	return done(b, PERF_RECORD_SAMPLE);
}

static const struct perf_event_header *
fault(struct rb *b, uint64_t addr, uint64_t time)
{
	b->n = 1;
	put(b, 1);
	put(b, 0x401000);
	put(b, (uint64_t)PID | (uint64_t)PID << 32);
	put(b, time);
	put(b, addr);
	return done(b, PERF_RECORD_SAMPLE);
}

/* This executable's mappings and libc's from /proc/self/maps, as MMAP2
 * records. */
static int
write_maps(struct perfdata_writer *w, struct rb *b)
{
	char exe[256], line[512], path[256], perms[8];
	unsigned long long lo, hi, off, ino;
	unsigned maj, min;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (n <= 0 || !f) {
		if (f)
			fclose(f);
		return 0;
	}
	exe[n] = '\0';
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %255s", &lo,
			   &hi, perms, &off, &maj, &min, &ino, path) == 8 &&
		    (strcmp(path, exe) == 0 || strstr(path, "/libc.so."))) {
			perfdata_writer_write(w, mmap2(b, lo, hi, off,
						       perms[2], maj, min, ino,
						       path));
			found++;
		}
	fclose(f);
	return found;
}

static int
write_capture(const char *path)
{
	struct perfdata_writer_opts o = { 0 };
	struct perf_event_attr fa = mk_attr(ST_FAULT, PERF_COUNT_SW_PAGE_FAULTS);
	struct perf_event_attr aa = mk_attr(ST_ALLOC, 0);
	struct perf_event_attr ha = mk_attr(ST_HEAP | PERF_SAMPLE_STACK_USER, 0);
	struct perf_event_attr hr = mk_attr(ST_HEAP, 0);
	struct perfdata_writer *w;
	struct rb b;
	char err[256];
	int found;

	fa.type = PERF_TYPE_SOFTWARE;
	aa.type = PERF_TYPE_TRACEPOINT;
	aa.sample_regs_user = ALLOCS_REGS_MASK;
	aa.sample_stack_user = 4096;
	ha.type = 8;		/* the uprobe PMU's, on some machine */
	ha.sample_regs_user = ALLOCS_REGS_MASK;
	ha.sample_stack_user = 128;
	hr.type = 8;
	hr.config = 1;		/* the retprobe bit */
	hr.sample_regs_user = 1 | 1 << 7;
	if (perfdata_writer_open(&w, path, &o, err, sizeof(err)) < 0 ||
	    perfdata_writer_add_event(w, &fa, "page-faults") < 0 ||
	    perfdata_writer_add_event(w, &aa, "raw_syscalls:sys_exit") < 0 ||
	    perfdata_writer_add_event(w, &ha, "memtop_heap:malloc") < 0 ||
	    perfdata_writer_add_event(w, &hr, "memtop_heap:malloc__return") <
	    0 || perfdata_writer_add_id(w, 0, 1) < 0 ||
	    perfdata_writer_add_id(w, 1, 2) < 0 ||
	    perfdata_writer_add_id(w, 2, 3) < 0 ||
	    perfdata_writer_add_id(w, 3, 4) < 0)
		return -1;
	found = write_maps(w, &b);
	perfdata_writer_write(w, sys_exit(&b, 9, OBJ, 0, 0x10000, 0x22, 100));
	perfdata_writer_write(w, heap_probe(&b, false, 110));
	perfdata_writer_write(w, heap_probe(&b, true, 111));
	perfdata_writer_write(w, fault(&b, HEAPOBJ + 8, 205));
	for (int i = 0; i < 3; i++)
		perfdata_writer_write(w, fault(&b, OBJ + 0x1008, 200 + i));
	perfdata_writer_write(w, fault(&b, 0x500000, 210));
	/* munmap, in the next 1 s frame: later faults on the range are of
	 * no object. */
	perfdata_writer_write(w, sys_exit(&b, 11, 0, OBJ, 0x10000, 0,
					  2000000000));
	perfdata_writer_write(w, fault(&b, OBJ + 0x2000, 2000000100));
	if (perfdata_writer_close(w, err, sizeof(err)) < 0)
		found = -1;
	perfdata_writer_free(w);
	return found;
}

struct objects_seen {
	bool on;
	uint64_t with, none;
	const char *site, *heap_site;
};

static void
objects_frame(const struct frame *f, void *ctx)
{
	struct objects_seen *o = ctx;

	o->on &= f->objects_on;
	o->with += f->objects_samples;
	o->none += f->objects_none;
	for (size_t i = 0; i < f->n_pages; i++)
		if (f->pages[i].addr == OBJ + 0x1000 && f->pages[i].object &&
		    !o->site)
			o->site = strdup(f->pages[i].object->site);
		else if (f->pages[i].addr == (HEAPOBJ & ~0xfffull) &&
			 f->pages[i].object && !o->heap_site)
			o->heap_site = strdup(f->pages[i].object->site);
	/* The event list is the source's, not the allocation's. */
	check_eq_u64(f->n_events, 1);
}

/* The recording's --heap-objects=SIZE as getopt_long read it: the last
 * one, under any unique prefix of its name, up to "--". */
static void
test_heap_floor(void)
{
	check_eq_u64(replay_heap_floor("memtop --heap-objects=128b -p 1"), 128);
	check_eq_u64(replay_heap_floor("memtop -p 1 --heap-objects=4K"), 4096);
	check_eq_u64(replay_heap_floor("memtop --hea=2m -p 1"), 2u << 20);
	check_eq_u64(replay_heap_floor("memtop --heap-objects=128b "
				       "--heap-objects=4 -p 1"), 0);
	check_eq_u64(replay_heap_floor("memtop --heap-objects=64b "
				       "--heap-objects -p 1"), 0);
	check_eq_u64(replay_heap_floor("memtop --heap-objects=1k -- prog "
				       "--heap-objects=64b"), 1024);
	check_eq_u64(replay_heap_floor("memtop -- prog --heap-objects=64b"),
		     0);
	check_eq_u64(replay_heap_floor("memtop --he=64b --help"), 0);
	check_eq_u64(replay_heap_floor("memtop --heap-objects=-5b"), 0);
	check_eq_u64(replay_heap_floor("memtop"), 0);
}

int
main(void)
{
	struct replay_run rr = { 0 };
	struct objects_seen o = { .on = true };
	char path[512], err[256];

	{
		void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

		check(libc != NULL);
		libc_malloc = (uint64_t)(uintptr_t)(libc ? dlsym(libc, "malloc") :
							   NULL);
	}
	test_heap_floor();
	tmpdir_make();
	path_in_tmp(path, sizeof(path), "objects.data");
	if (!check(write_capture(path) > 0))
		goto out;
	if (!check(replay_run_open(&rr, path, 64, 1, 10, true, true, err,
				   sizeof(err)) == 0)) {
		fprintf(stderr, "replay: %s\n", err);
		goto out;
	}
	check_eq_i64(replay_run_frames(&rr, objects_frame, &o), 0);
	check(o.on);
	check_eq_str(o.site ? o.site : "(none)", "replay_test_site+0x4");
	check_eq_u64(o.with, 4);
	check_eq_u64(o.none, 2);
	check(o.heap_site && strncmp(o.heap_site, "replay_test_heap+", 17) == 0);
	printf("# heap page named %s\n", o.heap_site ? o.heap_site : "(none)");
out:
	free((void *)o.site);
	free((void *)o.heap_site);
	replay_run_close(&rr);
	tmpdir_remove();
	return test_result();
}
