/*
 * Regions from the kernel's records, and /proc/PID/maps as a seed that
 * only fills the gaps between them.  Collector thread only.  See maps.h.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"

#include "maps_int.h"

/* A copy of r with its own path (NULL path stays NULL). */
static int
maps_dup(struct maps_region *dst, const struct maps_region *r)
{
	*dst = *r;
	if (!r->path)
		return 0;
	dst->path = strdup(r->path);
	return dst->path ? 0 : -ENOMEM;
}

/* The part [lo, hi) of r, its file offset moved along. */
static int
maps_piece(struct maps_region *dst, const struct maps_region *r, uint64_t lo,
	   uint64_t hi)
{
	int err = maps_dup(dst, r);

	if (err)
		return err;
	if (r->kind == MAPS_FILE || r->kind == MAPS_BSS)
		dst->pgoff += lo - r->start;
	dst->start = lo;
	dst->end = hi;
	return 0;
}

/* r starts at at now (at inside it); its file offset moves along. */
static void
maps_trim_start(struct maps_region *r, uint64_t at)
{
	if (r->kind == MAPS_FILE || r->kind == MAPS_BSS)
		r->pgoff += at - r->start;
	r->start = at;
}

/* Whether r's path is one of m's regions' (moved, not copied). */
static bool
maps_owned(const struct maps *m, const struct maps_region *r)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->regions[i].path == r->path)
			return true;
	return false;
}

/* Frees the paths of m's regions that nr covers whole (they go). */
static void
maps_drop_covered(struct maps *m, const struct maps_region *nr)
{
	for (size_t i = 0; i < m->n; i++) {
		struct maps_region *o = &m->regions[i];

		if (o->start >= nr->start && o->end <= nr->end) {
			free(o->path);
			o->path = NULL;
		}
	}
}

/* The region a record describes: kind and path from its name. */
static int
maps_from_record(struct maps_region *nr, const struct maps_region *r,
		 const char *name, size_t len)
{
	static const char zero[] = "/dev/zero (deleted)";

	*nr = *r;
	nr->path = NULL;
	if (len == 6 && memcmp(name, "//anon", 6) == 0)
		len = 0;
	/* With attr.build_id the record has no inode, which maps_classify
	 * wants to tell shared anonymous memory from a deleted file. */
	if (nr->shared && len == sizeof(zero) - 1 &&
	    memcmp(name, zero, len) == 0) {
		nr->kind = MAPS_SHARED_ANON;
		return 0;
	}
	return maps_classify(nr, name, len);
}

/* The end of the executable's last region, or 0 when none is known;
 * found again only once the regions changed. */
static uint64_t
maps_exe_end(const struct maps *m)
{
	struct maps *mm = (struct maps *)m;	/* the cache only */
	uint64_t exe_end = 0;
	const char *exe = NULL;

	if (m->exe_end_gen == m->generation + 1)
		return m->exe_end;
	for (size_t i = 0; i < m->n; i++) {
		const struct maps_region *o = &m->regions[i];

		if (!exe && o->kind == MAPS_FILE && o->pgoff == 0)
			exe = o->path;
		else if (!exe)
			continue;
		if ((o->kind == MAPS_FILE || o->kind == MAPS_BSS) &&
		    o->path && strcmp(o->path, exe) == 0)
			exe_end = o->end;
	}
	mm->exe_end = exe_end;
	mm->exe_end_gen = m->generation + 1;
	return exe_end;
}

/*
 * The kernel's record calls the brk heap "//anon" (the heap is named from
 * mm->brk, which the brk call moves after the record is written), so it
 * is told by where the kernel puts it: above the executable, the lowest
 * file mapping, within the 1 GiB of brk randomisation (arch_randomize_brk
 * on 64-bit; plus slack), where no mmap lands (those go top-down from
 * below the stack).
 */
