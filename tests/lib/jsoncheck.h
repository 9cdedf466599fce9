/*
 * A strict JSON syntax checker (RFC 8259) for tests: strings must be
 * well-formed UTF-8 with control characters escaped, numbers in JSON's
 * grammar, nesting at most 64 deep.  It also collects the keys of the
 * outermost object, in order, so a test can check key order.
 */
#ifndef MEMTOP_JSONCHECK_H
#define MEMTOP_JSONCHECK_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_MAX_KEYS 64

struct json_check {
	const char *p;		/* where checking stopped */
	int depth;
	/* keys of the outermost object, in order */
	char keys[JSON_MAX_KEYS][32];
	size_t n_keys;
};

/* One JSON Lines line: an object, then exactly one '\n', then the end. */
bool json_line_valid(const char *line, struct json_check *jc);

#endif
