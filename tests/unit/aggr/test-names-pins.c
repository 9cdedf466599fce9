/*
 * A page keeps the name of the mapping it was counted in when a later
 * record's mapping covers that one before the frame (the old mapping
 * was unmapped and its addresses reused: a thread's stack over a file
 * mapping just unmapped, seen in tests/names/e2e-names-short.sh where
 * the kernel places the stack there).  Regions come from records alone
 * (names_use_records, offline), so nothing depends on this machine's
 * processes.  Pages counted before the record keep the file's name,
 * whether already in the page table or still in the batch; a page first
 * counted after it gets the new mapping's; a record that changes no name
 * (anonymous memory over anonymous memory) pins nothing; a reset, a
 * change of page size and a FORK record that reuses the pid unpin, and
 * a FORK record that reuses the pid of a process that exited drops the
 * old process's regions even when its parent is unknown.  A
 * short range over a larger table is looked up page by page, a wide one
 * by a walk of the table: both pin.
 *
 * Records out of time order (per-CPU rings drained one after another,
 * the cause of a CI failure of e2e-names under TSan: a launched
 * command's exec COMM drained after its new image's MMAP2s dropped them
 * and a pin): an exec drops only what was mapped before it, keeps the
 * pins later records made, and ignores its old image's records that come
 * after it; an older mapping drained second goes only where no later one
 * lies (and pins nothing there); a record older than one of its process
 * taken before (late) pins nothing, its pages perhaps counted after it;
 * the heap's record drained before the executable's becomes [heap] with
 * it (and, untimed and in order, as a replay's, when it is taken); a FORK drained after the child's own records keeps them and copies
 * only what the parent had mapped by then, nothing when the child
 * exec'd after it, and drops an exited process's regions of its pid but
 * not the new child's; a pin goes with the region it names, so a new
 * image's record covering an old image's region before the exec's COMM
 * leaves no pin of the old image.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "aggr.h"
#include "aggr-test.h"
#include "aggr_granularity.h"
#include "frame.h"
#include "framebuild.h"
#include "names.h"
#include "sides.h"
#include "testlib.h"
#include "topo.h"

#define PTEST_PID	4242
#define PTEST_FILE	0x7f0000000000ull	/* a file mapping, 4 pages */
#define PTEST_ANON	0x7e0000000000ull	/* anonymous memory, 4 pages */
#define PTEST_FILE2	0x7d0000000000ull	/* another file, 4 pages */
#define PTEST_PARENT	4241

/* A record of pid's mapping made at time (0: unknown). */
static void
ptest_map_at(struct names *n, int32_t pid, uint64_t start, uint64_t end,
	     const char *name, uint64_t time)
{
	struct names_map m = {
		.start = start, .end = end, .inode = 77, .dev_major = 8,
		.prot = 3, .name = name, .name_len = strlen(name),
		.time = time,
	};

	names_mmap(n, pid, &m);
}

static void
ptest_map(struct names *n, uint64_t start, uint64_t end, const char *name)
{
	ptest_map_at(n, PTEST_PID, start, end, name, 0);
}

static void
ptest_add(struct aggr *a, uint64_t addr)
{
	struct sample s = { .addr = addr, .pid = PTEST_PID, .tid = PTEST_PID,
			    .cpu = 0, .kind = SAMPLE_LOAD, .period = 1 };

	aggr_add(a, &s);
}

/* The region the frame gives the page at addr ("" when not shown). */
static void
ptest_check(struct aggr *a, uint64_t addr, const char *want)
{
	struct frame_target tg[1] = { { .pid = PTEST_PID, .comm = "t",
					.alive = true } };
	struct frame_meta m = ftest_meta("faults", 1, SORT_TOTAL, 20);
	struct frame *f;
	const char *got = "";

	m.targets = tg;
	m.n_targets = 1;
	f = frame_build(a, &m);
	if (!check(f != NULL))
		return;
	for (size_t i = 0; i < f->n_pages; i++)
		if (f->pages[i].addr == addr)
			got = f->pages[i].region ? f->pages[i].region : "(null)";
	if (!check(strcmp(got, want) == 0))
		fprintf(stderr, "page 0x%llx: region '%s', want '%s'\n",
			(unsigned long long)addr, got, want);
	frame_free(f);
}

