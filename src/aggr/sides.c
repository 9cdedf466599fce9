/* Collector thread only.  See sides.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "codetab.h"
#include "levtab.h"
#include "linetab.h"
#include "names.h"
#include "sides.h"
#include "sitetab.h"

/* The code-site and level tables' capacity: SIDES_SITE_PAGES, or room
 * for SIDES_ROOM times a smaller --max-pages, so that a working set the
 * page table holds whole seldom finds a 4-way set full (at 1/4 load a
 * set of 1000 pages' table overflows about 3 times, at full load about
 * a third of its pages are displaced again and again). */
static size_t
sides_site_pages(size_t max_pages)
{
	return max_pages && max_pages < SIDES_SITE_PAGES / SIDES_ROOM ?
	       max_pages * SIDES_ROOM : SIDES_SITE_PAGES;
}

struct sides *
sides_new(unsigned page_shift, size_t max_pages)
{
	struct sides *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->page_shift = page_shift;
	s->names = names_new();
	s->sites = sitetab_new(sides_site_pages(max_pages));
	s->lines = linetab_new(page_shift);
	s->code = codetab_new();
	s->levels = levtab_new(sides_site_pages(max_pages));
	if (!s->names || !s->sites || !s->lines || !s->code || !s->levels) {
		sides_free(s);
		return NULL;
	}
	/* With a --max-pages, its whole capacity (SIDES_ROOM times it, a
	 * power of two) from the start, as before the room. */
	if (max_pages)
		s->room_asked = sitetab_capacity(s->sites);
	return s;
}

void
sides_free(struct sides *s)
{
	if (!s)
		return;
	names_free(s->names);
	sitetab_free(s->sites);
	linetab_free(s->lines);
	codetab_free(s->code);
	levtab_free(s->levels);
	callers_clear(&s->callers);
	free(s);
}

size_t
sides_bytes(const struct sides *s)
{
	if (!s)
		return 0;
	return sizeof(*s) + sitetab_bytes(s->sites) + linetab_bytes(s->lines) +
	       codetab_bytes(s->code) + levtab_bytes(s->levels);
}

void
sides_room(struct sides *s, size_t tracked)
{
	size_t room = tracked / SIDES_TRACKED_A_RECORD;

	if (!s)
		return;
	if (room < SIDES_RECORDS_MIN)
		room = SIDES_RECORDS_MIN;
	if (room < s->room_floor)
		room = s->room_floor;
	if (room < s->room_asked)
		room = s->room_asked;
	if (room == s->room)
		return;
	s->room = room;
	sitetab_set_room(s->sites, room);
	levtab_set_room(s->levels, room);
}

void
sides_share_room(struct sides *shard, const struct sides *from)
{
	if (!shard || !from)
		return;
	shard->room_floor = from->room;
}

void
sides_names_off(struct sides *s)
{
	if (!s)
		return;
	names_free(s->names);
	s->names = NULL;
}

void
sides_new_page(struct sides *s, int32_t pid, uint64_t addr)
{
	if (s && s->names)
		names_note_page(s->names, pid, addr);
}

struct names *
sides_names(struct sides *s)
{
	return s ? s->names : NULL;
}

void
sides_forget_pid(struct sides *s, int32_t pid, uint64_t time)
{
	if (s && s->names)
		names_forget(s->names, pid, time);
}

void
sides_flush_end(struct sides *s, bool (*want)(void *ctx, int32_t pid),
		void *ctx)
{
	if (s && s->names)
		names_refresh_due(s->names, want, ctx);
}

void
sides_next_interval(struct sides *s)
{
	if (!s)
		return;
	codetab_next_interval(s->code);
	levtab_next_interval(s->levels);
}

void
sides_clear(struct sides *s)
{
	if (!s)
		return;
	sitetab_clear(s->sites);
	linetab_reset(s->lines, s->page_shift);
	codetab_clear(s->code);
	levtab_clear(s->levels);
	callers_clear(&s->callers);
}

void
sides_merge(struct sides *dst, const struct sides *src)
{
	if (!dst || !src || dst->page_shift != src->page_shift)
		return;
	sitetab_fold(dst->sites, src->sites, 0);
	linetab_merge(dst->lines, src->lines);
	codetab_merge(dst->code, src->code);
	levtab_merge(dst->levels, src->levels);
}

void
sides_reset(struct sides *s)
{
	if (!s)
		return;
	sitetab_reset(s->sites);
	linetab_reset(s->lines, s->page_shift);
	codetab_reset(s->code);
	levtab_reset(s->levels);
	callers_clear(&s->callers);
	names_unpin_all(s->names);
}

void
sides_set_pages(struct sides *s, const struct pagetab *pages)
{
	if (!s)
		return;
	s->sites->admit.pages = pages;
	s->levels->admit.pages = pages;
}

int
sides_set_page_shift(struct sides *s, unsigned new_shift, size_t max_pages)
{
	struct sitetab *folded;
	int ret = 0;

	if (!s || new_shift == s->page_shift)
		return 0;
	/* Pins are per page of the old size. */
	names_unpin_all(s->names);
	/* Level mixes are not kept per line: start over at the new size. */
	levtab_reset(s->levels);
	if (new_shift > s->page_shift) {
		folded = sitetab_new(sides_site_pages(max_pages));
		/* The room first (sides_room for the new page table's count
		 * came before): a fold must not grow past it. */
		if (folded && s->room)
			sitetab_set_room(folded, s->room);
		if (folded) {
			sitetab_fold(folded, s->sites,
				     new_shift - s->page_shift);
			sitetab_free(s->sites);
			s->sites = folded;
		} else {
			sitetab_reset(s->sites);
			ret = -ENOMEM;
		}
	} else {
		sitetab_reset(s->sites);
	}
	s->page_shift = new_shift;
	linetab_reset(s->lines, new_shift);
	return ret;
}
