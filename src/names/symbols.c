/* Collector thread only.  See symbols.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maps.h"
#include "symbols.h"
#include "sandbox_int.h"
#include "symbols_int.h"

/* How far back a lookup walks past symbols that end before the address,
 * looking for a bigger one that started earlier and still covers it
 * (aliases, nested objects). */
#define SYMBOLS_BACKTRACK 16

struct symbols_file {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	bool failed;		/* the helper choked on it: never retried */
	struct symbols_table t;
	uint64_t lo, hi;
};

struct symbols {
	struct symbols_file **files;
	size_t n_files;
	size_t n_failed;		/* files the helper choked on */
	struct symbols_sandbox *sandbox;
};

/* The helper that reads build ids (symbols_fd_build_id). */
static struct symbols_sandbox *symbols_idbox, *symbols_idbox_own;

struct symbols *
symbols_new(void)
{
	struct symbols *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->sandbox = symbols_sandbox_new();
	if (!s->sandbox) {
		free(s);
		return NULL;
	}
	if (!symbols_idbox)
		symbols_idbox = s->sandbox;
	return s;
}

static void
symbols_file_free(struct symbols_file *f)
{
	if (!f)
		return;
	symbols_table_free(&f->t);
	free(f);
}

void
symbols_free(struct symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_files; i++)
		symbols_file_free(s->files[i]);
	free(s->files);
	if (symbols_idbox == s->sandbox)
		symbols_idbox = NULL;
	symbols_sandbox_free(s->sandbox);
	free(s);
}

/*
 * Opens path if it is a regular file: a device or a FIFO that a process
 * maps must not be opened (opening may block or act).  -errno or fd.
 */
static int
symbols_open_regular(const char *path, struct stat *st)
{
	int fd;

	if (stat(path, st) < 0)
		return -errno;
	if (!S_ISREG(st->st_mode))
		return -ENOEXEC;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	return fd;
}

/*
 * Build ids are read by the parsing helper too, never in this process:
 * through the first live symbols instance's helper (symbols_new), else
 * one of their own started on first use.  A small cache keyed by the
 * file's identity keeps a file from being parsed again at every check.
 */
#define SYMBOLS_ID_CACHE 64

static struct symbols_id_cached {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int len;
	uint8_t id[SYMBOLS_BUILD_ID_MAX];
} symbols_id_cache[SYMBOLS_ID_CACHE];
static unsigned symbols_id_next;

/* The GNU build id of the ELF file at fd into id: its length, or
 * -ENOENT when it has none (or the helper could not read it). */
static int
symbols_fd_build_id(int fd, uint8_t id[SYMBOLS_BUILD_ID_MAX])
{
	struct symbols_table t = { 0 };
	struct symbols_id_cached *c;
	struct stat st;
	int len;

	if (fstat(fd, &st) < 0)
		return -ENOENT;
	for (unsigned i = 0; i < SYMBOLS_ID_CACHE; i++) {
		c = &symbols_id_cache[i];
		if (c->ino == st.st_ino && c->dev == st.st_dev &&
		    c->size == st.st_size && c->ino &&
		    c->mtime.tv_sec == st.st_mtim.tv_sec &&
		    c->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			memcpy(id, c->id, sizeof(c->id));
			return c->len;
		}
	}
	if (!symbols_idbox && !symbols_idbox_own)
		symbols_idbox_own = symbols_sandbox_new();
	if (symbols_sandbox_build_id(symbols_idbox ? symbols_idbox :
				     symbols_idbox_own, fd, &t) == -EIO)
		return -ENOENT;		/* not cached: tried again later */
	len = t.build_id_size && t.build_id_size <= SYMBOLS_BUILD_ID_MAX ?
	      (int)t.build_id_size : -ENOENT;
	if (len > 0)
		memcpy(id, t.build_id, (size_t)len);
	symbols_table_free(&t);
	c = &symbols_id_cache[symbols_id_next++ % SYMBOLS_ID_CACHE];
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->size = st.st_size;
	c->mtime = st.st_mtim;
	c->len = len;
	if (len > 0)
		memcpy(c->id, id, (size_t)len);
	return len;
}

/*
 * Whether the ELF file at fd has the build id r carries (r has none:
 * nothing to check).  Beside the opens below: a file named by a path may
 * be another build by now.
 */
static bool
symbols_build_id_ok(int fd, const struct maps_region *r)
{
	uint8_t id[SYMBOLS_BUILD_ID_MAX];
	int len;
	bool ok;

	if (r->build_id_size == 0)
		return true;
	len = symbols_fd_build_id(fd, id);
	/* The kernel and perf pad a 16-byte id to 20 with zeros. */
	ok = len > 0 && (size_t)len <= r->build_id_size &&
	     memcmp(id, r->build_id, (size_t)len) == 0;
	for (size_t i = len > 0 ? (size_t)len : 0; ok && i < r->build_id_size;
	     i++)
		ok = r->build_id[i] == 0;
	return ok;
}

