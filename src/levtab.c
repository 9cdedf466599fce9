/* Collector thread only.  See levtab.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "levtab.h"
#include "u64map.h"

struct levtab_page {
	uint32_t n[DATASRC_LVL__COUNT];
};

struct levtab {
	struct u64map pages;		/* key: pid << 42 | page */
	size_t max_pages;
	uint64_t interval[DATASRC_LVL__COUNT];
	uint64_t untracked;		/* samples of pages past max_pages */
};

/* pid_max is at most 2^22; user pages fit in 42 bits at 4 KiB. */
static uint64_t
levtab_key(int32_t pid, uint64_t page)
{
	return ((uint64_t)(uint32_t)pid << 42) ^ page;
}

struct levtab *
levtab_new(size_t max_pages)
{
	struct levtab *t = calloc(1, sizeof(*t));

	if (t)
		t->max_pages = max_pages;
	return t;
}

void
levtab_free(struct levtab *t)
{
	if (!t)
		return;
	u64map_clear(&t->pages, free);
	free(t);
}

void
levtab_add(struct levtab *t, int32_t pid, uint64_t page, uint64_t data_src)
{
	enum datasrc_level lvl;
	struct levtab_page *p;
	uint64_t key;

	if (!t || data_src == 0)
		return;
	lvl = datasrc_level(data_src);
	if (lvl == DATASRC_LVL_NA)
		return;
	t->interval[lvl]++;
	key = levtab_key(pid, page);
	p = u64map_get(&t->pages, key);
	if (!p) {
		if (t->max_pages && u64map_count(&t->pages) >= t->max_pages) {
			t->untracked++;
			return;
		}
		p = calloc(1, sizeof(*p));
		if (!p || u64map_put(&t->pages, key, p) == p) {
			free(p);
			t->untracked++;
			return;
		}
	}
	if (p->n[lvl] != UINT32_MAX)
		p->n[lvl]++;
}

bool
levtab_page(const struct levtab *t, int32_t pid, uint64_t page,
	    uint64_t *out)
{
	const struct levtab_page *p;

	if (!t)
		return false;
	p = u64map_get(&t->pages, levtab_key(pid, page));
	if (!p)
		return false;
	for (int i = 0; i < DATASRC_LVL__COUNT; i++)
		out[i] = p->n[i];
	return true;
}

void
levtab_interval(const struct levtab *t, uint64_t *out)
{
	if (t)
		memcpy(out, t->interval, sizeof(t->interval));
	else
		memset(out, 0, DATASRC_LVL__COUNT * sizeof(*out));
}

uint64_t
levtab_untracked(const struct levtab *t)
{
	return t ? t->untracked : 0;
}

void
levtab_next_interval(struct levtab *t)
{
	if (t)
		memset(t->interval, 0, sizeof(t->interval));
}

void
levtab_reset(struct levtab *t)
{
	if (!t)
		return;
	u64map_clear(&t->pages, free);
	memset(t->interval, 0, sizeof(t->interval));
	t->untracked = 0;
}
