/* Collector thread only.  See maps.h. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps.h"

#include "maps_int.h"

struct maps *
maps_new(int32_t pid)
{
	struct maps *m = calloc(1, sizeof(*m));

	if (m)
		m->pid = pid;
	return m;
}

void
maps_free_regions(struct maps_region *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i].path);
	free(r);
}

void
maps_free(struct maps *m)
{
	if (!m)
		return;
	maps_free_regions(m->regions, m->n);
	free(m);
}

/* FNV-1a: only tells "same text as last time" from "changed". */
static uint64_t
maps_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

bool
maps_hex(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;

	if (s >= end)
		return false;
	for (; s < end; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (v >> 60)
			return false;
		v = v << 4 | d;
	}
	if (s == *p)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool
maps_dec(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;

	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (s == *p)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool
maps_char(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

static bool
maps_spaces(const char **p, const char *end)
{
	const char *s = *p;

	while (*p < end && **p == ' ')
		(*p)++;
	return *p > s;
}

static const char maps_deleted_suffix[] = " (deleted)";

/* Kind and path from the name field (name may be empty). */
int
maps_classify(struct maps_region *r, const char *name, size_t len)
{
	size_t sl = sizeof(maps_deleted_suffix) - 1;
	uint64_t tid;
	const char *p;

	if (len == 0) {
		r->kind = r->shared ? MAPS_SHARED_ANON : MAPS_ANON;
		return 0;
	}
	if (name[0] == '[') {
		if (len == 6 && memcmp(name, "[heap]", 6) == 0) {
			r->kind = MAPS_HEAP;
			return 0;
		}
		if (len == 7 && memcmp(name, "[stack]", 7) == 0) {
			r->kind = MAPS_STACK;
			return 0;
		}
		/* Kernels before 4.5 named thread stacks themselves. */
		p = name + 7;
		if (len > 8 && memcmp(name, "[stack:", 7) == 0 &&
		    maps_dec(&p, name + len, &tid) && p == name + len - 1 &&
		    *p == ']' && tid <= INT32_MAX) {
			r->kind = MAPS_THREAD_STACK;
			r->tid = (int32_t)tid;
			return 0;
		}
		r->kind = MAPS_NAMED;
	} else {
		r->kind = MAPS_FILE;
		if (len > sl && memcmp(name + len - sl, maps_deleted_suffix,
				       sl) == 0) {
			r->deleted = true;
			len -= sl;
		}
		if (r->deleted && r->inode && len == 9 &&
		    memcmp(name, "/dev/zero", 9) == 0) {
			r->kind = MAPS_SHARED_ANON;
			return 0;
		}
		if (r->deleted && len == 14 &&
		    memcmp(name, "/anon_hugepage", 14) == 0) {
			r->kind = MAPS_HUGETLB;
			return 0;
		}
	}
	r->path = strndup(name, len);
	return r->path ? 0 : -ENOMEM;
}

/*
 * One line: "START-END PERMS OFFSET MAJ:MIN INODE [NAME]".  NAME is the
 * rest of the line after the padding: it may hold spaces.  false when the
 * line does not have that shape.
 */
static bool
maps_parse_line(const char *s, const char *end, struct maps_region *r,
		int *err)
{
	uint64_t maj, min;

	memset(r, 0, sizeof(*r));
	if (!maps_hex(&s, end, &r->start) || !maps_char(&s, end, '-') ||
	    !maps_hex(&s, end, &r->end) || !maps_spaces(&s, end))
		return false;
	if (end - s < 4)
		return false;
	if (s[0] == 'r')
		r->prot |= MAPS_PROT_READ;
	else if (s[0] != '-')
		return false;
	if (s[1] == 'w')
		r->prot |= MAPS_PROT_WRITE;
	else if (s[1] != '-')
		return false;
	if (s[2] == 'x')
		r->prot |= MAPS_PROT_EXEC;
	else if (s[2] != '-')
		return false;
	if (s[3] == 's')
		r->shared = true;
	else if (s[3] != 'p')
		return false;
	s += 4;
	if (!maps_spaces(&s, end) || !maps_hex(&s, end, &r->pgoff) ||
	    !maps_spaces(&s, end) || !maps_hex(&s, end, &maj) ||
	    !maps_char(&s, end, ':') || !maps_hex(&s, end, &min) ||
	    !maps_spaces(&s, end) || !maps_dec(&s, end, &r->inode))
		return false;
	if (s < end && *s != ' ')
		return false;
	if (r->end <= r->start || maj > UINT32_MAX || min > UINT32_MAX)
		return false;
	r->dev_major = (uint32_t)maj;
	r->dev_minor = (uint32_t)min;
	maps_spaces(&s, end);
	*err = maps_classify(r, s, (size_t)(end - s));
	return *err == 0;
}

static int
maps_cmp_start(const void *a, const void *b)
{
	const struct maps_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Index of the last region starting at or below addr, or -1. */
ptrdiff_t
maps_floor(const struct maps_region *r, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

/* Whether region i may be the .bss of the region before it. */
bool
maps_bss_of_prev(const struct maps_region *r, size_t i)
{
	const struct maps_region *prev;

	if (i == 0)
		return false;
	prev = &r[i - 1];
	return prev->kind == MAPS_FILE && !prev->shared &&
	       (prev->prot & MAPS_PROT_WRITE) && prev->end == r[i].start;
}

/* .bss lives in anonymous memory right after the file's data mapping.
 * A mark made before (maps_take of regions already marked) stays while
 * it still holds, else is undone. */
static int
maps_mark_bss(struct maps_region *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (r[i].kind != MAPS_BSS || (maps_bss_of_prev(r, i) &&
		    strcmp(r[i].path, r[i - 1].path) == 0))
			continue;
		free(r[i].path);
		r[i].path = NULL;
		r[i].kind = MAPS_ANON;
	}
	for (size_t i = 1; i < n; i++) {
		if (r[i].kind != MAPS_ANON || !maps_bss_of_prev(r, i))
			continue;
		r[i].path = strdup(r[i - 1].path);
		if (!r[i].path)
			return -ENOMEM;
		r[i].kind = MAPS_BSS;
		r[i].deleted = r[i - 1].deleted;
	}
	return 0;
}

/* Thread-stack labels survive a reload while the region keeps its start. */
static void
maps_carry_labels(struct maps_region *r, size_t n,
		  const struct maps_region *old, size_t n_old)
{
	for (size_t i = 0; i < n; i++) {
		ptrdiff_t j;

		if (r[i].kind != MAPS_ANON)
			continue;
		j = maps_floor(old, n_old, r[i].start);
		if (j >= 0 && old[j].start == r[i].start &&
		    old[j].kind == MAPS_THREAD_STACK) {
			r[i].kind = MAPS_THREAD_STACK;
			r[i].tid = old[j].tid;
			r[i].stack_end = old[j].stack_end;
		}
	}
}

int
maps_take(struct maps *m, struct maps_region *r, size_t n)
{
	int err;

	if (n)
		qsort(r, n, sizeof(*r), maps_cmp_start);
	err = maps_mark_bss(r, n);
	if (err) {
		maps_free_regions(r, n);
		return err;
	}
	maps_carry_labels(r, n, m->regions, m->n);
	maps_free_regions(m->regions, m->n);
	m->regions = r;
	m->n = n;
	/* The next text read is applied even if it equals the last. */
	m->text_len = SIZE_MAX;
	m->loaded = true;
	m->generation++;
	return 0;
}

int
maps_load_text(struct maps *m, const char *text, size_t len)
{
	uint64_t hash = maps_hash(text, len);
	struct maps_region *r = NULL, *nr;
	size_t n = 0, cap = 0, bad = 0;
	const char *s = text, *end = text + len;
	int err = 0;

	if (m->loaded && hash == m->text_hash && len == m->text_len)
		return 0;
	while (s < end) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		struct maps_region reg;

		if (!eol)
			eol = end;
		if (eol == s) {
			s = eol + 1;
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			nr = realloc(r, cap * sizeof(*r));
			if (!nr) {
				err = -ENOMEM;
				goto out_free;
			}
			r = nr;
		}
		if (maps_parse_line(s, eol, &reg, &err)) {
			r[n++] = reg;
		} else if (err) {
			goto out_free;
		} else {
			bad++;
		}
		s = eol + 1;
	}
	/* maps_take sorts, marks .bss and carries thread labels. */
	err = maps_take(m, r, n);
	if (err)
		return err;
	m->bad_lines = bad;
	m->text_hash = hash;
	m->text_len = len;
	return 1;

out_free:
	maps_free_regions(r, n);
	return err;
}

/* Reads a whole /proc file into a growing buffer, NUL-terminated; *len
 * gets its size. */
int
maps_read_file(const char *path, char **buf, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *b = malloc(cap), *nb;
	int fd, ret = 0;

	if (!b)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out_free;
	}
	for (;;) {
		ssize_t got;

		if (n + 1 >= cap) {
			nb = realloc(b, cap * 2);
			if (!nb) {
				ret = -ENOMEM;
				goto out_close;
			}
			b = nb;
			cap *= 2;
		}
		got = read(fd, b + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ret = -errno;
			goto out_close;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;

out_close:
	close(fd);
out_free:
	free(b);
	return ret;
}

int
maps_refresh(struct maps *m)
{
	char path[64], *buf;
	uint64_t gen = m->generation;
	size_t len;
	int ret;

	if (m->pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)m->pid);
	ret = maps_read_file(path, &buf, &len);
	if (ret < 0)
		return ret;
	/* A zombie's maps are empty: keep what it had. */
	if (len == 0) {
		free(buf);
		return -ESRCH;
	}
	ret = maps_load_text(m, buf, len);
	free(buf);
	if (ret < 0)
		return ret;
	maps_probe_threads(m);
	return m->generation != gen;
}

const struct maps_region *
maps_lookup(const struct maps *m, uint64_t addr)
{
	ptrdiff_t i = maps_floor(m->regions, m->n, addr);

	if (i < 0 || addr >= m->regions[i].end)
		return NULL;
	return &m->regions[i];
}

const struct maps_region *
maps_first_in(const struct maps *m, uint64_t lo, uint64_t hi)
{
	ptrdiff_t i = maps_floor(m->regions, m->n, lo);

	if (i >= 0 && lo < m->regions[i].end)
		return &m->regions[i];
	if ((size_t)(i + 1) < m->n && m->regions[i + 1].start < hi)
		return &m->regions[i + 1];
	return NULL;
}

size_t
maps_count(const struct maps *m)
{
	return m->n;
}

const struct maps_region *
maps_at(const struct maps *m, size_t i)
{
	return i < m->n ? &m->regions[i] : NULL;
}

uint64_t
maps_generation(const struct maps *m)
{
	return m->generation;
}

size_t
maps_bad_lines(const struct maps *m)
{
	return m->bad_lines;
}

int32_t
maps_pid(const struct maps *m)
{
	return m->pid;
}

int
maps_region_name(const struct maps_region *r, uint64_t addr, char *buf,
		 size_t len)
{
	uint64_t off = r->pgoff + (addr > r->start ? addr - r->start : 0);

	switch (r->kind) {
	case MAPS_HEAP:
		return snprintf(buf, len, "[heap]");
	case MAPS_STACK:
		return snprintf(buf, len, "[stack]");
	case MAPS_THREAD_STACK:
		if (r->stack_end && addr >= r->stack_end)
			break;
		return snprintf(buf, len, "[stack:%" PRId32 "]", r->tid);
	case MAPS_HUGETLB:
		return snprintf(buf, len, "[anon:hugetlb]");
	case MAPS_SHARED_ANON:
		return snprintf(buf, len, "[anon:shared]");
	case MAPS_BSS:
		return snprintf(buf, len, "%s%s [bss]", r->path,
				r->deleted ? maps_deleted_suffix : "");
	case MAPS_FILE:
		return snprintf(buf, len, "%s%s+0x%" PRIx64, r->path,
				r->deleted ? maps_deleted_suffix : "", off);
	case MAPS_NAMED:
		return snprintf(buf, len, "%s", r->path);
	case MAPS_ANON:
		break;
	}
	return snprintf(buf, len, "[anon]");
}
