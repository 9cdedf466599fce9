/*
 * The collector's module lists for the unwind helper (unwind_int.h): each
 * process's file mappings of modules, from /proc/PID/maps live, or in
 * replay from names' regions (the capture's MMAP2 records, only the files
 * names opened and proved by build id), and the helper's file slots they
 * name.  Collector thread only.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"
#include "maps_int.h"
#include "names_int.h"
#include "unwind_int.h"

struct unwind_pmods *
unwind_find(struct unwinder *u, int pid)
{
	for (size_t i = 0; i < UNWIND_PIDS; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	return NULL;
}

void
unwind_stale(struct unwinder *u, int pid)
{
	struct unwind_pmods *p = unwind_find(u, pid);

	if (p)
		p->stale = true;
}

void
unwind_forget(struct unwinder *u, int pid)
{
	struct unwind_pmods *p = unwind_find(u, pid);

	if (p) {
		free(p->mods);
		memset(p, 0, sizeof(*p));
	}
}

/* The slot of r's file, taking the least recently used one for a new
 * file (sent again at its next use). */
static uint32_t
unwind_slot(struct unwinder *u, const struct maps_region *r)
{
	struct unwind_cfile *f, *old = &u->files[0];

	for (uint32_t i = 0; i < UNWIND_FILES; i++) {
		f = &u->files[i];
		if (f->used && f->inode == r->inode &&
		    f->dev_major == r->dev_major &&
		    f->dev_minor == r->dev_minor &&
		    strncmp(f->path, r->path, sizeof(f->path)) == 0) {
			f->used = ++u->clock;
			return i;
		}
		if (f->used < old->used)
			old = f;
	}
	/* The processes whose modules named the slot's old file read
	 * theirs again. */
	for (size_t i = 0; old->used && i < UNWIND_PIDS; i++)
		for (size_t j = 0; j < u->procs[i].n; j++)
			if (u->procs[i].mods[j].file ==
			    (uint32_t)(old - u->files))
				u->procs[i].stale = true;
	memset(old, 0, sizeof(*old));
	old->deleted = r->deleted;
	old->inode = r->inode;
	old->dev_major = r->dev_major;
	old->dev_minor = r->dev_minor;
	old->build_id_size = r->build_id_size;
	memcpy(old->build_id, r->build_id, sizeof(old->build_id));
	snprintf(old->path, sizeof(old->path), "%s", r->path);
	old->used = ++u->clock;
	return (uint32_t)(old - u->files);
}

/* Does the file of regions[i] have an executable mapping? */
static bool
unwind_has_code(const struct maps *m, const struct maps_region *r)
{
	for (size_t i = 0; i < maps_count(m); i++) {
		const struct maps_region *o = maps_at(m, i);

		if (o->kind == MAPS_FILE && (o->prot & MAPS_PROT_EXEC) &&
		    o->inode == r->inode && o->dev_major == r->dev_major &&
		    o->dev_minor == r->dev_minor)
			return true;
	}
	return false;
}

void
unwind_use_names(struct unwinder *u, struct names *names)
{
	u->names = names;
}

/* Did names open path as a module of np and prove it (by build id)? */
static bool
unwind_proven(const struct names_proc *np, const char *path)
{
	for (size_t i = 0; i < np->n_mods; i++)
		if (np->mods[i].file && !np->mods[i].pending &&
		    np->mods[i].path && strcmp(np->mods[i].path, path) == 0)
			return true;
	return false;
}

/* The regions p's modules come from: /proc/PID/maps read into scratch,
 * or (replay) names' regions from the capture's MMAP2 records, *np set.
 * NULL when there are none (-errno in *err). */
static const struct maps *
unwind_maps(struct unwinder *u, int pid, struct names_proc **np, int *err)
{
	char path[64], *text = NULL;
	size_t len = 0;
	int ret;

	*np = NULL;
	if (u->names) {
		names_prepare(u->names, pid);
		*np = names_proc(u->names, pid);
		*err = -ESRCH;
		return *np ? (*np)->maps : NULL;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	ret = maps_read_file(path, &text, &len);
	if (ret == 0)
		ret = maps_load_text(u->scratch, text, len);
	free(text);
	*err = ret == -ENOMEM ? ret : -ESRCH;
	return ret < 0 ? NULL : u->scratch;
}

/* p's modules: the file mappings of files with code (in replay, of the
 * files names opened and proved by build id; never /proc).  0 or -errno
 * (-ESRCH: gone, or no module proved). */
static int
unwind_read_mods(struct unwinder *u, struct unwind_pmods *p)
{
	struct names_proc *np;
	const struct maps *m;
	struct unwind_mod *mods;
	size_t n = 0;
	int err;

	m = unwind_maps(u, p->pid, &np, &err);
	if (!m)
		return err;
	mods = calloc(maps_count(m) + 1, sizeof(*mods));
	if (!mods)
		return -ENOMEM;
	for (size_t i = 0; i < maps_count(m) && n < UNWIND_MAX_MODS; i++) {
		const struct maps_region *r = maps_at(m, i);

		if (r->kind != MAPS_FILE || !r->path || r->path[0] != '/' ||
		    !(np ? unwind_proven(np, r->path) : unwind_has_code(m, r)))
			continue;
		mods[n++] = (struct unwind_mod){ .start = r->start,
			.end = r->end, .pgoff = r->pgoff,
			.file = unwind_slot(u, r) };
	}
	if (np && n == 0) {
		free(mods);
		return -ESRCH;
	}
	free(p->mods);
	p->mods = mods;
	p->n = n;
	p->stale = false;
	return 0;
}

/* pid's modules, read when new or stale; NULL when pid is gone. */
struct unwind_pmods *
unwind_pmods(struct unwinder *u, int pid)
{
	struct unwind_pmods *p = unwind_find(u, pid);

	if (!p) {
		p = &u->procs[0];
		for (size_t i = 0; i < UNWIND_PIDS; i++) {
			if (u->procs[i].pid == 0) {
				p = &u->procs[i];
				break;
			}
			if (u->procs[i].used < p->used)
				p = &u->procs[i];
		}
		free(p->mods);
		memset(p, 0, sizeof(*p));
		p->pid = pid;
		p->stale = true;
	}
	p->used = ++u->clock;
	if (p->stale && unwind_read_mods(u, p) < 0) {
		unwind_forget(u, pid);
		return NULL;
	}
	return p;
}