static bool
maps_is_brk(const struct maps *m, const struct maps_region *r)
{
	const uint64_t reach = (1ull << 30) + (64ull << 20);
	uint64_t exe_end;

	if (r->kind != MAPS_ANON || r->shared)
		return false;
	exe_end = maps_exe_end(m);
	return exe_end && r->start > exe_end && r->start - exe_end <= reach;
}

bool
maps_is_late_brk(const struct maps *m, const struct maps_region *r)
{
	return r->time && maps_is_brk(m, r);
}

int
maps_region_name_in(const struct maps *m, const struct maps_region *r,
		    uint64_t addr, char *buf, size_t len)
{
	struct maps_region heap;

	if (!maps_is_late_brk(m, r))
		return maps_region_name(r, addr, buf, len);
	heap = *r;
	heap.kind = MAPS_HEAP;
	return maps_region_name(&heap, addr, buf, len);
}

/* The region a record of m's process describes, the brk heap told. */
static int
maps_record_region(const struct maps *m, struct maps_region *nr,
		   const struct maps_region *r, const char *name, size_t len)
{
	int err = maps_from_record(nr, r, name, len);

	if (!err && maps_is_brk(m, nr))
		nr->kind = MAPS_HEAP;
	return err;
}

/*
 * The common case, a mapping in a gap: nr goes in place, its .bss
 * neighbour marked, without rebuilding the array.  -EAGAIN when it
 * overlaps a region (maps_insert then rebuilds), 0 or -ENOMEM (nr's path
 * freed).
 */
static int
maps_insert_gap(struct maps *m, struct maps_region *nr)
{
	ptrdiff_t at = maps_floor(m->regions, m->n, nr->start) + 1;
	struct maps_region *r;
	size_t i = (size_t)at;

	if ((at > 0 && m->regions[at - 1].end > nr->start) ||
	    (i < m->n && m->regions[i].start < nr->end))
		return -EAGAIN;
	r = realloc(m->regions, (m->n + 1) * sizeof(*r));
	if (!r) {
		free(nr->path);
		return -ENOMEM;
	}
	memmove(&r[i + 1], &r[i], (m->n - i) * sizeof(*r));
	r[i] = *nr;
	m->regions = r;
	m->n++;
	/* nr may be the .bss of the file before it, or the file of the
	 * anonymous region after it. */
	for (size_t j = i; j <= i + 1 && j < m->n; j++) {
		if (r[j].kind != MAPS_ANON || !maps_bss_of_prev(r, j))
			continue;
		r[j].path = strdup(r[j - 1].path);
		if (r[j].path) {
			r[j].kind = MAPS_BSS;
			r[j].deleted = r[j - 1].deleted;
		}
	}
	m->text_len = SIZE_MAX;
	m->loaded = true;
	m->generation++;
	return 0;
}

/* Whether region o is from a later record than r (both times known). */
static bool
maps_later(const struct maps_region *o, const struct maps_region *r)
{
	return o->time && r->time && o->time > r->time;
}

/* The first region of m from a later record than nr that overlaps
 * [at, nr's end), or NULL. */
static const struct maps_region *
maps_first_later(const struct maps *m, const struct maps_region *nr,
		 uint64_t at)
{
	const struct maps_region *o = maps_first_in(m, at, nr->end);

	for (; o && o < m->regions + m->n && o->start < nr->end; o++)
		if (maps_later(o, nr))
			return o;
	return NULL;
}

/* nr in place of whatever it overlaps; nr's path is m's then, or freed.
 * 0 or -ENOMEM. */