/* The frame shows the old image's records left out (names.stale_mmaps). */
static void
ptest_check_stale(struct aggr *a, uint64_t want)
{
	struct frame_meta m = ftest_meta("faults", 1, SORT_TOTAL, 20);
	struct frame *f = frame_build(a, &m);

	if (check(f != NULL))
		check_eq_u64(f->names_stale_mmaps, want);
	frame_free(f);
}

/* A fresh aggregation naming from records alone; NULL names on failure. */
static struct names *
ptest_init(struct aggr *a, const struct topo *topo)
{
	struct names *n;

	if (!check(aggr_init(a, topo, NULL, 12, 0) == 0))
		return NULL;
	n = sides_names(a->sides);
	if (!check(n != NULL))
		return NULL;
	names_use_records(n, true);
	names_no_files(n);
	return n;
}

/* The exec's COMM drained after records of the new image (times: old
 * image 10-12, exec 20, new image 30-32), then a late one of the old. */
static void
ptest_exec_late(const struct topo *topo)
{
	const uint64_t lib = PTEST_FILE, gone = PTEST_FILE2;
	const uint64_t exe = PTEST_ANON, early = PTEST_ANON + 0x100000;
	struct names_stats st;
	struct aggr a;
	struct names *n = ptest_init(&a, topo);

	if (!n)
		return;
	ptest_map_at(n, PTEST_PID, exe, exe + 0x4000, "/old/exe", 10);
	/* A page of the old image, pinned when anonymous memory (12)
	 * covered its file: a pin of the old image. */
	ptest_map_at(n, PTEST_PID, early, early + 0x4000, "/tmp/early.bin",
		     11);
	ptest_add(&a, early + 0x1000);
	aggr_flush(&a);
	ptest_map_at(n, PTEST_PID, early, early + 0x4000, "//anon", 12);
	/* The new image's, from another CPU's ring: a library, and a file
	 * touched, unmapped and covered by a thread stack (the pin). */
	ptest_map_at(n, PTEST_PID, lib, lib + 0x4000, "/new/lib.so", 30);
	ptest_map_at(n, PTEST_PID, gone, gone + 0x4000, "/tmp/gone.bin", 31);
	ptest_add(&a, gone + 0x1000);
	aggr_flush(&a);
	ptest_map_at(n, PTEST_PID, gone - 0x800000, gone + 0x4000, "//anon",
		     32);
	names_forget(n, PTEST_PID, 20);
	/* The old image's record, from a ring drained later still. */
	ptest_map_at(n, PTEST_PID, exe + 0x100000, exe + 0x104000,
		     "/old/data.bin", 15);
	ptest_add(&a, lib + 0x1000);
	ptest_add(&a, exe + 0x1000);
	ptest_add(&a, exe + 0x101000);
	ptest_check(&a, lib + 0x1000, "/new/lib.so+0x1000");
	ptest_check(&a, gone + 0x1000, "/tmp/gone.bin+0x1000");
	ptest_check(&a, early + 0x1000, "(null)");
	ptest_check(&a, exe + 0x1000, "(null)");
	ptest_check(&a, exe + 0x101000, "(null)");
	names_stats(n, &st);
	check_eq_u64(st.mmaps_before_exec, 1);
	ptest_check_stale(&a, 1);
	aggr_fini(&a);
}

/* An older mapping drained after a later one over the same addresses
 * (ld.so.cache, unmapped, its addresses reused by a file mapping). */
