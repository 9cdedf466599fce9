/* Any thread.  See pmu.h. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmu.h"
#include "sysfs.h"

static const char *const pmu_word_names[PMU_N_WORDS] = {
	"config", "config1", "config2", "config3",
};

static const char *
pmu_skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return p;
}

/* Decimal digits only; *end past them.  -EINVAL when none or > max. */
static int
pmu_parse_bit(const char *p, const char **end, unsigned *out)
{
	unsigned v = 0;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	while (isdigit((unsigned char)*p)) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v > 63)
			return -EINVAL;
		p++;
	}
	*end = p;
	*out = v;
	return 0;
}

int
pmu_format_parse(const char *text, struct pmu_format *out)
{
	const char *p = pmu_skip_space(text);
	const char *colon = strchr(p, ':');
	size_t wlen;
	unsigned word;

	if (!colon)
		return -EINVAL;
	wlen = (size_t)(colon - p);
	for (word = 0; word < PMU_N_WORDS; word++)
		if (strlen(pmu_word_names[word]) == wlen &&
		    strncmp(p, pmu_word_names[word], wlen) == 0)
			break;
	if (word == PMU_N_WORDS)
		return -EINVAL;

	out->word = word;
	out->mask = 0;
	out->width = 0;
	p = colon + 1;
	for (;;) {
		unsigned lo, hi;
		uint64_t range;

		if (pmu_parse_bit(p, &p, &lo) < 0)
			return -EINVAL;
		hi = lo;
		if (*p == '-' && pmu_parse_bit(p + 1, &p, &hi) < 0)
			return -EINVAL;
		if (hi < lo)
			return -EINVAL;
		range = (hi - lo == 63) ? UINT64_MAX :
			((UINT64_C(1) << (hi - lo + 1)) - 1) << lo;
		if (out->mask & range)
			return -EINVAL;
		out->mask |= range;
		out->width += hi - lo + 1;
		if (*p != ',')
			break;
		p++;
	}
	return *pmu_skip_space(p) == '\0' ? 0 : -EINVAL;
}

int
pmu_format_pack(const struct pmu_format *f, uint64_t value,
		uint64_t words[PMU_N_WORDS])
{
	uint64_t packed = 0;
	unsigned k = 0;

	if (f->word >= PMU_N_WORDS)
		return -EINVAL;
	if (f->width < 64 && (value >> f->width) != 0)
		return -ERANGE;
	for (unsigned bit = 0; bit < 64; bit++) {
		if (!(f->mask & (UINT64_C(1) << bit)))
			continue;
		if (value & (UINT64_C(1) << k))
			packed |= UINT64_C(1) << bit;
		k++;
	}
	words[f->word] |= packed;
	return 0;
}

static bool
pmu_term_name_ok(const char *s, size_t len)
{
	if (len == 0 || len >= PMU_TERM_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' &&
		    s[i] != '-')
			return false;
	return true;
}

/* "0x" hex or decimal (a leading 0 is not octal, as in perf's lexer). */
static int
pmu_parse_value(const char *s, size_t len, uint64_t *out)
{
	char buf[32];
	char *end;
	int base = 10;
	const char *digits = buf;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (len > 2 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')) {
		base = 16;
		digits = buf + 2;
		if (!isxdigit((unsigned char)digits[0]))
			return -EINVAL;
	} else if (!isdigit((unsigned char)buf[0])) {
		return -EINVAL;
	}
	errno = 0;
	*out = strtoull(digits, &end, base);
	if (*end != '\0' || errno == ERANGE)
		return -EINVAL;
	return 0;
}

int
pmu_terms_parse(const char *text, struct pmu_terms *out)
{
	const char *p = pmu_skip_space(text);
	size_t len = strlen(p);

	out->n = 0;
	while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == ' '))
		len--;
	if (len == 0)
		return -EINVAL;
	while (len > 0) {
		const char *comma = memchr(p, ',', len);
		size_t item = comma ? (size_t)(comma - p) : len;
		const char *eq = memchr(p, '=', item);
		size_t nlen = eq ? (size_t)(eq - p) : item;
		struct pmu_term *t;

		if (!pmu_term_name_ok(p, nlen) || out->n == PMU_MAX_TERMS)
			return -EINVAL;
		t = &out->t[out->n];
		memset(t, 0, sizeof(*t));
		memcpy(t->name, p, nlen);
		if (!eq) {
			t->value = 1;
		} else if (item - nlen == 2 && eq[1] == '?') {
			t->required = true;
		} else if (pmu_parse_value(eq + 1, item - nlen - 1,
					   &t->value) < 0) {
			return -EINVAL;
		}
		out->n++;
		if (!comma)
			break;
		/* A trailing comma leaves an empty item: junk. */
		len -= item + 1;
		p = comma + 1;
		if (len == 0)
			return -EINVAL;
	}
	return 0;
}

