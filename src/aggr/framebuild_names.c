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

void
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

/*
 * The bar for reading maps between frames (aggr.h) lowered to the code
 * view's least function: a process with fewer samples than the least
 * shown page can still place a function there, and a short-lived one
 * must be read while it lives for that function to be named.  With the
 * view not full, any process can place one: the bar is 0.  The view's
 * samples are this interval's, as the bar's are (0 when sorted by
 * total: framebuild.c).
 */
static void
framebuild_names_code_bar(const struct frame *f, struct aggr *a)
{
	if (a->names_bar == 0)
		return;
	if (f->n_code_sites < FRAME_CODE_SITES) {
		a->names_bar = 0;
		return;
	}
	for (size_t i = 0; i < f->n_code_sites; i++)
		if (f->code_sites[i].samples < a->names_bar)
			a->names_bar = f->code_sites[i].samples;
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
	if (s->names) {
		framebuild_code(f, s, &pids);
		framebuild_names_code_bar(f, a);
	}
	codetab_counts(s->code, &interval, &cumulative);
	f->code_unknown = interval.unknown;
	f->code_untracked = interval.untracked;
	f->sites_evicted = sitetab_evicted(s->sites);
	f->levels_evicted = levtab_evicted(s->levels);
	if (s->names) {
		struct names_stats st;

		names_stats(s->names, &st);
		f->names_mismatched = st.mismatched;
		f->names_maps_failed = st.maps_failures;
		f->names_helper_failed = st.helper_files_failed;
		f->names_maps_skipped = st.maps_skipped;
		f->names_pins_dropped = st.pins_dropped;
		f->names_stale_mmaps = st.mmaps_before_exec;
	}
	u64map_clear(&pids.seen, NULL);
}
