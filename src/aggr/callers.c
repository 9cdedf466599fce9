#include "config.h"

/*
 * Code sites' callers.  See callers.h.
 *
 * The map's key folds pid into the ip's top 16 bits (user ips fit 47
 * bits); the entry keeps the exact (pid, ip), so two sites that share a
 * key never show each other's caller: the later one takes the entry.
 */

#include <stdlib.h>

#include "callers.h"

struct caller {
	int32_t pid;
	uint32_t tries;		/* callers_none's looks */
	uint64_t ip;
	uint64_t caller;
};

static uint64_t
callers_key(int32_t pid, uint64_t ip)
{
	return ip ^ (uint64_t)(uint32_t)pid << 48;
}

/* The entry of (pid, ip), made when missing or taken over from the site
 * that shared its key (caller 0); NULL when full or out of memory. */
static struct caller *
callers_entry(struct callers *c, int32_t pid, uint64_t ip)
{
	uint64_t key = callers_key(pid, ip);
	struct caller *e = u64map_get(&c->map, key);

	if (!e) {
		if (u64map_count(&c->map) >= CALLERS_MAX)
			return NULL;
		e = malloc(sizeof(*e));
		if (!e)
			return NULL;
		if (u64map_put(&c->map, key, e) == e) {
			free(e);
			return NULL;
		}
	} else if (e->pid == pid && e->ip == ip) {
		return e;
	}
	e->pid = pid;
	e->ip = ip;
	e->caller = 0;
	e->tries = 0;
	return e;
}

void
callers_note(struct callers *c, int32_t pid, uint64_t ip, uint64_t caller)
{
	struct caller *e = caller ? callers_entry(c, pid, ip) : NULL;

	if (e)
		e->caller = caller;
}

uint32_t
callers_none(struct callers *c, int32_t pid, uint64_t ip)
{
	struct caller *e = callers_entry(c, pid, ip);

	if (!e)
		return 0;
	if (e->tries < UINT32_MAX - 1)
		e->tries++;
	return e->tries;
}

uint32_t
callers_tries(const struct callers *c, int32_t pid, uint64_t ip)
{
	const struct caller *e = u64map_get(&c->map, callers_key(pid, ip));

	if (!e || e->pid != pid || e->ip != ip)
		return 0;
	return e->caller ? UINT32_MAX : e->tries;
}

bool
callers_room(const struct callers *c)
{
	return u64map_count(&c->map) < CALLERS_MAX;
}

uint64_t
callers_get(const struct callers *c, int32_t pid, uint64_t ip)
{
	const struct caller *e = u64map_get(&c->map, callers_key(pid, ip));

	return e && e->pid == pid && e->ip == ip ? e->caller : 0;
}

void
callers_clear(struct callers *c)
{
	u64map_clear(&c->map, free);
}