int
pmu_terms_set(struct pmu_terms *t, const char *name, uint64_t value)
{
	size_t nlen = strlen(name);

	if (!pmu_term_name_ok(name, nlen))
		return -EINVAL;
	for (size_t i = 0; i < t->n; i++) {
		if (strcmp(t->t[i].name, name) == 0) {
			t->t[i].value = value;
			t->t[i].required = false;
			return 0;
		}
	}
	if (t->n == PMU_MAX_TERMS)
		return -E2BIG;
	memset(&t->t[t->n], 0, sizeof(t->t[t->n]));
	memcpy(t->t[t->n].name, name, nlen);
	t->t[t->n].value = value;
	t->n++;
	return 0;
}

int
pmu_terms_encode(const struct pmu_terms *t, pmu_format_lookup_fn lookup,
		 void *ctx, uint64_t words[PMU_N_WORDS], char *err,
		 size_t errlen)
{
	for (unsigned w = 0; w < PMU_N_WORDS; w++)
		words[w] = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct pmu_term *term = &t->t[i];
		struct pmu_format f;
		int ret;

		if (term->required) {
			snprintf(err, errlen, "term '%s' has no value "
				 "(the event string says %s=?)", term->name,
				 term->name);
			return -EINVAL;
		}
		ret = lookup(term->name, &f, ctx);
		if (ret == -ENOENT) {
			unsigned w;

			for (w = 0; w < PMU_N_WORDS; w++)
				if (strcmp(term->name, pmu_word_names[w]) == 0)
					break;
			if (w == PMU_N_WORDS) {
				snprintf(err, errlen, "term '%s' has no format "
					 "file", term->name);
				return -EINVAL;
			}
			words[w] |= term->value;
			continue;
		}
		if (ret < 0) {
			snprintf(err, errlen, "format of term '%s': %s",
				 term->name, strerror(-ret));
			return ret;
		}
		ret = pmu_format_pack(&f, term->value, words);
		if (ret < 0) {
			snprintf(err, errlen, "%s=%llu: value too big for "
				 "format (%u bits)", term->name,
				 (unsigned long long)term->value, f.width);
			return ret;
		}
	}
	return 0;
}

int
pmu_words_to_attr(const uint64_t words[PMU_N_WORDS],
		  struct perf_event_attr *attr)
{
	if (words[3])
		return -EOVERFLOW;
	attr->config = words[0];
	attr->config1 = words[1];
	attr->config2 = words[2];
	return 0;
}

bool
pmu_sysfs_is_real(void)
{
	const char *root = getenv("MEMTOP_SYSFS_ROOT");

	return !root || !root[0];
}

/* buf = sysfs path of "<pmu>/<rel>" ("<pmu>" alone when rel is NULL). */
static int
pmu_path(char *buf, size_t len, const char *pmu, const char *rel)
{
	char tail[256];
	int n;

	if (strchr(pmu, '/') || (rel && strstr(rel, "..")))
		return -EINVAL;
	n = snprintf(tail, sizeof(tail), "bus/event_source/devices/%s%s%s",
		     pmu, rel ? "/" : "", rel ? rel : "");
	if (n < 0 || (size_t)n >= sizeof(tail))
		return -ENAMETOOLONG;
	return sysfs_path(buf, len, tail);
}

static bool
pmu_path_exists(const char *pmu, const char *rel)
{
	char path[512];

	return pmu_path(path, sizeof(path), pmu, rel) == 0 &&
	       access(path, F_OK) == 0;
}

bool
pmu_exists(const char *pmu)
{
	return pmu_path_exists(pmu, "type");
}

bool
pmu_has_event(const char *pmu, const char *event)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "events/%s", event);
	return pmu_path_exists(pmu, rel);
}

bool
pmu_has_format(const char *pmu, const char *term)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "format/%s", term);
	return pmu_path_exists(pmu, rel);
}