static void
ptest_older_second(const struct topo *topo)
{
	const uint64_t at = PTEST_FILE;
	struct names_stats st;
	struct aggr a;
	struct names *n = ptest_init(&a, topo);

	if (!n)
		return;
	ptest_map_at(n, PTEST_PID, at, at + 0x4000, "/tmp/data.bin", 50);
	ptest_add(&a, at + 0x1000);
	aggr_flush(&a);
	ptest_map_at(n, PTEST_PID, at - 0x2000, at + 0x6000,
		     "/etc/ld.so.cache", 40);
	names_stats(n, &st);
	check_eq_u64(st.pinned, 0);	/* the page's name did not change */
	ptest_add(&a, at - 0x1000);
	ptest_add(&a, at + 0x5000);
	ptest_check(&a, at + 0x1000, "/tmp/data.bin+0x1000");
	ptest_check(&a, at - 0x1000, "/etc/ld.so.cache+0x1000");
	ptest_check(&a, at + 0x5000, "/etc/ld.so.cache+0x7000");
	aggr_fini(&a);
}

/* A late record over a counted page (its page may be the new mapping's:
 * named at the frame), and the heap's record before the executable's. */
static void
ptest_late(const struct topo *topo)
{
	const uint64_t exe = 0x555500000000ull;
	const uint64_t heap = exe + 0x4000 + 0x1000000;
	struct names_stats st;
	struct aggr a;
	struct names *n = ptest_init(&a, topo);

	if (!n)
		return;
	ptest_map_at(n, PTEST_PID, PTEST_FILE, PTEST_FILE + 0x4000,
		     "/tmp/o.bin", 20);
	ptest_add(&a, PTEST_FILE + 0x1000);
	aggr_flush(&a);
	ptest_map_at(n, PTEST_PID, heap, heap + 0x21000, "//anon", 60);
	ptest_map_at(n, PTEST_PID, PTEST_FILE, PTEST_FILE + 0x4000, "//anon",
		     30);
	names_stats(n, &st);
	check_eq_u64(st.pinned, 0);
	ptest_check(&a, PTEST_FILE + 0x1000, "[anon]");
	ptest_map_at(n, PTEST_PID, exe, exe + 0x4000, "/bin/exe", 40);
	ptest_add(&a, heap + 0x1000);
	ptest_check(&a, heap + 0x1000, "[heap]");
	aggr_fini(&a);
	/* Untimed records (a replay's), in order: the heap is told when
	 * its record is taken. */
	n = ptest_init(&a, topo);
	if (!n)
		return;
	ptest_map_at(n, PTEST_PID, exe, exe + 0x4000, "/bin/exe", 0);
	ptest_map_at(n, PTEST_PID, heap, heap + 0x21000, "//anon", 0);
	ptest_add(&a, heap + 0x1000);
	ptest_check(&a, heap + 0x1000, "[heap]");
	aggr_fini(&a);
}

/* A FORK (50) drained after the child's own mapping (60) and one the
 * parent made after it (70). */
static void
ptest_fork_late(const struct topo *topo)
{
	struct aggr a;
	struct names *n = ptest_init(&a, topo);

	if (!n)
		return;
	ptest_map_at(n, PTEST_PARENT, PTEST_FILE, PTEST_FILE + 0x4000,
		     "/bin/parent", 10);
	ptest_map_at(n, PTEST_PARENT, PTEST_FILE2, PTEST_FILE2 + 0x4000,
		     "/tmp/after-fork.bin", 70);
	ptest_map_at(n, PTEST_PID, PTEST_ANON, PTEST_ANON + 0x4000,
		     "/tmp/child.bin", 60);
	names_fork(n, PTEST_PID, PTEST_PARENT, 50);
	ptest_add(&a, PTEST_FILE + 0x1000);
	ptest_add(&a, PTEST_FILE2 + 0x1000);
	ptest_add(&a, PTEST_ANON + 0x1000);
	ptest_check(&a, PTEST_ANON + 0x1000, "/tmp/child.bin+0x1000");
	ptest_check(&a, PTEST_FILE + 0x1000, "/bin/parent+0x1000");
	ptest_check(&a, PTEST_FILE2 + 0x1000, "(null)");
	aggr_fini(&a);
}

