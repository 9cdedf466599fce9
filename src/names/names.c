/* Collector thread only.  See names.h. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base.h"
#include "maps.h"
#include "names.h"
#include "symbols.h"
#include "u64map.h"

#include "names_int.h"

struct names *
names_new(void)
{
	struct names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->symbols = symbols_new();
	if (!n->symbols) {
		free(n);
		return NULL;
	}
	return n;
}

void
names_no_files(struct names *n)
{
	n->no_files = true;
}

void
names_start_helper(struct names *n)
{
	symbols_helper_start(n->symbols);
}

void
names_free_code(void *v)
{
	struct names_code *c = v;

	free(c->site);
	free(c);
}

void
names_free_func(void *v)
{
	struct names_func *f = v;

	free(f->name);
	free(f->module);
	free(f);
}

void
names_free_page(void *v)
{
	struct names_page *p = v;

	free(p->region);
	free(p->symbol);
	free(p);
}

static void
names_free_mods(struct names_module *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].path);
	free(m);
}

void
names_proc_clear(struct names_proc *p)
{
	names_free_mods(p->mods, p->n_mods);
	p->mods = NULL;
	p->n_mods = 0;
	u64map_clear(&p->ips, names_free_code);
	u64map_clear(&p->funcs, names_free_func);
	u64map_clear(&p->pages, names_free_page);
}

static void
names_proc_free(struct names_proc *p)
{
	if (!p)
		return;
	maps_free(p->maps);
	names_proc_clear(p);
	u64map_clear(&p->pinned, names_free_page);
	free(p);
}

void
names_free(struct names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n_procs; i++)
		names_proc_free(n->procs[i]);
	free(n->procs);
	free(n->failed);
	for (size_t i = 0; i < n->n_build_ids; i++)
		free(n->build_ids[i].path);
	free(n->build_ids);
	symbols_free(n->symbols);
	free(n);
}

static size_t
names_hash(int32_t pid)
{
	return ((uint32_t)pid * UINT32_C(0x9e3779b1)) >> 16 & (NAMES_HASH - 1);
}

struct names_proc *
names_find(const struct names *n, int32_t pid)
{
	struct names_proc *p = n->last;

	if (p && p->pid == pid)
		return p;
	for (p = n->hash[names_hash(pid)]; p; p = p->hnext)
		if (p->pid == pid)
			return p;
	return NULL;
}

static void
names_unhash(struct names *n, const struct names_proc *p)
{
	struct names_proc **pp = &n->hash[names_hash(p->pid)];

	while (*pp && *pp != p)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = p->hnext;
	if (n->last == p)
		n->last = NULL;
}

/* The slot of the least recently used process (the cache is full). */
static size_t
names_lru(const struct names *n)
{
	size_t lru = 0;

	for (size_t i = 1; i < n->n_procs; i++)
		if (n->procs[i]->used < n->procs[lru]->used)
			lru = i;
	return lru;
}

/* The state of pid, created (without system calls) when absent; the
 * least recently used process makes room past NAMES_MAX_PROCS.  Found by
 * hash: a whole machine asks for thousands of pids a frame. */
struct names_proc *
names_proc(struct names *n, int32_t pid)
{
	struct names_proc *p = names_find(n, pid), **np;

	if (p)
		goto out;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->maps = maps_new(pid);
	if (!p->maps) {
		free(p);
		return NULL;
	}
	if (n->n_procs == NAMES_MAX_PROCS) {
		size_t lru = names_lru(n);

		names_unhash(n, n->procs[lru]);
		names_proc_free(n->procs[lru]);
		n->procs[lru] = p;
	} else {
		np = realloc(n->procs, (n->n_procs + 1) * sizeof(*np));
		if (!np) {
			names_proc_free(p);
			return NULL;
		}
		n->procs = np;
		n->procs[n->n_procs++] = p;
	}
	p->hnext = n->hash[names_hash(pid)];
	n->hash[names_hash(pid)] = p;
	p->due = true;
	n->any_due = true;
out:
	p->used = ++n->tick;
	n->last = p;
	return p;
}

/* The remembered failure of pid, or NULL. */
static struct names_failed *
names_failed_of(const struct names *n, int32_t pid)
{
	struct names_failed *f;

	if (!n->failed)
		return NULL;
	f = &n->failed[((uint32_t)pid * UINT32_C(0x9e3779b1)) >> 8 &
		       (NAMES_FAILED_SLOTS - 1)];
	return f->pid == pid ? f : NULL;
}

