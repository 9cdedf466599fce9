/*
 * Main thread, before the collector starts.  See heapprobe.h.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprobe.h"
#include "log.h"
#include "maps.h"
#include "source.h"
#include "symbols.h"

struct heapprobe_fn {
	const char *name;
	enum heap_fn fn;
	bool ret;		/* a return probe too */
};

/* The C allocator's functions (glibc, jemalloc, tcmalloc, mimalloc all
 * export these names). */
static const struct heapprobe_fn heapprobe_c[] = {
	{ "malloc", HEAP_MALLOC, true },
	{ "calloc", HEAP_CALLOC, true },
	{ "realloc", HEAP_REALLOC, true },
	{ "posix_memalign", HEAP_MEMALIGN, true },
	{ "aligned_alloc", HEAP_ALIGNED, true },
	{ "free", HEAP_FREE, false },
};

/* libstdc++ (Itanium C++ ABI names): new, new[], and the deletes,
 * sized or not. */
static const struct heapprobe_fn heapprobe_cxx[] = {
	{ "_Znwm", HEAP_MALLOC, true },
	{ "_Znam", HEAP_MALLOC, true },
	{ "_ZdlPv", HEAP_FREE, false },
	{ "_ZdlPvm", HEAP_FREE, false },
	{ "_ZdaPv", HEAP_FREE, false },
	{ "_ZdaPvm", HEAP_FREE, false },
};

/* Module names, by base-name prefix: the preloaded allocators first (they
 * win symbol resolution), then glibc. */
static const char *const heapprobe_c_libs[] = {
	"libjemalloc.so", "libtcmalloc", "libmimalloc.so", "libc.so.",
};