/* A FORK (100) drained after the child's exec (110) and its new image's
 * mapping (120); then a pid reused: the exited process's region (5) goes,
 * the new child's (160, before its FORK at 150) stays. */
static void
ptest_fork_exec(const struct topo *topo)
{
	struct aggr a;
	struct names *n = ptest_init(&a, topo);

	if (!n)
		return;
	ptest_map_at(n, PTEST_PARENT, PTEST_FILE, PTEST_FILE + 0x4000,
		     "/bin/sh", 10);
	names_forget(n, PTEST_PID, 110);
	ptest_map_at(n, PTEST_PID, PTEST_ANON, PTEST_ANON + 0x4000,
		     "/usr/bin/cmd", 120);
	names_fork(n, PTEST_PID, PTEST_PARENT, 100);
	ptest_add(&a, PTEST_FILE + 0x1000);
	ptest_add(&a, PTEST_ANON + 0x1000);
	ptest_check(&a, PTEST_FILE + 0x1000, "(null)");
	ptest_check(&a, PTEST_ANON + 0x1000, "/usr/bin/cmd+0x1000");
	aggr_reset(&a);
	names_exit(n, PTEST_PID);
	ptest_map_at(n, PTEST_PID, PTEST_FILE2, PTEST_FILE2 + 0x4000,
		     "/tmp/new-child.bin", 160);
	names_fork(n, PTEST_PID, PTEST_PARENT, 150);
	ptest_add(&a, PTEST_FILE2 + 0x1000);
	ptest_add(&a, PTEST_ANON + 0x1000);
	ptest_check(&a, PTEST_FILE2 + 0x1000, "/tmp/new-child.bin+0x1000");
	ptest_check(&a, PTEST_ANON + 0x1000, "(null)");
	aggr_fini(&a);
}

/* The new image's record (30) covers an old image's region (10) with a
 * counted page before the exec's COMM (20) is taken: the page was the
 * old image's, and its pin goes with the old image. */
static void
ptest_pin_old_region(const struct topo *topo)
{
	struct aggr a;
	struct names *n = ptest_init(&a, topo);

	if (!n)
		return;
	ptest_map_at(n, PTEST_PID, PTEST_FILE, PTEST_FILE + 0x4000,
		     "/old/lib.so", 10);
	ptest_add(&a, PTEST_FILE + 0x1000);
	aggr_flush(&a);
	ptest_map_at(n, PTEST_PID, PTEST_FILE, PTEST_FILE + 0x4000,
		     "/new/lib.so", 30);
	names_forget(n, PTEST_PID, 20);
	ptest_check(&a, PTEST_FILE + 0x1000, "/new/lib.so+0x1000");
	aggr_fini(&a);
}

