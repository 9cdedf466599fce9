/* Collector thread only.  See framebuild_names.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "codetab.h"
#include "frame.h"
#include "framebuild_names.h"
#include "levtab.h"
#include "linetab.h"
#include "names.h"
#include "pagetab.h"
#include "sides.h"
#include "sitetab.h"
#include "u64map.h"

/* Distinct pids of one frame, each prepared (maps re-read) once: a hash
 * set, as a whole machine has thousands. */
struct framebuild_pids {
	struct u64map seen;
};

static void
framebuild_names_prepare(struct framebuild_pids *p, struct names *names,
			 int32_t pid)
{
	uint64_t key = (uint32_t)pid;

	if (u64map_get(&p->seen, key))
		return;
	u64map_put(&p->seen, key, p);	/* on ENOMEM: prepared again */
	names_prepare(names, pid);
}

/* The address of the page's most-sampled line, or addr without heat. */
static uint64_t
framebuild_names_hot(const struct frame_page *p)
{
	size_t best = 0;

	if (!p->lines)
		return p->addr;
	for (size_t i = 1; i < FRAME_LINES; i++)
		if (p->lines[i] > p->lines[best])
			best = i;
	return p->addr + best * (p->size / FRAME_LINES);
}

static void
framebuild_names_sites(struct frame_page *p, struct sides *s,
		       unsigned shift)
{
	struct sitetab_site sites[SITETAB_SITES];
	size_t n = sitetab_get(s->sites, p->pid, p->addr >> shift, sites);
	uint64_t shown = 0;

	p->sites_other = p->total;
	if (n == 0)
		return;
	p->sites = calloc(n, sizeof(*p->sites));
	if (!p->sites)
		return;
	for (size_t i = 0; i < n && i < FRAME_SITES; i++) {
		const struct names_code *c = s->names ?
			names_code(s->names, p->pid, sites[i].ip) : NULL;

		p->sites[i].ip = sites[i].ip;
		p->sites[i].samples = sites[i].count;
		p->sites[i].symbol = c && c->site ? strdup(c->site) : NULL;
		p->sites[i].caller = callers_get(&s->callers, p->pid,
						 sites[i].ip);
		c = s->names && p->sites[i].caller ?
		    names_code(s->names, p->pid, p->sites[i].caller) : NULL;
		p->sites[i].caller_symbol = c && c->site ? strdup(c->site) :
					    NULL;
		shown += sites[i].count;
		p->n_sites++;
	}
	/* Slot counts never exceed the page's samples; guard anyway. */
	p->sites_other = p->total > shown ? p->total - shown : 0;
}

static void
framebuild_names_lines(struct frame_page *p, struct sides *s)
{
	uint32_t lines[LINETAB_LINES];

	if (!linetab_get(s->lines, p->pid, p->addr >> s->page_shift, lines))
		return;
	p->lines = malloc(sizeof(lines));
	if (p->lines)
		memcpy(p->lines, lines, sizeof(lines));
}

/*
 * One function of the code view while it is being summed.  name and module
 * are our copies: a names_func pointer is only valid until names evicts its
 * process (more than NAMES_MAX_PROCS processes in one frame), after which
 * the same address may be reused for another function; the copies outlive
 * that and tell such a reused pointer apart.
 */
struct framebuild_func {
	int32_t pid;
	char *name;
	char *module;
	uint64_t samples;
	uint64_t total;
};

static bool
framebuild_streq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

struct framebuild_code {
	struct names *names;
	struct framebuild_pids *pids;
	struct framebuild_func *f;
	size_t n, cap;
	struct u64map index;	/* names_func pointer -> index + 1 */
	bool by_total;
};

/*
 * Adds one ip's samples to its function.  Functions are interned per
 * process, so the pointer alone identifies (pid, function).  The caller
 * has prepared pid's maps (framebuild_names_prepare) before any of its
 * ips is named, and not again in this frame, so its functions stay put
 * while they are summed.
 */