static int
maps_put(struct maps *m, struct maps_region *nr)
{
	struct maps_region *out;
	size_t k = 0;
	int err;

	err = maps_insert_gap(m, nr);
	if (err != -EAGAIN)
		return err;
	err = 0;
	out = calloc(m->n + 2, sizeof(*out));
	if (!out) {
		free(nr->path);
		return -ENOMEM;
	}
	/* Regions move (their paths with them); only a region split in two
	 * needs a second copy of its path.  Nothing is freed before every
	 * allocation succeeded. */
	for (size_t i = 0; i < m->n && !err; i++) {
		struct maps_region *o = &m->regions[i];

		if (o->end <= nr->start || o->start >= nr->end) {
			out[k++] = *o;
			continue;
		}
		if (o->start < nr->start && o->end > nr->end)
			err = maps_piece(&out[k++], o, nr->end, o->end);
		if (!err && o->start < nr->start) {
			out[k] = *o;
			out[k++].end = nr->start;
		} else if (!err && o->end > nr->end) {
			out[k] = *o;
			maps_trim_start(&out[k++], nr->end);
		}
	}
	if (err) {
		/* Only the pieces' paths are this loop's own. */
		for (size_t i = 0; i < k; i++)
			if (out[i].path && !maps_owned(m, &out[i]))
				free(out[i].path);
		free(out);
		free(nr->path);
		return err;
	}
	maps_drop_covered(m, nr);
	out[k++] = *nr;
	free(m->regions);
	m->regions = NULL;
	m->n = 0;
	return maps_take(m, out, k);
}

int
maps_insert(struct maps *m, const struct maps_region *r, const char *name,
	    size_t name_len)
{
	const struct maps_region *o;
	struct maps_region nr, piece;
	uint64_t at, hi, next;
	int err;

	if (r->end <= r->start)
		return 0;
	err = maps_record_region(m, &nr, r, name, name_len);
	if (err)
		return err;
	if (!maps_first_later(m, &nr, nr.start))
		return maps_put(m, &nr);
	/* An older record drained after a later one: only the parts of
	 * its mapping that no later region holds go in. */
	for (at = nr.start; at < nr.end && !err; at = next) {
		o = maps_first_later(m, &nr, at);
		hi = o ? (o->start > at ? o->start : at) : nr.end;
		next = o ? o->end : nr.end;
		if (hi > at && (err = maps_piece(&piece, &nr, at, hi)) == 0)
			err = maps_put(m, &piece);
	}
	free(nr.path);
	return err;
}

int
maps_covering(const struct maps *m, const struct maps_region *r,
	      const char *name, size_t name_len,
	      void (*fn)(void *ctx, uint64_t lo, uint64_t hi), void *ctx)
{
	const struct maps_region *first = r->end > r->start ?
		maps_first_in(m, r->start, r->end) : NULL;
	struct maps_region nr;
	char was[4200], now[4200];
	int err;

	if (!first)
		return 0;
	err = maps_record_region(m, &nr, r, name, name_len);
	if (err)
		return err;
	/* Regions are sorted and do not overlap: from first on, each one
	 * that starts before nr's end overlaps nr. */
	for (size_t i = (size_t)(first - m->regions);
	     i < m->n && m->regions[i].start < nr.end; i++) {
		const struct maps_region *o = &m->regions[i];
		uint64_t lo = o->start > nr.start ? o->start : nr.start;
		uint64_t hi = o->end < nr.end ? o->end : nr.end;

		maps_region_name_in(m, o, lo, was, sizeof(was));
		maps_region_name_in(m, &nr, lo, now, sizeof(now));
		if (strcmp(was, now) != 0)
			fn(ctx, lo, hi);
	}
	free(nr.path);
	return 0;
}

int
maps_copy(struct maps *m, const struct maps *from)
{
	struct maps_region *out = calloc(from->n ? from->n : 1, sizeof(*out));
	size_t k;
	int err = 0;

	if (!out)
		return -ENOMEM;
	for (k = 0; k < from->n && !err; k++)
		err = maps_dup(&out[k], &from->regions[k]);
	if (err) {
		maps_free_regions(out, k);
		return err;
	}
	return maps_take(m, out, k);
}

/* Appends to out (room for every piece) the parts of r outside m's
 * regions. */
static int
maps_gap_pieces(const struct maps *m, const struct maps_region *r,
		struct maps_region *out, size_t *k)
{
	uint64_t at = r->start;
	ptrdiff_t i = maps_floor(m->regions, m->n, r->start);
	int err = 0;