static void
names_failed_note(struct names *n, int32_t pid, bool gone, double now)
{
	struct names_failed *f;

	if (!n->failed)
		n->failed = calloc(NAMES_FAILED_SLOTS, sizeof(*n->failed));
	if (!n->failed)
		return;		/* ENOMEM: read again next time */
	f = &n->failed[((uint32_t)pid * UINT32_C(0x9e3779b1)) >> 8 &
		       (NAMES_FAILED_SLOTS - 1)];
	f->pid = pid;
	f->gone = gone;
	f->until = now + NAMES_FAILED_MS / 1000.0;
}

void
names_alive(struct names *n, int32_t pid)
{
	struct names_failed *f = names_failed_of(n, pid);

	if (f)
		f->pid = 0;
}

static int
names_cmp_mod(const void *a, const void *b)
{
	const struct names_module *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The module of the process found at mapping r before, or NULL. */
static struct names_module *
names_old_mod(struct names_proc *p, const struct maps_region *r)
{
	for (size_t i = 0; i < p->n_mods; i++)
		if (p->mods[i].map_start == r->start && !p->mods[i].pending &&
		    p->mods[i].inode == r->inode && p->mods[i].path &&
		    strcmp(p->mods[i].path, r->path) == 0)
			return &p->mods[i];
	return NULL;
}

/*
 * The ELF file of mapping r: through /proc while p may live, else by its
 * path (offline, or gone), checked against the build id the record or the
 * capture gives (names.h).
 */
static struct symbols_file *
names_open_file(struct names *n, const struct names_proc *p,
		const struct maps_region *r, int *err)
{
	const struct names_build_id *b;
	struct maps_region with;

	if (n->no_files) {
		*err = -ENOENT;
		return NULL;
	}
	if (r->build_id_size || !(b = names_build_id_of(n, r->path)))
		return symbols_open(n->symbols, n->offline ? 0 : p->pid, r,
				    err);
	with = *r;
	memcpy(with.build_id, b->id, b->size);
	with.build_id_size = b->size;
	return symbols_open(n->symbols, n->offline ? 0 : p->pid, &with, err);
}

/* The calling thread's CPU time, s: what opening files costs memtop,
 * however loaded the machine. */
static double
names_cpu_s(void)
{
	return (double)base_clock_ns(CLOCK_THREAD_CPUTIME_ID) / 1e9;
}

/* Whether an ELF file may be opened now (NAMES_ELF_MS_PER_S); *cpu gets
 * the thread's CPU time to measure the opening from. */
static bool
names_elf_budget(struct names *n, double *cpu)
{
	double now = base_now_s();

	if (now - n->elf_window >= 1.0) {
		n->elf_window = now;
		n->elf_spent = 0;
	}
	*cpu = names_cpu_s();
	return n->elf_spent < NAMES_ELF_MS_PER_S / 1000.0;
}

/*
 * One module per file mapping at file offset 0 (where every ELF's first
 * segment is mapped).  Modules seen before are kept; new ones are opened
 * now, while the process lives.
 */
static void
names_build_mods(struct names *n, struct names_proc *p)
{
	size_t count = maps_count(p->maps), k = 0, reused = 0;
	struct names_module *mods = calloc(count ? count : 1, sizeof(*mods));
	double t0;

	if (!mods)
		return;
	p->mods_pending = false;
	for (size_t i = 0; i < count; i++) {
		const struct maps_region *r = maps_at(p->maps, i);
		struct names_module *old, *m = &mods[k];
		uint64_t lo, hi;
		int err;

		if (r->kind != MAPS_FILE || r->pgoff != 0 || !r->path)
			continue;
		old = names_old_mod(p, r);
		if (old) {
			*m = *old;
			old->path = NULL;	/* moved */
			k++;
			reused++;
			continue;
		}
		m->path = strdup(r->path);
		if (!m->path)
			continue;
		m->map_start = r->start;
		m->inode = r->inode;
		m->lo = r->start;
		m->hi = r->end;
		if (!names_elf_budget(n, &t0)) {
			m->pending = true;
			p->mods_pending = true;
			n->stats.elf_deferred++;
			k++;
			continue;
		}
		m->file = names_open_file(n, p, r, &err);
		n->elf_spent += names_cpu_s() - t0;
		if (m->file && symbols_bias(m->file, r, &m->bias) == 0) {
			symbols_extent(m->file, &lo, &hi);
			m->lo = lo + m->bias;
			m->hi = hi + m->bias;
			n->stats.elf_files++;
		} else {
			if (err == -ESTALE)
				n->stats.mismatched++;
			else if (err != -ENOEXEC && !m->file)
				n->stats.elf_failures++;
			m->file = NULL;
		}
		k++;
	}
	qsort(mods, k, sizeof(*mods), names_cmp_mod);
	if (reused != p->n_mods || reused != k) {
		/* Addresses may mean other code now. */
		p->mods_gen++;
		u64map_clear(&p->ips, names_free_code);
		u64map_clear(&p->funcs, names_free_func);
	}
	names_free_mods(p->mods, p->n_mods);
	p->mods = mods;
	p->n_mods = k;
	p->maps_gen_seen = maps_generation(p->maps);
}

static void
names_refresh(struct names *n, struct names_proc *p, double now)
{
	struct names_failed *f;
	int ret;

	p->last_try = now;
	p->due = false;
	if (p->fixed || p->gone || n->offline)
		return;
	f = names_failed_of(n, p->pid);
	if (f && now < f->until) {
		/* Failed lately: not opened again (a whole machine's dead or
		 * unreadable pids would cost an open each, every frame). */
		n->stats.maps_skipped++;
		p->gone = f->gone;
		return;
	}
	ret = n->records ? maps_refresh_gaps(p->maps) : maps_refresh(p->maps);
	if (ret < 0) {
		n->stats.maps_failures++;
		if (ret == -ENOENT || ret == -ESRCH)
			p->gone = true;
		names_failed_note(n, p->pid, p->gone, now);
		return;
	}
	if (f)
		f->pid = 0;
	n->stats.maps_reads++;
	p->loaded = true;
	p->last_read = now;
	names_sync_mods(n, p);
}

/* Drops the old image of an exec'd pid.  True when its maps may be read
 * now, sooner than NAMES_RETRY_MS: within the exec budget. */
static bool
names_exec_read_now(struct names *n, struct names_proc *p, double now)
{
	if (!p->exec)
		return false;
	names_drop_image(p, 0);
	if (p->fixed || p->exec)
		return false;
	if (now - n->exec_window >= 1.0) {
		n->exec_window = now;
		n->exec_reads = 0;
	}
	if (n->exec_reads < NAMES_EXEC_READS) {
		n->exec_reads++;
		return true;
	}
	n->stats.exec_reads_deferred++;
	return false;
}

void
names_note_page(struct names *n, int32_t pid, uint64_t addr)
{
	struct names_proc *p = names_proc(n, pid);

	if (!p || p->gone || p->fixed || p->due)
		return;
	if (!maps_lookup(p->maps, addr)) {
		p->due = true;
		n->any_due = true;
	}
}

void
names_refresh_due(struct names *n, bool (*want)(void *ctx, int32_t pid),
		  void *ctx)
{
	bool still = false;
	unsigned reads = 0;
	double now;

	if (!n->any_due)
		return;
	now = base_now_s();
	for (size_t i = 0; i < n->n_procs; i++) {
		struct names_proc *p = n->procs[i];

		if (!p->due)
			continue;
		if (want && !want(ctx, p->pid)) {
			still = true;
			continue;
		}
		if (reads < NAMES_DUE_READS &&
		    (names_exec_read_now(n, p, now) ||
		     now - p->last_try >= NAMES_RETRY_MS / 1000.0)) {
			names_refresh(n, p, now);
			reads++;
		} else {
			still = true;
		}
	}
	n->any_due = still;
}

void
names_prepare(struct names *n, int32_t pid)
{
	struct names_proc *p = names_proc(n, pid);
	double now;

	if (!p)
		return;
	now = base_now_s();
	if (names_exec_read_now(n, p, now)) {
		names_refresh(n, p, now);
		return;
	}
	names_sync_mods(n, p);
	if (p->gone || p->fixed || n->offline)
		return;
	if (now - p->last_try < NAMES_RETRY_MS / 1000.0)
		return;
	if (p->due || !p->loaded ||
	    now - p->last_read >= NAMES_REFRESH_MS / 1000.0)
		names_refresh(n, p, now);
}

int
names_load_maps_text(struct names *n, int32_t pid, const char *text,
		     size_t len)
{
	struct names_proc *p = names_proc(n, pid);
	int ret;

	if (!p)
		return -ENOMEM;
	ret = maps_load_text(p->maps, text, len);
	if (ret < 0)
		return ret;
	p->fixed = true;
	p->loaded = true;
	p->due = false;
	names_sync_mods(n, p);
	return 0;
}

void
names_sync_mods(struct names *n, struct names_proc *p)
{
	if (maps_generation(p->maps) != p->maps_gen_seen || p->mods_pending)
		names_build_mods(n, p);
}

void
names_stats(const struct names *n, struct names_stats *out)
{
	struct symbols_helper h;

	*out = n->stats;
	symbols_helper_stats(n->symbols, &h);
	out->helper_failures = h.failures;
	out->helper_files_failed = h.files_failed;
}