int
symbols_path_build_id(int32_t pid, const char *path, uint64_t inode,
		      uint8_t id[SYMBOLS_BUILD_ID_MAX])
{
	char full[4200];
	struct stat st;
	int fd, len;

	snprintf(full, sizeof(full), "/proc/%d/root%s", (int)pid, path);
	fd = symbols_open_regular(full, &st);
	/* Gone: the path itself, if it is still the mapped inode. */
	if (fd < 0 && fd != -ENOEXEC && inode) {
		fd = symbols_open_regular(path, &st);
		if (fd >= 0 && (uint64_t)st.st_ino != inode) {
			close(fd);
			fd = -ESTALE;
		}
	}
	if (fd < 0)
		return fd;
	len = symbols_fd_build_id(fd, id);
	close(fd);
	return len;
}

/* path opened only if it is the file r maps: -ESTALE when it is not. */
static int
symbols_open_checked(const char *path, const struct maps_region *r,
		     bool by_inode, struct stat *st)
{
	int fd = symbols_open_regular(path, st);

	if (fd < 0)
		return fd;
	/* A build id proves more than an inode (a capture read on another
	 * machine keeps its build ids, not its inodes). */
	if ((by_inode && !r->build_id_size && r->inode &&
	     (uint64_t)st->st_ino != r->inode) ||
	    !symbols_build_id_ok(fd, r)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* perf's build-id cache: ~/.debug/.build-id/XX/REST/elf. */
static int
symbols_open_cache(const struct maps_region *r, struct stat *st)
{
	const char *home = getenv("HOME");
	char path[4200];
	int at;

	if (!home || !r->build_id_size)
		return -ENOENT;
	at = snprintf(path, sizeof(path), "%s/.debug/.build-id/%02x/", home,
		      r->build_id[0]);
	for (size_t i = 1; i < r->build_id_size && at < 4000; i++)
		at += snprintf(path + at, sizeof(path) - (size_t)at, "%02x",
			       r->build_id[i]);
	snprintf(path + at, sizeof(path) - (size_t)at, "/elf");
	return symbols_open_checked(path, r, false, st);
}

/*
 * Opens the file of mapping r (symbols_int.h): as process pid sees it while it lives
 * (pid > 0), its inode as the maps list (a path may name another file by
 * now), else by the path itself, proven by build id or inode, else from
 * perf's build-id cache.  -ESTALE: only a file that is not the mapped
 * one was found.
 */
int
symbols_region_fd(int32_t pid, const struct maps_region *r, struct stat *st)
{
	bool named = !r->deleted && r->path && r->path[0] == '/';
	char path[4200];
	int fd, ret = -ENOENT;

	if (pid > 0 && named) {
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid,
			 r->path);
		fd = symbols_open_checked(path, r, true, st);
		if (fd >= 0 || fd == -ENOEXEC)
			return fd;
	}
	if (pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64
			 "-%" PRIx64, (int)pid, r->start, r->end);
		fd = symbols_open_regular(path, st);
		if (fd >= 0 || fd == -ENOEXEC)
			return fd;
	}
	/* Gone (or a capture): the path, if something proves it. */
	if (named && (pid <= 0 || r->build_id_size || r->inode)) {
		ret = symbols_open_checked(r->path, r, true, st);
		if (ret >= 0 || ret == -ENOEXEC)
			return ret;
	}
	fd = symbols_open_cache(r, st);
	if (fd >= 0)
		return fd;
	return ret == -ESTALE ? ret : fd == -ESTALE ? fd : ret;
}

/*
 * Has the helper parse fd (see symbols_sandbox.c) into f, and takes the
 * address range of its PT_LOAD segments (memsz, so .bss included).
 * Consumes fd.
 */
static int
symbols_load(struct symbols *s, struct symbols_file *f, int fd)
{
	int ret = symbols_sandbox_parse(s->sandbox, fd, &f->t);

	close(fd);
	if (ret < 0)
		return ret;
	if (f->t.n_loads == 0)
		return -ENOEXEC;
	f->lo = UINT64_MAX;
	for (size_t i = 0; i < f->t.n_loads; i++) {
		const struct symbols_load *l = &f->t.loads[i];

		if (l->vaddr < f->lo)
			f->lo = l->vaddr;
		if (l->vaddr + l->memsz > f->hi)
			f->hi = l->vaddr + l->memsz;
	}
	return 0;
}

