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
	uint64_t ip;
	uint64_t caller;
};

static uint64_t
callers_key(int32_t pid, uint64_t ip)
{
	return ip ^ (uint64_t)(uint32_t)pid << 48;
}

void
callers_note(struct callers *c, int32_t pid, uint64_t ip, uint64_t caller)
{
	uint64_t key = callers_key(pid, ip);
	struct caller *e;

	if (caller == 0)
		return;
	e = u64map_get(&c->map, key);
	if (!e) {
		if (u64map_count(&c->map) >= CALLERS_MAX)
			return;
		e = malloc(sizeof(*e));
		if (!e)
			return;
		if (u64map_put(&c->map, key, e) == e) {
			free(e);
			return;
		}
	}
	e->pid = pid;
	e->ip = ip;
	e->caller = caller;
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