static void
framebuild_code_add(struct framebuild_code *c, int32_t pid, uint64_t ip,
		    uint64_t samples, uint64_t total)
{
	const struct names_code *nc = names_code(c->names, pid, ip);
	struct framebuild_func *f, *nf;
	uintptr_t idx;

	if (!nc)
		return;
	idx = (uintptr_t)u64map_get(&c->index, (uintptr_t)nc->func);
	if (idx && (c->f[idx - 1].pid != pid ||
		    !framebuild_streq(c->f[idx - 1].name, nc->func->name) ||
		    !framebuild_streq(c->f[idx - 1].module,
				      nc->func->module)))
		idx = 0;	/* a freed names_func's address, reused */
	if (idx) {
		f = &c->f[idx - 1];
	} else {
		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 64;

			nf = realloc(c->f, cap * sizeof(*nf));
			if (!nf)
				return;
			c->f = nf;
			c->cap = cap;
		}
		/* Replaces a stale entry; returns the value itself only on
		 * ENOMEM. */
		if (u64map_put(&c->index, (uintptr_t)nc->func,
			       (void *)(uintptr_t)(c->n + 1)) ==
		    (void *)(uintptr_t)(c->n + 1))
			return;
		f = &c->f[c->n++];
		memset(f, 0, sizeof(*f));
		f->pid = pid;
		f->name = nc->func->name ? strdup(nc->func->name) : NULL;
		f->module = nc->func->module ? strdup(nc->func->module) : NULL;
	}
	f->samples += samples;
	f->total += total;
}

/* framebuild_code_add for one code table entry, in the table's order
 * (one pass over a table of megabytes, mostly empty slots): a pid's maps
 * are prepared the first time one of its ips comes. */
static void
framebuild_code_sum(const struct codetab_entry *e, uint64_t samples,
		    void *ctx)
{
	struct framebuild_code *c = ctx;

	framebuild_names_prepare(c->pids, c->names, e->pid);
	framebuild_code_add(c, e->pid, e->ip, samples, e->total);
}

/* The code table's entries, copied (the sort and the sums then read
 * them in order instead of one random line of the table each), to be
 * walked one process after another. */
struct framebuild_code_entry {
	uint64_t ip, samples, total;
	uint32_t key;		/* the pid, ordered as unsigned */
};

struct framebuild_code_list {
	struct framebuild_code_entry *v;
	size_t n, cap;
	bool failed;
};

static void
framebuild_code_collect(const struct codetab_entry *e, uint64_t samples,
			void *ctx)
{
	struct framebuild_code_list *l = ctx;
	struct framebuild_code_entry *v;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		void *nv = realloc(l->v, cap * sizeof(*l->v));

		if (!nv) {
			l->failed = true;
			return;
		}
		l->v = nv;
		l->cap = cap;
	}
	v = &l->v[l->n++];
	v->ip = e->ip;
	v->samples = samples;
	v->total = e->total;
	v->key = (uint32_t)e->pid ^ 0x80000000u;
}

/*
 * Sorts l by pid, entries of one pid in the table's order (a stable
 * sort): a radix sort of the key a byte at a time, least significant
 * first, each pass a stable counting sort; a byte that every key shares
 * (pids below 65536: the top two) costs no pass.  tmp holds l->n
 * entries.
 */
static void
framebuild_code_sort(struct framebuild_code_list *l,
		     struct framebuild_code_entry *tmp)
{
	struct framebuild_code_entry *src = l->v, *dst = tmp, *t;

