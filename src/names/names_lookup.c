/*
 * Looking names up: a data page's region and symbol, a code address's
 * site and function, each cached per process (names_int.h) until the
 * process's maps or modules change.  Collector thread only.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"
#include "names.h"
#include "names_int.h"
#include "symbols.h"
#include "u64map.h"

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
	maps_region_name_in(p->maps, r, at, buf, sizeof(buf));
	return strdup(buf);
}

/* The page cache's (and the pins') key of [addr, addr + size). */
static uint64_t
names_page_key(uint64_t addr, uint64_t size)
{
	return addr | (unsigned)__builtin_ctzll(size ? size : 4096);
}

/* The cached names of page key, named again when the regions, modules
 * or hot address changed since; NULL on ENOMEM. */
static struct names_page *
names_page_cached(struct names_proc *p, uint64_t key, uint64_t addr,
		  uint64_t size, uint64_t hot)
{
	struct names_page *c = u64map_get(&p->pages, key);

	if (c && c->maps_gen == maps_generation(p->maps) &&
	    c->mods_gen == p->mods_gen && c->hot == hot)
		return c;
	if (!c) {
		if (u64map_count(&p->pages) >= NAMES_MAX_CACHED_PAGES)
			u64map_clear(&p->pages, names_free_page);
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		if (u64map_put(&p->pages, key, c) == c) {
			free(c);
			return NULL;
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
	return c;
}

void
names_page(struct names *n, int32_t pid, uint64_t addr, uint64_t size,
	   uint64_t hot, char **region, char **symbol)
{
	struct names_proc *p = names_proc(n, pid);
	uint64_t key = names_page_key(addr, size);
	struct names_page *c;

	*region = *symbol = NULL;
	if (!p)
		return;
	/* A pinned page keeps the names of the mapping it was counted in. */
	c = u64map_get(&p->pinned, key);
	if (!c)
		c = names_page_cached(p, key, addr, size, hot);
	if (!c)
		return;
	*region = c->region ? strdup(c->region) : NULL;
	*symbol = c->symbol ? strdup(c->symbol) : NULL;
}

void
names_pin_page(struct names *n, int32_t pid, uint64_t addr, uint64_t size)
{
	struct names_proc *p = names_find(n, pid);
	uint64_t key = names_page_key(addr, size);
	const struct maps_region *r;
	struct names_page *c;

	if (!p || u64map_get(&p->pinned, key))
		return;
	if (u64map_count(&p->pinned) >= NAMES_MAX_PINNED) {
		n->stats.pins_dropped++;
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		n->stats.pins_dropped++;
		return;
	}
	c->region = names_region(p, addr, size);
	c->symbol = names_data_symbol(p, addr);
	r = maps_lookup(p->maps, addr);
	c->time = r ? r->time : 0;	/* the pin goes with its region */
	if (u64map_put(&p->pinned, key, c) == c) {
		names_free_page(c);
		n->stats.pins_dropped++;
		return;
	}
	n->stats.pinned++;
}

void
names_unpin_all(struct names *n)
{
	for (size_t i = 0; n && i < n->n_procs; i++)
		u64map_clear(&n->procs[i]->pinned, names_free_page);
}

void
names_pins_skipped(struct names *n)
{
	if (n)
		n->stats.pins_dropped++;
}

void
names_on_cover(struct names *n, names_cover_fn fn, void *ctx)
{
	n->cover = fn;
	n->cover_ctx = ctx;
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