struct symbols_file *
symbols_open(struct symbols *s, int32_t pid, const struct maps_region *r,
	     int *err)
{
	struct symbols_file *f, **nf;
	struct stat st;
	int fd, ret;

	fd = symbols_region_fd(pid, r, &st);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	for (size_t i = 0; i < s->n_files; i++) {
		f = s->files[i];
		if (f->dev == st.st_dev && f->ino == st.st_ino &&
		    f->size == st.st_size &&
		    f->mtime.tv_sec == st.st_mtim.tv_sec &&
		    f->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			close(fd);
			*err = f->failed ? -EIO : 0;
			return f->failed ? NULL : f;
		}
	}
	nf = realloc(s->files, (s->n_files + 1) * sizeof(*nf));
	f = calloc(1, sizeof(*f));
	if (!nf || !f) {
		if (nf)
			s->files = nf;
		free(f);
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	s->files = nf;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	ret = symbols_load(s, f, fd);
	if (ret == -EIO) {
		/* Kept, so that a file that crashes or hangs the helper is
		 * parsed once, not at every maps change. */
		symbols_table_free(&f->t);
		f->failed = true;
		s->files[s->n_files++] = f;
		s->n_failed++;
	}
	if (ret < 0) {
		if (ret != -EIO)
			symbols_file_free(f);
		*err = ret;
		return NULL;
	}
	s->files[s->n_files++] = f;
	*err = 0;
	return f;
}

int
symbols_bias(const struct symbols_file *f, const struct maps_region *r,
	     uint64_t *bias)
{
	for (size_t i = 0; i < f->t.n_loads; i++) {
		const struct symbols_load *l = &f->t.loads[i];
		/* Segments are mapped from their page-aligned offset. */
		uint64_t off0 = l->offset & ~(uint64_t)0xfff;

		if (r->pgoff < off0 || r->pgoff >= l->offset + l->filesz)
			continue;
		/* vaddr and offset agree modulo the page size. */
		*bias = r->start - (l->vaddr - l->offset + r->pgoff);
		return 0;
	}
	return -ENOENT;
}

void
symbols_extent(const struct symbols_file *f, uint64_t *lo, uint64_t *hi)
{
	*lo = f->lo;
	*hi = f->hi;
}

/* Index of the last symbol starting at or below vaddr, or -1. */
static ptrdiff_t
symbols_floor(const struct symbols_sym *a, size_t n, uint64_t vaddr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

/* A sized symbol covering vaddr, looking back past a few that end
 * earlier; -1 when none. */
static ptrdiff_t
symbols_covering(const struct symbols_sym *a, size_t n, uint64_t vaddr)
{
	ptrdiff_t i = symbols_floor(a, n, vaddr);

	for (ptrdiff_t k = 0; i >= 0 && k < SYMBOLS_BACKTRACK; i--, k++)
		if (a[i].size && vaddr - a[i].addr < a[i].size)
			return i;
	return -1;
}

const char *
symbols_object(const struct symbols_file *f, uint64_t vaddr, uint64_t *off)
{
	ptrdiff_t i = symbols_covering(f->t.objects, f->t.n_objects, vaddr);

	if (i < 0)
		return NULL;
	*off = vaddr - f->t.objects[i].addr;
	return f->t.pool + f->t.objects[i].name;
}

const char *
symbols_function(const struct symbols_file *f, uint64_t vaddr,
		 uint64_t *off, uint64_t *start)
{
	const struct symbols_sym *a = f->t.functions;
	ptrdiff_t i = symbols_covering(a, f->t.n_functions, vaddr);

	if (i < 0) {
		/* Assembly often leaves functions without a size: take the
		 * closest start before vaddr if nothing sized ends after it. */
		i = symbols_floor(a, f->t.n_functions, vaddr);
		if (i < 0 || a[i].size)
			return NULL;
	}
	*off = vaddr - a[i].addr;
	*start = a[i].addr;
	return f->t.pool + a[i].name;
}

int
symbols_find(const struct symbols_file *f, const char *name, uint64_t *vaddr)
{
	/* Linear: a few names per file, once at start. */
	for (size_t i = 0; i < f->t.n_functions; i++)
		if (strcmp(f->t.pool + f->t.functions[i].name, name) == 0) {
			*vaddr = f->t.functions[i].addr;
			return 0;
		}
	return -ENOENT;
}

int
symbols_file_offset(const struct symbols_file *f, uint64_t vaddr,
		    uint64_t *off)
{
	for (size_t i = 0; i < f->t.n_loads; i++) {
		const struct symbols_load *l = &f->t.loads[i];

		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz) {
			*off = vaddr - l->vaddr + l->offset;
			return 0;
		}
	}
	return -ENOENT;
}

size_t
symbols_file_objects(const struct symbols_file *f)
{
	return f->t.n_objects;
}

size_t
symbols_file_functions(const struct symbols_file *f)
{
	return f->t.n_functions;
}

size_t
symbols_files(const struct symbols *s)
{
	return s->n_files - s->n_failed;
}

void
symbols_helper_start(struct symbols *s)
{
	symbols_sandbox_prestart(s->sandbox);
}

void
symbols_helper_timeout(struct symbols *s, unsigned ms)
{
	symbols_sandbox_timeout(s->sandbox, ms);
}

void
symbols_helper_stats(const struct symbols *s, struct symbols_helper *st)
{
	struct sandbox_stats sb;

	symbols_sandbox_stats(s->sandbox, &sb);
	st->starts = sb.starts;
	st->failures = sb.failures;
	st->pid = sb.pid;
	st->files_failed = s->n_failed;
}
