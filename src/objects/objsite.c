/*
 * The object table's allocation sites, interned: each distinct (site,
 * callers) is stored once and objects carry its index.  Collector thread
 * only.  See objtab.h.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "objtab.h"
#include "objtab_int.h"

static uint64_t
objsite_hash(const char *site, const char *const *callers, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t k = 0; k <= OBJTAB_CALLERS; k++) {
		const char *s = k == 0 ? site : k - 1 < n ? callers[k - 1] :
			       NULL;

		for (; s && *s; s++)
			h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
		h = (h ^ 0xff) * 0x100000001b3ull;	/* separator */
	}
	return h;
}

static bool
objsite_same(const struct objsite *a, const char *site,
	     const char *const *callers, size_t n)
{
	if (strcmp(a->site, site) != 0)
		return false;
	for (size_t k = 0; k < OBJTAB_CALLERS; k++) {
		const char *c = k < n ? callers[k] : NULL;

		if ((a->callers[k] == NULL) != (c == NULL) ||
		    (c && strcmp(a->callers[k], c) != 0))
			return false;
	}
	return true;
}

static int
objsites_rehash(struct objsites *s, size_t n_slots)
{
	uint32_t *slots = calloc(n_slots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		size_t k = s->hash[i] & (n_slots - 1);

		while (slots[k])
			k = (k + 1) & (n_slots - 1);
		slots[k] = (uint32_t)i + 1;
	}
	free(s->slots);
	s->slots = slots;
	s->n_slots = n_slots;
	return 0;
}

static void
objsite_free(struct objsite *o)
{
	free(o->site);
	for (size_t k = 0; k < OBJTAB_CALLERS; k++)
		free(o->callers[k]);
}

/* A copy of str, or NULL without memory.  malloc rather than strdup:
 * tests refuse malloc to check the -ENOMEM path (tests/lib/failalloc.h),
 * and the C library's strdup does not go through it. */
static char *
objsite_dup(const char *str)
{
	size_t len = strlen(str) + 1;
	char *d = malloc(len);

	if (d)
		memcpy(d, str, len);
	return d;
}

/* A copy of the site's strings at v[n]; 0 or -ENOMEM. */
static int
objsites_append(struct objsites *s, const char *site,
		const char *const *callers, size_t n, uint64_t h)
{
	struct objsite *o;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct objsite *v = realloc(s->v, cap * sizeof(*v));
		uint64_t *hash;

		if (!v)
			return -ENOMEM;
		s->v = v;
		hash = realloc(s->hash, cap * sizeof(*hash));
		if (!hash)
			return -ENOMEM;
		s->hash = hash;
		s->cap = cap;
	}
	o = &s->v[s->n];
	memset(o, 0, sizeof(*o));
	o->site = objsite_dup(site);
	for (size_t k = 0; k < n && k < OBJTAB_CALLERS; k++)
		if (callers[k] && !(o->callers[k] = objsite_dup(callers[k])))
			goto oom;
	if (!o->site)
		goto oom;
	s->hash[s->n] = h;
	return 0;
oom:
	objsite_free(o);
	return -ENOMEM;
}

int64_t
objtab_site_intern(struct objtab *t, const char *site,
		   const char *const *callers, size_t n)
{
	struct objsites *s = t->site_of ? &t->site_of->sites : &t->sites;
	uint64_t h;
	size_t k;

	if (n > OBJTAB_CALLERS)
		n = OBJTAB_CALLERS;
	while (n > 0 && callers[n - 1] == NULL)
		n--;
	h = objsite_hash(site, callers, n);
	if (2 * (s->n + 1) > s->n_slots &&
	    objsites_rehash(s, s->n_slots ? 2 * s->n_slots : 64) < 0)
		return -ENOMEM;
	for (k = h & (s->n_slots - 1); s->slots[k];
	     k = (k + 1) & (s->n_slots - 1)) {
		uint32_t i = s->slots[k] - 1;

		if (s->hash[i] == h && objsite_same(&s->v[i], site, callers, n))
			return i;
	}
	if (objsites_append(s, site, callers, n, h) < 0)
		return -ENOMEM;
	s->slots[k] = (uint32_t)s->n + 1;
	return (int64_t)s->n++;
}

const struct objsite *
objtab_site(const struct objtab *t, uint32_t idx)
{
	const struct objsites *s = t->site_of ? &t->site_of->sites :
						&t->sites;

	return idx < s->n ? &s->v[idx] : NULL;
}

size_t
objtab_n_sites(const struct objtab *t)
{
	return t->site_of ? t->site_of->sites.n : t->sites.n;
}

void
objsites_fini(struct objsites *s)
{
	for (size_t i = 0; i < s->n; i++)
		objsite_free(&s->v[i]);
	free(s->v);
	free(s->hash);
	free(s->slots);
	memset(s, 0, sizeof(*s));
}
