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

/* Pages named since the pid's regions changed; past this the page cache
 * starts over rather than grow without bound. */
#define NAMES_MAX_CACHED_PAGES 65536

/* Keys of functions without a symbol: the region's start with this bit,
 * which no user-space address has. */
#define NAMES_UNKNOWN_FUNC (1ull << 63)

/* A mapped ELF file (or a file that is not one, file == NULL, kept so it
 * is not opened again) at its place in the process. */
struct names_module {
	uint64_t lo, hi;	/* absolute addresses covered */
	uint64_t bias;		/* absolute = file vaddr + bias */
	struct symbols_file *file;
	uint64_t map_start;	/* the mapping it was found at */
	uint64_t inode;
	char *path;
};

struct names_page {
	uint64_t maps_gen;
	uint64_t mods_gen;
	uint64_t hot;
	char *region;
	char *symbol;
};

struct names_proc {
	int32_t pid;
	struct maps *maps;
	struct names_module *mods;	/* sorted by lo */
	size_t n_mods;
	uint64_t maps_gen_seen;		/* modules built from this */
	uint64_t mods_gen;		/* bumps when modules change */
	struct u64map ips;		/* ip -> struct names_code */
	struct u64map funcs;		/* start -> struct names_func */
	struct u64map pages;		/* addr | shift -> names_page */
	double last_read;		/* last successful maps read */
	double last_try;
	uint64_t used;			/* LRU tick */
	bool loaded;
	bool due;
	bool gone;			/* exited: keep what it had */
	bool fixed;			/* regions from text, never /proc */
	bool exec;			/* exec'd: drop the old image */
};

struct names {
	struct symbols *symbols;
	struct names_proc **procs;
	size_t n_procs;
	struct names_proc *last;	/* most recent lookup */
	uint64_t tick;
	bool any_due;
	/* Immediate re-reads after exec in the second from exec_window. */
	double exec_window;
	unsigned exec_reads;
	struct names_stats stats;
};


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

static void
names_free_code(void *v)
{
	struct names_code *c = v;

	free(c->site);
	free(c);
}

static void
names_free_func(void *v)
{
	struct names_func *f = v;

	free(f->name);
	free(f->module);
	free(f);
}

static void
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

/* Frees p's modules and the names made from them; p stays usable. */
static void
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
	symbols_free(n->symbols);
	free(n);
}

/* The state of pid, created (without system calls) when absent; the
 * least recently used process makes room past NAMES_MAX_PROCS. */
