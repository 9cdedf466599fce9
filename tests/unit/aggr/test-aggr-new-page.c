/*
 * A page new to the page table is told to the names (aggr_decide calls
 * sides_new_page), in the batch's plain page->node pass and in its
 * general one: a page outside every region the names know makes them
 * read the process's maps again right after the batch, so the frame
 * names a mapping made after the last read at once, not at the frame's
 * own re-read NAMES_REFRESH_MS later.  A page already tracked is not
 * told again: its batch reads nothing.  The oracles are the names'
 * count of maps reads and the frame's region of the new mapping.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "aggr.h"
#include "aggr-test.h"
#include "frame.h"
#include "framebuild.h"
#include "names.h"
#include "physnode.h"
#include "sides.h"
#include "testlib.h"
#include "topo.h"

#define NPTEST_PAGES	4

static uint64_t
nptest_reads(struct aggr *a)
{
	struct names_stats st;

	names_stats(sides_names(aggr_sides(a)), &st);
	return st.maps_reads;
}

/* Past NAMES_RETRY_MS, the least time between two reads of a pid. */
static void
nptest_wait_retry(void)
{
	struct timespec ts = { 0, (NAMES_RETRY_MS + 20) * 1000000L };

	nanosleep(&ts, NULL);
}

static struct frame *
nptest_frame(struct aggr *a)
{
	struct frame_meta m = ftest_meta("faults", 1, SORT_SAMPLES, 50);

	return frame_build(a, &m);
}

/* The frame's region of the page at addr of this process (NULL: none,
 * or the page not in the frame). */
static const char *
nptest_region(const struct frame *f, const char *addr)
{
	for (size_t i = 0; f && i < f->n_pages; i++)
		if (f->pages[i].pid == getpid() &&
		    f->pages[i].addr == (uint64_t)(uintptr_t)addr)
			return f->pages[i].region;
	return NULL;
}

static void
nptest_run(bool general)
{
	static const int one0[2] = { 0, 0 };
	long page_size = sysconf(_SC_PAGESIZE);
	size_t len = NPTEST_PAGES * (size_t)page_size;
	struct topo *t = topo_new_fake(2, one0);
	struct physnode *map = NULL;
	char *old = MAP_FAILED, *late = MAP_FAILED;
	struct frame *f = NULL;
	struct aggr a;
	uint64_t reads;

	if (!check(t != NULL) || !check(aggr_init(&a, t, NULL, 12, 0) == 0))
		goto out_topo;
	if (!check(sides_names(aggr_sides(&a)) != NULL))
		goto out;
	/* An empty memory-block map takes the general pass (none of these
	 * samples has PHYS_ADDR); without it the plain one. */
	if (general && check_eq_i64(physnode_new_empty(&map, 1 << 27), 0))
		aggr_set_physnode(&a, map);
	old = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!check(old != MAP_FAILED))
		goto out;
	memset(old, 1, len);
	/* The first pages of an unknown process: its maps read once. */
	ftest_own_pages(&a, old, NPTEST_PAGES);
	check_eq_u64(nptest_reads(&a), 1);
	reads = nptest_reads(&a);

	/* A mapping made after that read (read-only, so the kernel cannot
	 * merge it into old's). */
	late = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!check(late != MAP_FAILED))
		goto out;
	nptest_wait_retry();
	/* Pages already tracked, in a region known: nothing read. */
	ftest_own_pages(&a, old, NPTEST_PAGES);
	check_eq_u64(nptest_reads(&a), reads);
	/* A page of the new mapping: read again after its batch. */
	ftest_own_pages(&a, late, 1);
	check_eq_u64(nptest_reads(&a), reads + 1);
	f = nptest_frame(&a);
	if (check(f != NULL)) {
		const char *r = nptest_region(f, late);

		if (!check(r != NULL))
			fprintf(stderr, "  the late mapping has no region\n");
		check(nptest_region(f, old) != NULL);
	}
out:
	frame_free(f);
	aggr_fini(&a);
	physnode_free(map);
	if (old != MAP_FAILED)
		munmap(old, len);
	if (late != MAP_FAILED)
		munmap(late, len);
out_topo:
	topo_free(t);
}

int
main(void)
{
	nptest_run(false);
	nptest_run(true);
	return test_result();
}