int
main(void)
{
	static const int cpu_node[2] = { 0, 0 };
	struct topo *topo = topo_new_fake(2, cpu_node);
	struct names_stats st;
	struct aggr a;
	struct names *n;

	ptest_exec_late(topo);
	ptest_older_second(topo);
	ptest_fork_late(topo);
	ptest_late(topo);
	ptest_fork_exec(topo);
	ptest_pin_old_region(topo);
	check_eq_i64(aggr_init(&a, topo, NULL, 12, 0), 0);
	n = sides_names(a.sides);
	if (!check(n != NULL))
		return test_result();
	names_use_records(n, true);
	names_no_files(n);
	ptest_map(n, PTEST_FILE, PTEST_FILE + 0x4000, "/tmp/ptest.bin");
	ptest_map(n, PTEST_ANON, PTEST_ANON + 0x4000, "//anon");
	ptest_add(&a, PTEST_FILE + 0x1000);
	ptest_add(&a, PTEST_ANON + 0x1000);
	aggr_flush(&a);
	ptest_add(&a, PTEST_FILE + 0x2000);	/* still in the batch */
	/* A stack over both: the file mapping and the anonymous memory
	 * were unmapped, their addresses reused. */
	ptest_map(n, PTEST_FILE - 0x800000, PTEST_FILE + 0x4000, "//anon");
	ptest_map(n, PTEST_ANON - 0x800000, PTEST_ANON + 0x4000, "//anon");
	ptest_add(&a, PTEST_FILE + 0x3000);	/* counted after the record */
	ptest_check(&a, PTEST_FILE + 0x1000, "/tmp/ptest.bin+0x1000");
	ptest_check(&a, PTEST_FILE + 0x2000, "/tmp/ptest.bin+0x2000");
	ptest_check(&a, PTEST_FILE + 0x3000, "[anon]");
	ptest_check(&a, PTEST_ANON + 0x1000, "[anon]");
	names_stats(n, &st);
	check_eq_u64(st.pinned, 2);		/* the anonymous page needs none */
	check_eq_u64(st.pins_dropped, 0);
	/* After a reset the addresses are the new mapping's. */
	aggr_reset(&a);
	ptest_add(&a, PTEST_FILE + 0x1000);
	ptest_check(&a, PTEST_FILE + 0x1000, "[anon]");
	/* A short range in a table of more pages: looked up page by page. */
	ptest_map(n, PTEST_FILE2, PTEST_FILE2 + 0x4000, "/tmp/ptest2.bin");
	for (uint64_t i = 0; i < 64; i++)
		ptest_add(&a, PTEST_ANON - 0x100000 + (i << 12));
	ptest_add(&a, PTEST_FILE2 + 0x1000);
	aggr_flush(&a);
	ptest_map(n, PTEST_FILE2, PTEST_FILE2 + 0x4000, "//anon");
	ptest_check(&a, PTEST_FILE2 + 0x1000, "/tmp/ptest2.bin+0x1000");
	/* Pins are per page size: a round trip to 2 MiB pages drops them. */
	check_eq_i64(aggr_granularity_apply(&a, 21, 0), 0);
	check_eq_i64(aggr_granularity_apply(&a, 12, 0), 0);
	ptest_add(&a, PTEST_FILE2 + 0x1000);
	ptest_check(&a, PTEST_FILE2 + 0x1000, "[anon]");
	/* A FORK record reusing the pid: the old process's pins go, the
	 * child's regions are its parent's. */
	ptest_add(&a, PTEST_FILE2 + 0x2000);
	aggr_flush(&a);
	ptest_map(n, PTEST_FILE2, PTEST_FILE2 + 0x4000, "/tmp/ptest3.bin");
	ptest_check(&a, PTEST_FILE2 + 0x2000, "[anon]");
	names_mmap(n, PTEST_PARENT, &(struct names_map){
		.start = PTEST_FILE2, .end = PTEST_FILE2 + 0x4000,
		.inode = 78, .prot = 3, .name = "/tmp/parent.bin",
		.name_len = strlen("/tmp/parent.bin") });
	names_fork(n, PTEST_PID, PTEST_PARENT, 0);
	ptest_check(&a, PTEST_FILE2 + 0x2000, "/tmp/parent.bin+0x2000");
	/* The pid's process exits and a FORK record reuses the pid, from a
	 * parent of which nothing is known: nothing of the old process's
	 * names is the new one's. */
	ptest_map(n, PTEST_FILE, PTEST_FILE + 0x4000, "/tmp/old.bin");
	names_exit(n, PTEST_PID);
	names_fork(n, PTEST_PID, PTEST_PARENT + 100, 0);
	aggr_reset(&a);
	ptest_add(&a, PTEST_FILE + 0x1000);
	ptest_check(&a, PTEST_FILE + 0x1000, "(null)");
	/* Its own regions name its pages again. */
	ptest_map(n, PTEST_FILE, PTEST_FILE + 0x4000, "/tmp/new.bin");
	ptest_check(&a, PTEST_FILE + 0x1000, "/tmp/new.bin+0x1000");
	aggr_fini(&a);
	topo_free(topo);
	return test_result();
}