int
pmu_read_file(const char *pmu, const char *rel, char *buf, size_t len)
{
	char path[512];
	int ret = pmu_path(path, sizeof(path), pmu, rel);

	return ret < 0 ? ret : sysfs_read(path, buf, len);
}

/* A whole decimal number, nothing else. */
static int
pmu_parse_decimal(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	if (*end != '\0' || errno == ERANGE || *out > max)
		return -EINVAL;
	return 0;
}

int
pmu_read_type(const char *pmu, uint32_t *type)
{
	char buf[32];
	uint64_t v;
	int ret = pmu_read_file(pmu, "type", buf, sizeof(buf));

	if (ret < 0)
		return ret;
	if (pmu_parse_decimal(buf, UINT32_MAX, &v) < 0)
		return -EINVAL;
	*type = (uint32_t)v;
	return 0;
}

int
pmu_max_precise(const char *pmu)
{
	char buf[32];
	uint64_t v;

	if (pmu_read_file(pmu, "caps/max_precise", buf, sizeof(buf)) < 0 ||
	    pmu_parse_decimal(buf, 3, &v) < 0)
		return -1;
	return (int)v;
}

static int
pmu_name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

int
pmu_list(const char *name, const char *prefix, char (*names)[PMU_NAME_MAX],
	 size_t max)
{
	char path[512];
	struct dirent *d;
	size_t n = 0;
	DIR *dir;
	int ret = sysfs_path(path, sizeof(path), "bus/event_source/devices");

	if (ret < 0)
		return ret;
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((d = readdir(dir)) != NULL && n < max) {
		bool match = (name && strcmp(d->d_name, name) == 0) ||
			     (prefix && strncmp(d->d_name, prefix,
						strlen(prefix)) == 0);

		if (!match || d->d_name[0] == '.' ||
		    strlen(d->d_name) >= PMU_NAME_MAX)
			continue;
		memcpy(names[n++], d->d_name, strlen(d->d_name) + 1);
	}
	closedir(dir);
	qsort(names, n, sizeof(names[0]), pmu_name_cmp);
	return (int)n;
}

static int
pmu_sysfs_lookup(const char *term, struct pmu_format *f, void *ctx)
{
	char rel[128], buf[256];
	int ret;

	snprintf(rel, sizeof(rel), "format/%s", term);
	ret = pmu_read_file(ctx, rel, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	return pmu_format_parse(buf, f) < 0 ? -EBADMSG : 0;
}

int
pmu_encode(const char *pmu, const char *event,
	   const struct pmu_terms *overrides, struct perf_event_attr *attr,
	   char *err, size_t errlen)
{
	struct pmu_terms terms = { .n = 0 };
	uint64_t words[PMU_N_WORDS];
	char rel[128], buf[512], why[160];
	int ret;

	ret = pmu_read_type(pmu, &attr->type);
	if (ret < 0) {
		snprintf(err, errlen, "%s/type: %s", pmu, strerror(-ret));
		return ret;
	}
	if (event) {
		snprintf(rel, sizeof(rel), "events/%s", event);
		ret = pmu_read_file(pmu, rel, buf, sizeof(buf));
		if (ret < 0) {
			snprintf(err, errlen, "%s/events/%s: %s", pmu, event,
				 strerror(-ret));
			return ret;
		}
		if (pmu_terms_parse(buf, &terms) < 0) {
			snprintf(err, errlen, "%s/events/%s: cannot parse "
				 "'%s'", pmu, event, buf);
			return -EINVAL;
		}
	}
	for (size_t i = 0; overrides && i < overrides->n; i++) {
		ret = pmu_terms_set(&terms, overrides->t[i].name,
				    overrides->t[i].value);
		if (ret < 0) {
			snprintf(err, errlen, "%s/%s: too many terms", pmu,
				 event ? event : "");
			return ret;
		}
	}
	ret = pmu_terms_encode(&terms, pmu_sysfs_lookup, (void *)pmu, words,
			       why, sizeof(why));
	if (ret == 0 && pmu_words_to_attr(words, attr) < 0) {
		snprintf(why, sizeof(why), "needs config3, which this "
			 "memtop build does not set");
		ret = -EOVERFLOW;
	}
	if (ret < 0)
		snprintf(err, errlen, "%s/%s: %s", pmu, event ? event : "",
			 why);
	return ret;
}