static const char *
heapprobe_base(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* The first file mapping of m whose base name starts with prefix. */
static const struct maps_region *
heapprobe_find(const struct maps *m, const char *prefix)
{
	for (size_t i = 0; i < maps_count(m); i++) {
		const struct maps_region *r = maps_at(m, i);

		if (r->kind == MAPS_FILE && r->path &&
		    strncmp(heapprobe_base(r->path), prefix,
			    strlen(prefix)) == 0)
			return r;
	}
	return NULL;
}

/* Adds the probes of fns found in f, the file of region r of pid, as
 * src->heap_paths[lib].  Returns probes added; the offsets of malloc
 * and free into off[0], off[1]. */
static int
heapprobe_lib(struct source *src, const struct heap_opts *o, pid_t pid,
	      int lib, const struct maps_region *r,
	      const struct symbols_file *f, const struct heapprobe_fn *fns,
	      size_t n_fns, uint64_t off[2])
{
	uint64_t every = o->every ? o->every : 1;
	int added = 0;

	if ((size_t)snprintf(src->heap_paths[lib], sizeof(src->heap_paths[0]),
			     "/proc/%d/root%s", (int)pid, r->path) >=
	    sizeof(src->heap_paths[0]))
		return 0;
	for (size_t i = 0; i < n_fns; i++) {
		uint64_t vaddr, fo;

		if (symbols_find(f, fns[i].name, &vaddr) < 0 ||
		    symbols_file_offset(f, vaddr, &fo) < 0)
			continue;	/* an old libc without aligned_alloc */
		if (fns[i].fn == HEAP_MALLOC && lib == 0)
			off[0] = fo;
		if (fns[i].fn == HEAP_FREE && lib == 0)
			off[1] = fo;
		/* Entries of allocating calls are what --heap-objects=N
		 * samples; returns and frees are always recorded. */
		if (source_heap_add(src, lib, fo, fns[i].fn, false,
				    fns[i].fn == HEAP_FREE ? 1 : every) < 0)
			break;
		added++;
		if (fns[i].ret &&
		    source_heap_add(src, lib, fo, fns[i].fn, true, 1) == 0)
			added++;
	}
	return added;
}

static int
heapprobe_add(struct source *src, const struct heap_opts *o, pid_t pid,
	      struct symbols *syms, const struct maps *m, char *what,
	      size_t len, uint64_t off[2])
{
	const struct maps_region *r = NULL;
	struct symbols_file *f;
	int err, n = 0;

	for (size_t i = 0; !r && i < sizeof(heapprobe_c_libs) /
				      sizeof(heapprobe_c_libs[0]); i++)
		r = heapprobe_find(m, heapprobe_c_libs[i]);
	if (r && (f = symbols_open(syms, (int32_t)pid, r, &err)) != NULL) {
		n = heapprobe_lib(src, o, pid, 0, r, f, heapprobe_c,
				  sizeof(heapprobe_c) / sizeof(heapprobe_c[0]),
				  off);
		snprintf(what, len, "%s", heapprobe_base(r->path));
	}
	r = heapprobe_find(m, "libstdc++.so");
	if (n && r && (f = symbols_open(syms, (int32_t)pid, r, &err))) {
		uint64_t unused[2];
		int k = heapprobe_lib(src, o, pid, 1, r, f, heapprobe_cxx,
				      sizeof(heapprobe_cxx) /
				      sizeof(heapprobe_cxx[0]), unused);

		if (k > 0) {
			size_t used = strlen(what);

			snprintf(what + used, len - used, ", %s",
				 heapprobe_base(r->path));
		}
		n += k;
	}
	return n;
}

/* The cost on memtop's own allocator (the target's file for a launched
 * command, and most often for -p): its offsets found the same way. */
static void
heapprobe_calibrate(struct symbols *syms, struct heap_cost *cost)
{
	static const struct heap_opts all = { .on = true };
	struct source *scratch = calloc(1, sizeof(*scratch));
	struct maps *m = maps_new((int32_t)getpid());
	uint64_t off[2] = { 0, 0 };
	char what[96];

	if (scratch && m && maps_refresh(m) >= 0) {
		scratch->n_alloc = 1;
		int ret = -ENOENT;

		if (heapprobe_add(scratch, &all, getpid(), syms, m, what,
				  sizeof(what), off) > 0 && off[0] && off[1])
			ret = heapcal_measure(scratch->heap_paths[0], off[0],
					      off[1], cost);
		if (ret < 0)
			log_msg("heap objects: their cost not measured: %s",
				strerror(-ret));
		else
			log_msg("heap objects: malloc + free %llu ns, probed "
				"+%llu ns, +%llu ns when not recorded",
				(unsigned long long)cost->plain_ns,
				(unsigned long long)cost->full_ns,
				(unsigned long long)cost->trap_ns);
	}
	maps_free(m);
	free(scratch);
}

int
heapprobe_prepare(struct source *src, const struct heap_opts *o, pid_t pid,
		  struct heap_cost *cost)
{
	char why[sizeof(src->heap_note) - 64], what[96] = "";
	uint64_t off[2];
	struct symbols *syms;
	struct maps *m;
	int n = 0;

	memset(cost, 0, sizeof(*cost));
	if (!o->on)
		return 0;
	if (src->n_alloc == 0) {
		snprintf(src->heap_note, sizeof(src->heap_note),
			 "heap objects: off (%.200s)", src->alloc_note);
		return 0;
	}
	if (source_heap_check(why, sizeof(why)) < 0) {
		snprintf(src->heap_note, sizeof(src->heap_note),
			 "heap objects: off: %s", why);
		log_msg("%s", src->heap_note);
		return 0;
	}
	if (pid <= 0)
		pid = getpid();
	m = maps_new((int32_t)pid);
	syms = symbols_new();
	if (m && syms && maps_refresh(m) >= 0)
		n = heapprobe_add(src, o, pid, syms, m, what, sizeof(what),
				  off);
	if (n > 0)
		heapprobe_calibrate(syms, cost);
	symbols_free(syms);
	maps_free(m);
	if (n == 0)
		snprintf(src->heap_note, sizeof(src->heap_note),
			 "heap objects: off: no allocator memtop knows in the "
			 "maps of pid %d (glibc, jemalloc, tcmalloc, mimalloc; "
			 "a static one is not probed)", (int)pid);
	else
		snprintf(src->heap_note, sizeof(src->heap_note),
			 "heap objects: %d probes on %s", n, what);
	log_msg("%s", src->heap_note);
	return n;
}