static struct names_proc *
names_proc(struct names *n, int32_t pid)
{
	struct names_proc *p = n->last, **np;
	size_t lru = 0;

	if (p && p->pid == pid)
		goto out;
	for (size_t i = 0; i < n->n_procs; i++) {
		if (n->procs[i]->pid == pid) {
			p = n->procs[i];
			goto out;
		}
		if (n->procs[i]->used < n->procs[lru]->used)
			lru = i;
	}
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
	p->due = true;
	n->any_due = true;
out:
	p->used = ++n->tick;
	n->last = p;
	return p;
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
		if (p->mods[i].map_start == r->start &&
		    p->mods[i].inode == r->inode && p->mods[i].path &&
		    strcmp(p->mods[i].path, r->path) == 0)
			return &p->mods[i];
	return NULL;
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

	if (!mods)
		return;
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
		m->file = symbols_open(n->symbols, p->pid, r, &err);
		if (m->file && symbols_bias(m->file, r, &m->bias) == 0) {
			symbols_extent(m->file, &lo, &hi);
			m->lo = lo + m->bias;
			m->hi = hi + m->bias;
			n->stats.elf_files++;
		} else {
			if (err != -ENOEXEC && !m->file)
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
	int ret;

	p->last_try = now;
	p->due = false;
	if (p->fixed || p->gone)
		return;
	ret = maps_refresh(p->maps);
	if (ret < 0) {
		n->stats.maps_failures++;
		if (ret == -ENOENT || ret == -ESRCH)
			p->gone = true;
		return;
	}
	n->stats.maps_reads++;
	p->loaded = true;
	p->last_read = now;
	if (maps_generation(p->maps) != p->maps_gen_seen)
		names_build_mods(n, p);
}

/* Everything known of the old image goes: its regions (an address of
 * the new image must not fall in one), modules and the names made from
 * them.  The pid lives (it just exec'd), even if it was thought gone. */
static void
names_drop_image(struct names_proc *p)
{
	if (maps_load_text(p->maps, "", 0) < 0)
		return;		/* ENOMEM: try again at the next call */
	p->exec = false;
	names_proc_clear(p);
	p->maps_gen_seen = maps_generation(p->maps);
	p->mods_gen++;
	p->loaded = false;
	p->gone = false;
}

/* Drops the old image of an exec'd pid.  True when its maps may be read
 * now, sooner than NAMES_RETRY_MS: within the exec budget. */
static bool
names_exec_read_now(struct names *n, struct names_proc *p, double now)
{
	if (!p->exec)
		return false;
	names_drop_image(p);
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
names_forget(struct names *n, int32_t pid)
{
	for (size_t i = 0; i < n->n_procs; i++) {
		struct names_proc *p = n->procs[i];

		if (p->pid != pid)
			continue;
		n->stats.execs++;
		p->exec = true;
		p->due = true;
		n->any_due = true;
		return;
	}
	/* Not known here: nothing of the old image to drop. */
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
names_refresh_due(struct names *n)
{
	bool still = false;
	double now;

	if (!n->any_due)
		return;
	now = base_now_s();
	for (size_t i = 0; i < n->n_procs; i++) {
		struct names_proc *p = n->procs[i];

		if (!p->due)
			continue;
		if (names_exec_read_now(n, p, now) ||
		    now - p->last_try >= NAMES_RETRY_MS / 1000.0)
			names_refresh(n, p, now);
		else
			still = true;
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
	if (p->gone || p->fixed)
		return;
	if (now - p->last_try < NAMES_RETRY_MS / 1000.0)
		return;
	if (p->due || !p->loaded ||
	    now - p->last_read >= NAMES_REFRESH_MS / 1000.0)
		names_refresh(n, p, now);
}

static const struct names_module *
names_module_at(const struct names_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n_mods;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->mods[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back over modules that start below addr but end before it
	 * (a small non-ELF mapping inside a module's span). */
	while (lo-- > 0)
		if (addr < p->mods[lo].hi && p->mods[lo].file)
			return &p->mods[lo];
	return NULL;
}

static char *
names_data_symbol(const struct names_proc *p, uint64_t addr)
{
	const struct names_module *m = names_module_at(p, addr);
	const char *sym;
	char *out;
	uint64_t off;

	if (!m)
		return NULL;
	sym = symbols_object(m->file, addr - m->bias, &off);
	if (!sym || asprintf(&out, "%s+0x%" PRIx64, sym, off) < 0)
		return NULL;
	return out;
}

static char *
names_region(const struct names_proc *p, uint64_t addr, uint64_t size)
{
	const struct maps_region *r = maps_lookup(p->maps, addr);
	uint64_t at = addr;
	char buf[4200];

	if (!r) {
		r = maps_first_in(p->maps, addr, addr + size);
		if (!r)
			return NULL;
		at = r->start;
	}
	maps_region_name(r, at, buf, sizeof(buf));
	return strdup(buf);
}

void
names_page(struct names *n, int32_t pid, uint64_t addr, uint64_t size,
	   uint64_t hot, char **region, char **symbol)
{
	struct names_proc *p = names_proc(n, pid);
	unsigned shift = (unsigned)__builtin_ctzll(size ? size : 4096);
	uint64_t key = addr | shift;
	struct names_page *c;

	*region = *symbol = NULL;
	if (!p)
		return;
	c = u64map_get(&p->pages, key);
	if (!c || c->maps_gen != maps_generation(p->maps) ||
	    c->mods_gen != p->mods_gen || c->hot != hot) {
		if (!c) {
			if (u64map_count(&p->pages) >= NAMES_MAX_CACHED_PAGES)
				u64map_clear(&p->pages, names_free_page);
			c = calloc(1, sizeof(*c));
			if (!c)
				return;
			if (u64map_put(&p->pages, key, c) == c) {
				free(c);
				return;
			}
		}
		free(c->region);
		free(c->symbol);
		c->maps_gen = maps_generation(p->maps);
		c->mods_gen = p->mods_gen;
		c->hot = hot;
		c->region = names_region(p, addr, size);
		c->symbol = names_data_symbol(p, addr);
		if (!c->symbol && hot != addr && hot - addr < size)
			c->symbol = names_data_symbol(p, hot);
	}
	*region = c->region ? strdup(c->region) : NULL;
	*symbol = c->symbol ? strdup(c->symbol) : NULL;
}

/* The interned function at key, created with name and module. */
static const struct names_func *
names_intern(struct names_proc *p, uint64_t key, const char *name,
	     const char *module)
{
	struct names_func *f = u64map_get(&p->funcs, key);

	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->name = name ? strdup(name) : NULL;
	f->module = strdup(module);
	if ((name && !f->name) || !f->module ||
	    u64map_put(&p->funcs, key, f) == f) {
		names_free_func(f);
		return NULL;
	}
	return f;
}

static bool
names_resolve_code(struct names_proc *p, uint64_t ip, struct names_code *c)
{
	const struct names_module *m = names_module_at(p, ip);
	const struct maps_region *r;
	const char *fn = NULL;
	uint64_t off = 0, start = 0;
	char buf[4200];

	if (m)
		fn = symbols_function(m->file, ip - m->bias, &off, &start);
	if (fn) {
		if (asprintf(&c->site, "%s+0x%" PRIx64, fn, off) < 0) {
			c->site = NULL;
			return false;
		}
		c->func = names_intern(p, start + m->bias, fn, m->path);
		return c->func != NULL;
	}
	/* No symbol: one entry per module or region ("?" in the view). */
	if (m) {
		c->func = names_intern(p, NAMES_UNKNOWN_FUNC | m->lo, NULL,
				       m->path);
		return c->func != NULL;
	}
	r = maps_lookup(p->maps, ip);
	if (r)
		maps_region_name(r, r->start, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "[unknown]");
	/* A file region's name carries its offset; the module is the file. */
	if (r && r->kind == MAPS_FILE)
		snprintf(buf, sizeof(buf), "%s", r->path);
	c->func = names_intern(p, NAMES_UNKNOWN_FUNC | (r ? r->start : 0),
			       NULL, buf);
	return c->func != NULL;
}

const struct names_code *
names_code(struct names *n, int32_t pid, uint64_t ip)
{
	struct names_proc *p = names_proc(n, pid);
	struct names_code *c;

	if (!p)
		return NULL;
	c = u64map_get(&p->ips, ip);
	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (!names_resolve_code(p, ip, c) || u64map_put(&p->ips, ip, c) == c) {
		names_free_code(c);
		return NULL;
	}
	return c;
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
	if (maps_generation(p->maps) != p->maps_gen_seen)
		names_build_mods(n, p);
	return 0;
}

void
names_stats(const struct names *n, struct names_stats *out)
{
	*out = n->stats;
}