	if (i < 0)
		i = 0;
	for (; (size_t)i < m->n && at < r->end && !err; i++) {
		const struct maps_region *o = &m->regions[i];

		if (o->end <= at)
			continue;
		if (o->start >= r->end)
			break;
		if (o->start > at)
			err = maps_piece(&out[(*k)++], r, at, o->start);
		at = o->end;
	}
	if (!err && at < r->end)
		err = maps_piece(&out[(*k)++], r, at, r->end);
	return err;
}

/*
 * The parts of the n regions src that lie outside m's own, with m's
 * (src[i] mapped at or before time, any when time is 0), as m's regions.
 * 1 when some went in, 0 when none did, -ENOMEM: m as it was, or empty
 * when the .bss marks found no memory (maps_take).
 */
static int
maps_fill_gaps(struct maps *m, const struct maps_region *src, size_t n,
	       uint64_t time)
{
	struct maps_region *out;
	size_t k;
	int ret = 0;

	/* The gap pieces first, after room for m's regions: each src
	 * region splits into at most one piece per region of m it spans,
	 * plus one. */
	out = calloc(m->n * 2 + n * 2 + 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	k = m->n;
	for (size_t i = 0; i < n && ret == 0; i++)
		if (!time || src[i].time <= time)
			ret = maps_gap_pieces(m, &src[i], out, &k);
	if (ret < 0 || k == m->n) {
		for (size_t i = m->n; i < k; i++)
			free(out[i].path);
		free(out);
		return ret;
	}
	/* m's regions move in (paths and all). */
	if (m->n)
		memcpy(out, m->regions, m->n * sizeof(*out));
	free(m->regions);
	m->regions = NULL;
	m->n = 0;
	ret = maps_take(m, out, k);
	return ret < 0 ? ret : 1;
}

size_t
maps_drop_before(struct maps *m, uint64_t time)
{
	size_t k = 0, gone;

	for (size_t i = 0; i < m->n; i++) {
		struct maps_region *o = &m->regions[i];

		if (time && o->time >= time)
			m->regions[k++] = *o;
		else
			free(o->path);
	}
	gone = m->n - k;
	m->n = k;
	if (gone) {
		struct maps_region *r = m->regions;

		/* A .bss mark whose file went is undone (maps_take); out of
		 * memory for a path, the regions all go. */
		m->regions = NULL;
		m->n = 0;
		(void)maps_take(m, r, k);
	}
	return gone;
}

int
maps_inherit(struct maps *m, const struct maps *from, uint64_t time)
{
	struct maps *keep;
	int ret;

	if (!time)
		return maps_copy(m, from);
	/* Nothing of m goes before every allocation succeeded. */
	keep = maps_new(m->pid);
	if (!keep)
		return -ENOMEM;
	ret = maps_copy(keep, m);
	if (ret == 0) {
		(void)maps_drop_before(keep, time);
		ret = maps_fill_gaps(keep, from->regions, from->n, time);
	}
	if (ret >= 0) {
		maps_free_regions(m->regions, m->n);
		m->regions = keep->regions;
		m->n = keep->n;
		keep->regions = NULL;
		keep->n = 0;
		m->text_len = SIZE_MAX;
		m->loaded = true;
		m->generation++;
		ret = 0;
	}
	maps_free(keep);
	return ret;
}

int
maps_refresh_gaps(struct maps *m)
{
	struct maps *seed = maps_new(-1);
	char path[64], *buf = NULL;
	size_t len;
	int ret;

	if (!seed)
		return -ENOMEM;
	if (m->pid <= 0) {
		ret = -ESRCH;
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)m->pid);
	ret = maps_read_file(path, &buf, &len);
	if (ret < 0)
		goto out;
	ret = -ESRCH;		/* a zombie's maps are empty */
	if (len == 0 || (ret = maps_load_text(seed, buf, len)) < 0)
		goto out;
	/* Nothing new (0): no generation bump. */
	ret = maps_fill_gaps(m, seed->regions, seed->n, 0);
	if (ret >= 0)
		maps_probe_threads(m);
out:
	free(buf);
	maps_free(seed);
	return ret;
}
