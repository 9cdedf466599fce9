#include "config.h"

/*
 * A strict JSON syntax checker (RFC 8259) for the tests of the JSON Lines
 * writer: see jsoncheck.h.
 */

#include <string.h>

#include "jsoncheck.h"

static bool json_value(struct json_check *jc);

static void
json_ws(struct json_check *jc)
{
	while (*jc->p == ' ' || *jc->p == '\t' || *jc->p == '\n' ||
	       *jc->p == '\r')
		jc->p++;
}

/* Bytes must be well-formed UTF-8; control characters must be escaped. */
static bool
json_string(struct json_check *jc, char *copy, size_t copylen)
{
	size_t n = 0;

	if (*jc->p++ != '"')
		return false;
	for (;;) {
		unsigned char c = (unsigned char)*jc->p;

		if (c == '"')
			break;
		if (c < 0x20)
			return false;
		if (c == '\\') {
			jc->p++;
			if (*jc->p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF",
						    jc->p[i]) || !jc->p[i])
						return false;
				jc->p += 5;
			} else if (*jc->p && strchr("\"\\/bfnrt", *jc->p)) {
				jc->p++;
			} else {
				return false;
			}
			continue;
		}
		if (c >= 0x80) {
			int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 :
				  c >= 0xc2 ? 2 : 0;

			unsigned char c1 = (unsigned char)jc->p[1];

			if (len == 0 || c > 0xf4)
				return false;
			for (int i = 1; i < len; i++)
				if (((unsigned char)jc->p[i] & 0xc0) != 0x80)
					return false;
			/* No overlong forms, no UTF-16 surrogates, nothing
			 * past U+10FFFF. */
			if ((c == 0xe0 && c1 < 0xa0) ||
			    (c == 0xed && c1 > 0x9f) ||
			    (c == 0xf0 && c1 < 0x90) ||
			    (c == 0xf4 && c1 > 0x8f))
				return false;
			jc->p += len;
			continue;
		}
		if (copy && n + 1 < copylen)
			copy[n++] = (char)c;
		jc->p++;
	}
	if (copy)
		copy[n] = '\0';
	jc->p++;
	return true;
}

static bool
json_digits(struct json_check *jc)
{
	const char *start = jc->p;

	while (*jc->p >= '0' && *jc->p <= '9')
		jc->p++;
	return jc->p > start;
}

static bool
json_number(struct json_check *jc)
{
	if (*jc->p == '-')
		jc->p++;
	if (*jc->p == '0')
		jc->p++;
	else if (!json_digits(jc))
		return false;
	if (*jc->p == '.') {
		jc->p++;
		if (!json_digits(jc))
			return false;
	}
	if (*jc->p == 'e' || *jc->p == 'E') {
		jc->p++;
		if (*jc->p == '+' || *jc->p == '-')
			jc->p++;
		if (!json_digits(jc))
			return false;
	}
	return true;
}

static bool
json_object(struct json_check *jc)
{
	bool outer = jc->depth == 1;

	jc->p++;
	json_ws(jc);
	if (*jc->p == '}') {
		jc->p++;
		return true;
	}
	for (;;) {
		char key[32];

		json_ws(jc);
		if (*jc->p != '"' || !json_string(jc, key, sizeof(key)))
			return false;
		if (outer && jc->n_keys < JSON_MAX_KEYS)
			strcpy(jc->keys[jc->n_keys++], key);
		json_ws(jc);
		if (*jc->p++ != ':' || !json_value(jc))
			return false;
		json_ws(jc);
		if (*jc->p == '}') {
			jc->p++;
			return true;
		}
		if (*jc->p++ != ',')
			return false;
	}
}

static bool
json_array(struct json_check *jc)
{
	jc->p++;
	json_ws(jc);
	if (*jc->p == ']') {
		jc->p++;
		return true;
	}
	for (;;) {
		if (!json_value(jc))
			return false;
		json_ws(jc);
		if (*jc->p == ']') {
			jc->p++;
			return true;
		}
		if (*jc->p++ != ',')
			return false;
	}
}

static bool
json_value(struct json_check *jc)
{
	bool ok;

	json_ws(jc);
	if (++jc->depth > 64)
		return false;
	switch (*jc->p) {
	case '{':
		ok = json_object(jc);
		break;
	case '[':
		ok = json_array(jc);
		break;
	case '"':
		ok = json_string(jc, NULL, 0);
		break;
	case 't':
		ok = strncmp(jc->p, "true", 4) == 0;
		jc->p += ok ? 4 : 0;
		break;
	case 'f':
		ok = strncmp(jc->p, "false", 5) == 0;
		jc->p += ok ? 5 : 0;
		break;
	case 'n':
		ok = strncmp(jc->p, "null", 4) == 0;
		jc->p += ok ? 4 : 0;
		break;
	default:
		ok = json_number(jc);
		break;
	}
	jc->depth--;
	return ok;
}

bool
json_line_valid(const char *line, struct json_check *jc)
{
	memset(jc, 0, sizeof(*jc));
	jc->p = line;
	if (*line != '{' || !json_value(jc))
		return false;
	return jc->p[0] == '\n' && jc->p[1] == '\0';
}
