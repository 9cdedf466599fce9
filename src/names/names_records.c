/*
 * Regions from the kernel's records: MMAP2 (and MMAP), FORK, EXIT, an
 * exec's COMM (names_forget), and the build ids a capture lists.
 * Collector or replay thread only.  See names.h.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "maps.h"
#include "names.h"

#include "names_int.h"

void
names_use_records(struct names *n, bool offline)
{
	n->records = true;
	n->offline = offline;
}

struct names_covered {
	struct names *n;
	int32_t pid;
};

static void
names_covered(void *ctx, uint64_t lo, uint64_t hi)
{
	struct names_covered *c = ctx;

	c->n->cover(c->n->cover_ctx, c->pid, lo, hi);
}

void
names_mmap(struct names *n, int32_t pid, const struct names_map *m)
{
	struct names_proc *p = names_proc(n, pid);
	struct maps_region r = { 0 };
	bool fresh, late;

	if (!p || p->fixed)
		return;
	if (m->time && m->time < p->exec_time) {
		n->stats.mmaps_before_exec++;	/* the old image's */
		return;
	}
	/* A process first seen in a record: its /proc is read only once a
	 * page of it falls outside what records gave (names_note_page), not
	 * for every process whose mmap a whole-machine view sees. */
	fresh = !p->loaded && p->last_try == 0;
	late = m->time && m->time < p->rec_time;
	if (m->time > p->rec_time)
		p->rec_time = m->time;
	n->stats.mmaps++;
	r.start = m->start;
	r.end = m->end;
	r.pgoff = m->pgoff;
	r.inode = m->inode;
	r.dev_major = m->dev_major;
	r.dev_minor = m->dev_minor;
	r.prot = (uint8_t)(((m->prot & PROT_READ) ? MAPS_PROT_READ : 0) |
			   ((m->prot & PROT_WRITE) ? MAPS_PROT_WRITE : 0) |
			   ((m->prot & PROT_EXEC) ? MAPS_PROT_EXEC : 0));
	r.shared = m->shared;
	r.time = m->time;
	if (m->build_id && m->build_id_size &&
	    m->build_id_size <= sizeof(r.build_id)) {
		memcpy(r.build_id, m->build_id, m->build_id_size);
		r.build_id_size = (uint8_t)m->build_id_size;
	}
	/* A late record's covered pages may have been counted after it
	 * (another CPU's ring drained first: the new image's samples before
	 * its exec's records); they are named from the regions at the
	 * frame, as if no record had pinned them. */
	if (n->cover && !late) {
		struct names_covered c = { n, pid };

		/* ENOMEM: the pages are named from the new regions. */
		(void)maps_covering(p->maps, &r, m->name, m->name_len,
				    names_covered, &c);
	}
	if (maps_insert(p->maps, &r, m->name, m->name_len) == 0)
		p->loaded = true;
	if (fresh)
		p->due = false;
}

void
names_fork(struct names *n, int32_t pid, int32_t ppid, uint64_t time)
{
	struct names_proc *parent, *child;

	if (pid == ppid)
		return;		/* a thread: same address space */
	names_alive(n, pid);	/* a pid reused: its old failure goes */
	child = names_find(n, pid);
	if (child && child->gone && !child->fixed) {
		/* A pid reused after its process exited: nothing of the old
		 * process is the new one's, whatever is known of the parent
		 * (else its regions named the new process's pages, and
		 * `gone` kept its maps from ever being read); with a time,
		 * the new process's own records drained before its FORK
		 * stay. */
		names_drop_image(child, time);	/* its pins too */
		child->due = true;
		n->any_due = true;
	}
	/* The child exec'd after the fork (its COMM, in another CPU's
	 * ring, came first): nothing of the parent is its image's. */
	if (child && time && child->exec_time > time)
		return;
	parent = names_find(n, ppid);
	if (!parent || !maps_count(parent->maps))
		return;
	parent->used = ++n->tick;	/* not the one to make room */
	child = names_proc(n, pid);
	if (!child || child->fixed)
		return;
	/* A pid reused: the old process's pins are not this one's (those
	 * the child's own later records made are). */
	names_keep_pins_from(child, time);
	/* The child starts as a copy of its parent's address space (as it
	 * was at the fork; the child's own later records stay). */
	if (maps_inherit(child->maps, parent->maps, time) == 0) {
		child->loaded = true;
		child->due = false;	/* a copy: nothing to read yet */
	}
}