	for (unsigned shift = 0; shift < 32; shift += 8) {
		size_t count[256] = { 0 }, at = 0;

		for (size_t i = 0; i < l->n; i++)
			count[(src[i].key >> shift) & 0xff]++;
		if (count[(src[0].key >> shift) & 0xff] == l->n)
			continue;
		for (size_t b = 0; b < 256; b++) {
			size_t c = count[b];

			count[b] = at;
			at += c;
		}
		for (size_t i = 0; i < l->n; i++)
			dst[count[(src[i].key >> shift) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != l->v)
		memcpy(l->v, src, l->n * sizeof(*src));
}

/*
 * framebuild_code_add over every entry, grouped by process: in the
 * table's own (hash) order the pids interleave, and on a whole machine
 * with more processes than the name cache holds (NAMES_MAX_PROCS) each
 * interleaved pid would evict another's names and read its maps again.
 */
static void
framebuild_code_by_pid(const struct codetab *t, struct framebuild_code *c)
{
	struct framebuild_code_list l = { 0 };
	struct framebuild_code_entry *tmp;

	codetab_foreach(t, framebuild_code_collect, &l);
	if (!l.failed && !l.n)
		return;
	tmp = l.failed ? NULL : malloc(l.n * sizeof(*tmp));
	if (!tmp) {
		/* Out of memory: in the table's order. */
		free(l.v);
		codetab_foreach(t, framebuild_code_sum, c);
		return;
	}
	framebuild_code_sort(&l, tmp);
	free(tmp);
	for (size_t i = 0; i < l.n; i++) {
		const struct framebuild_code_entry *v = &l.v[i];
		int32_t pid = (int32_t)(v->key ^ 0x80000000u);

		if (i == 0 || v->key != l.v[i - 1].key)
			framebuild_names_prepare(c->pids, c->names, pid);
		framebuild_code_add(c, pid, v->ip, v->samples, v->total);
	}
	free(l.v);
}

static bool
framebuild_code_better(const struct framebuild_func *a,
		       const struct framebuild_func *b, bool by_total)
{
	uint64_t ka = by_total ? a->total : a->samples;
	uint64_t kb = by_total ? b->total : b->samples;
	uint64_t ta = by_total ? a->samples : a->total;
	uint64_t tb = by_total ? b->samples : b->total;

	if (ka != kb)
		return ka > kb;
	if (ta != tb)
		return ta > tb;
	return a->pid < b->pid;
}

static void
framebuild_names_code(struct frame *f, struct sides *s,
		      struct framebuild_pids *pids)
{
	struct framebuild_code c = { .names = s->names, .pids = pids,
				     .by_total = f->sort == SORT_TOTAL };
	size_t k = 0;

	framebuild_code_by_pid(s->code, &c);
	/* Partial selection sort: k is at most FRAME_CODE_SITES. */
	for (; k < c.n && k < FRAME_CODE_SITES; k++) {
		size_t best = k;
		struct framebuild_func tmp;

		for (size_t i = k + 1; i < c.n; i++)
			if (framebuild_code_better(&c.f[i], &c.f[best],
						   c.by_total))
				best = i;
		tmp = c.f[k];
		c.f[k] = c.f[best];
		c.f[best] = tmp;
	}
	if (k) {
		f->code_sites = calloc(k, sizeof(*f->code_sites));
		for (size_t i = 0; f->code_sites && i < k; i++) {
			struct frame_code_site *cs = &f->code_sites[i];

			cs->pid = c.f[i].pid;
			cs->function = c.f[i].name;
			cs->module = c.f[i].module;
			c.f[i].name = c.f[i].module = NULL;
			cs->samples = c.f[i].samples;
			cs->total = c.f[i].total;
			f->n_code_sites++;
		}
	}
	for (size_t i = 0; i < c.n; i++) {
		free(c.f[i].name);
		free(c.f[i].module);
	}
	free(c.f);
	u64map_clear(&c.index, NULL);
}

_Static_assert(FRAME_LEVELS == DATASRC_LVL__COUNT,
	       "frame.h's FRAME_LEVELS must match enum datasrc_level");

static void
framebuild_names_levels(struct frame_page *p, const struct sides *s,
			unsigned shift)
{
	uint64_t n[FRAME_LEVELS];

	if (!levtab_page(s->levels, p->pid, p->addr >> shift, n))
		return;
	p->levels = malloc(sizeof(n));
	if (p->levels)
		memcpy(p->levels, n, sizeof(n));
}

void
framebuild_names(struct frame *f, struct aggr *a)
{
	struct sides *s = a->sides;
	unsigned shift = pagetab_page_shift(a->pages);
	struct framebuild_pids pids = { 0 };
	struct linetab_key keys[FRAME_LINES_PAGES];
	struct codetab_counts interval, cumulative;
	size_t n_keys = 0;

	f->granularity = 1u << shift;
	if (!s)
		return;
	for (size_t i = 0; s->names && i < f->n_pages; i++)
		framebuild_names_prepare(&pids, s->names, f->pages[i].pid);
	for (size_t i = 0; i < f->n_pages; i++) {
		struct frame_page *p = &f->pages[i];

		if (i < FRAME_LINES_PAGES) {
			framebuild_names_lines(p, s);
			keys[n_keys].pid = p->pid;
			keys[n_keys++].page = p->addr >> shift;
		}
		if (s->names)
			names_page(s->names, p->pid, p->addr, p->size,
				   framebuild_names_hot(p), &p->region,
				   &p->symbol);
		framebuild_names_sites(p, s, shift);
		framebuild_names_levels(p, s, shift);
	}
	levtab_interval(s->levels, f->levels);
	/* The pages shown first keep (or get) line counters from now on. */
	linetab_want(s->lines, keys, n_keys);
	/* Without names the code view has no functions to sum ips into. */
	if (s->names)
		framebuild_names_code(f, s, &pids);
	codetab_counts(s->code, &interval, &cumulative);
	f->code_unknown = interval.unknown;
	f->code_untracked = interval.untracked;
	f->sites_evicted = sitetab_evicted(s->sites);
	if (s->names) {
		struct names_stats st;

		names_stats(s->names, &st);
		f->names_mismatched = st.mismatched;
	}
	u64map_clear(&pids.seen, NULL);
}