void
names_keep_pins_from(struct names_proc *p, uint64_t time)
{
	struct u64map keep = { 0 };

	for (size_t i = 0; time && i < p->pinned.cap; i++) {
		struct names_page *c = p->pinned.slots[i].value;

		if (c && c->time >= time &&
		    u64map_put(&keep, p->pinned.slots[i].key, c) == NULL)
			p->pinned.slots[i].value = NULL;	/* moved */
	}
	u64map_clear(&p->pinned, names_free_page);
	p->pinned = keep;
}

/* Everything known of the old image goes: its regions (an address of
 * the new image must not fall in one), modules and the names made from
 * them.  With a time, what records told of the new image (drained before
 * its exec's) stays: its regions, and the pins naming them; the modules
 * are built again from those at the next names_sync_mods.  The pid lives
 * (it just exec'd), even if it was thought gone. */
void
names_drop_image(struct names_proc *p, uint64_t time)
{
	if (time)
		(void)maps_drop_before(p->maps, time);
	else if (maps_load_text(p->maps, "", 0) < 0)
		return;		/* ENOMEM: try again at the next call */
	names_proc_clear(p);
	names_keep_pins_from(p, time);
	/* Modules from the regions left, if any. */
	p->maps_gen_seen = maps_generation(p->maps);
	p->mods_pending = maps_count(p->maps) > 0;
	p->exec = false;
	p->mods_gen++;
	p->loaded = maps_count(p->maps) > 0;
	p->gone = false;
}

void
names_forget(struct names *n, int32_t pid, uint64_t time)
{
	struct names_proc *p = names_find(n, pid);

	names_alive(n, pid);
	/* With records and a time, kept even when not known yet: the old
	 * image's records that come after this one are told by it. */
	if (!p && n->records && time)
		p = names_proc(n, pid);
	if (p) {
		n->stats.execs++;
		p->exec = true;
		p->due = true;
		/* Records rebuild the new image from now on: the old one
		 * goes before the first of them is taken (and what they
		 * told already, from another CPU's ring, stays). */
		if (n->records) {
			if (time > p->exec_time)
				p->exec_time = time;
			if (time > p->rec_time)
				p->rec_time = time;
			names_drop_image(p, time);
		}
		n->any_due = true;
		return;
	}
	/* Not known here: nothing of the old image to drop. */
}

void
names_exit(struct names *n, int32_t pid)
{
	struct names_proc *p = names_find(n, pid);

	if (p) {
		/* Keeps what it had; /proc has nothing more. */
		p->gone = true;
		p->due = false;
	}
}

const struct names_build_id *
names_build_id_of(const struct names *n, const char *path)
{
	if (!path)
		return NULL;
	for (size_t i = 0; i < n->n_build_ids; i++)
		if (strcmp(n->build_ids[i].path, path) == 0)
			return &n->build_ids[i];
	return NULL;
}

int
names_add_build_id(struct names *n, const char *path, const uint8_t *id,
		   size_t size)
{
	struct names_build_id *b;

	if (size == 0 || size > sizeof(b->id) || names_build_id_of(n, path))
		return 0;
	b = realloc(n->build_ids, (n->n_build_ids + 1) * sizeof(*b));
	if (!b)
		return -ENOMEM;
	n->build_ids = b;
	b = &b[n->n_build_ids];
	b->path = strdup(path);
	if (!b->path)
		return -ENOMEM;
	memcpy(b->id, id, size);
	b->size = (uint8_t)size;
	n->n_build_ids++;
	return 0;
}
