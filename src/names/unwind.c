/*
 * Collector thread only (or the main thread before it starts).  See
 * unwind.h; the split between the collector and the unwind helper is in
 * unwind_int.h.
 *
 * The collector parses no ELF or DWARF here: it reads /proc/PID/maps
 * (kernel text), opens the module files and passes their descriptors,
 * and checks the helper's answers.  When the helper fails (crash, hang
 * past MEMTOP_UNWIND_TIMEOUT_MS, nonsense) it is killed, reaped and
 * counted, and restarted at the next request; the frames of that request
 * are what the collector can say itself: each pc's module and file
 * offset ("[libfoo.so]+0x1f00") or "[unknown]", counted as fallbacks.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maps.h"
#include "maps_int.h"
#include "sandbox_int.h"
#include "symbols_int.h"
#include "unwind_int.h"

#define UNWIND_TIMEOUT_MS 1000
#define UNWIND_PIDS 64		/* module lists kept; the oldest goes */
#define UNWIND_WALK_MAX 32	/* frames a walk answers */

/* A module file as the collector knows it: which slot of the helper. */
struct unwind_cfile {
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint64_t used;		/* 0 = free */
	uint64_t sent;		/* the helper start it was sent to; 0 none */
	bool failed;		/* could not be opened: not sent */
	bool deleted;		/* " (deleted)" in the maps */
	char path[UNWIND_PATH];
};

/* A process's modules, from /proc/PID/maps. */
struct unwind_pmods {
	int pid;		/* 0 = free */
	bool stale;		/* re-read at the next use */
	uint64_t used;
	struct unwind_mod *mods;
	size_t n;
};

/* A walk sent and not yet read (unwind_walk_send). */
struct unwind_pend {
	int pid;
	uint64_t rip;		/* the first pc, for the fallback */
	uint64_t start;		/* the helper start it was sent to; 0 none */
	uint32_t max;
	int n;			/* stashed: frames, else -1 */
};

struct unwinder {
	struct sandbox sb;
	struct unwind_pend pend[UNWIND_PIPELINE];
	size_t head, count;
	/* Answers read ahead of their turn, for a request in between. */
	struct unwind_frame stash[UNWIND_PIPELINE][UNWIND_WALK_MAX];
	struct unwind_cfile files[UNWIND_FILES];
	struct unwind_pmods procs[UNWIND_PIDS];
	struct maps *scratch;	/* parses the maps text */
	/* Requests not yet written: a drain's walks go in one write, and
	 * the helper walks them in one wake-up. */
	unsigned char *obuf;
	size_t olen, ocap;
	uint64_t clock;
	uint64_t fallbacks;
};

static const char *const unwind_allocators[] = {
	"libc.so", "libc-", "ld-linux", "ld64.so", "libstdc++", "libjemalloc",
	"libtcmalloc", "libpthread", "libmimalloc",
};

bool
unwind_is_allocator(const char *module)
{
	const char *base = strrchr(module, '/');

	base = base ? base + 1 : module;
	for (size_t i = 0; i < sizeof(unwind_allocators) /
			       sizeof(unwind_allocators[0]); i++)
		if (strncmp(base, unwind_allocators[i],
			    strlen(unwind_allocators[i])) == 0)
			return true;
	return false;
}

/* The helper is forked now, before the collector thread starts. */
struct unwinder *
unwinder_new(void)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->scratch = maps_new(0);
	if (!u->scratch) {
		free(u);
		return NULL;
	}
	sandbox_init(&u->sb, "unwind helper", unwind_helper_main, 0,
		     "MEMTOP_UNWIND_TIMEOUT_MS", UNWIND_TIMEOUT_MS);
	(void)sandbox_start(&u->sb);	/* else at the first request */
	return u;
}

void
unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	sandbox_fini(&u->sb);
	for (size_t i = 0; i < UNWIND_PIDS; i++)
		free(u->procs[i].mods);
	maps_free(u->scratch);
	free(u->obuf);
	free(u);
}

void
unwinder_stats(const struct unwinder *u, struct unwind_stats *st)
{
	st->starts = u->sb.stats.starts;
	st->failures = u->sb.stats.failures;
	st->pid = u->sb.stats.pid;
	st->fallbacks = u->fallbacks;
}

void
unwinder_timeout(struct unwinder *u, unsigned ms)
{
	u->sb.timeout_ns = (uint64_t)ms * 1000000ull;
}

static struct unwind_pmods *
unwind_find(struct unwinder *u, int pid)
{
	for (size_t i = 0; i < UNWIND_PIDS; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	return NULL;
}

void
unwind_stale(struct unwinder *u, int pid)
{
	struct unwind_pmods *p = unwind_find(u, pid);

	if (p)
		p->stale = true;
}

void
unwind_forget(struct unwinder *u, int pid)
{
	struct unwind_pmods *p = unwind_find(u, pid);

	if (p) {
		free(p->mods);
		memset(p, 0, sizeof(*p));
	}
}

/* The slot of r's file, taking the least recently used one for a new
 * file (sent again at its next use). */
static uint32_t
unwind_slot(struct unwinder *u, const struct maps_region *r)
{
	struct unwind_cfile *f, *old = &u->files[0];

	for (uint32_t i = 0; i < UNWIND_FILES; i++) {
		f = &u->files[i];
		if (f->used && f->inode == r->inode &&
		    f->dev_major == r->dev_major &&
		    f->dev_minor == r->dev_minor &&
		    strncmp(f->path, r->path, sizeof(f->path)) == 0) {
			f->used = ++u->clock;
			return i;
		}
		if (f->used < old->used)
			old = f;
	}
	/* The processes whose modules named the slot's old file read
	 * theirs again. */
	for (size_t i = 0; old->used && i < UNWIND_PIDS; i++)
		for (size_t j = 0; j < u->procs[i].n; j++)
			if (u->procs[i].mods[j].file ==
			    (uint32_t)(old - u->files))
				u->procs[i].stale = true;
	memset(old, 0, sizeof(*old));
	old->deleted = r->deleted;
	old->inode = r->inode;
	old->dev_major = r->dev_major;
	old->dev_minor = r->dev_minor;
	snprintf(old->path, sizeof(old->path), "%s", r->path);
	old->used = ++u->clock;
	return (uint32_t)(old - u->files);
}

/* Does the file of regions[i] have an executable mapping? */
static bool
unwind_has_code(const struct maps *m, const struct maps_region *r)
{
	for (size_t i = 0; i < maps_count(m); i++) {
		const struct maps_region *o = maps_at(m, i);

		if (o->kind == MAPS_FILE && (o->prot & MAPS_PROT_EXEC) &&
		    o->inode == r->inode && o->dev_major == r->dev_major &&
		    o->dev_minor == r->dev_minor)
			return true;
	}
	return false;
}

/* p's modules from /proc/PID/maps: the file mappings of files with code.
 * 0 or -errno (-ESRCH: gone). */
static int
unwind_read_mods(struct unwinder *u, struct unwind_pmods *p)
{
	char path[64], *text = NULL;
	size_t len = 0, n = 0;
	struct unwind_mod *mods;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	ret = maps_read_file(path, &text, &len);
	if (ret == 0)
		ret = maps_load_text(u->scratch, text, len);
	free(text);
	if (ret < 0)
		return ret == -ENOMEM ? ret : -ESRCH;
	mods = calloc(maps_count(u->scratch) + 1, sizeof(*mods));
	if (!mods)
		return -ENOMEM;
	for (size_t i = 0; i < maps_count(u->scratch) && n < UNWIND_MAX_MODS;
	     i++) {
		const struct maps_region *r = maps_at(u->scratch, i);

		if (r->kind != MAPS_FILE || !r->path || r->path[0] != '/' ||
		    !unwind_has_code(u->scratch, r))
			continue;
		mods[n++] = (struct unwind_mod){ .start = r->start,
			.end = r->end, .pgoff = r->pgoff,
			.file = unwind_slot(u, r) };
	}
	free(p->mods);
	p->mods = mods;
	p->n = n;
	p->stale = false;
	return 0;
}

/* pid's modules, read when new or stale; NULL when pid is gone. */
static struct unwind_pmods *
unwind_pmods(struct unwinder *u, int pid)
{
	struct unwind_pmods *p = unwind_find(u, pid);

	if (!p) {
		p = &u->procs[0];
		for (size_t i = 0; i < UNWIND_PIDS; i++) {
			if (u->procs[i].pid == 0) {
				p = &u->procs[i];
				break;
			}
			if (u->procs[i].used < p->used)
				p = &u->procs[i];
		}
		free(p->mods);
		memset(p, 0, sizeof(*p));
		p->pid = pid;
		p->stale = true;
	}
	p->used = ++u->clock;
	if (p->stale && unwind_read_mods(u, p) < 0) {
		unwind_forget(u, pid);
		return NULL;
	}
	return p;
}

/* Opens slot i's file as pid sees it and hands it over; a file that
 * cannot be opened is not retried while its slot lasts. */
static int
unwind_send_file(struct unwinder *u, int pid, const struct unwind_mod *m)
{
	struct unwind_cfile *f = &u->files[m->file];
	struct maps_region r = { .start = m->start, .end = m->end,
				 .pgoff = m->pgoff, .inode = f->inode,
				 .dev_major = f->dev_major,
				 .dev_minor = f->dev_minor,
				 .kind = MAPS_FILE, .deleted = f->deleted,
				 .path = f->path };
	struct unwind_req q = { .magic = UNWIND_MAGIC,
				.kind = UNWIND_REQ_FILE, .file = m->file };
	struct stat st;
	int fd = symbols_region_fd(pid, &r, &st), ret;

	if (fd < 0) {
		f->failed = true;
		return 0;
	}
	snprintf(q.path, sizeof(q.path), "%s", f->path);
	ret = sandbox_hand(&u->sb, fd, &q, sizeof(q));
	close(fd);
	return ret;
}

/* Writes the requests held back: 0, or -EIO (the helper failed). */
static int
unwind_flush_out(struct unwinder *u)
{
	int ret = 0;

	if (u->olen && u->sb.pid &&
	    sandbox_write_by(u->sb.sock, sandbox_deadline(&u->sb), u->obuf,
			     u->olen) < 0) {
		sandbox_failed(&u->sb, "stopped reading");
		ret = -EIO;
	}
	u->olen = 0;
	return ret;
}

/* Holds back len bytes of a request: 0 or -ENOMEM. */
static int
unwind_out(struct unwinder *u, const void *buf, size_t len)
{
	if (u->olen + len > u->ocap) {
		size_t cap = u->ocap ? u->ocap : 65536;
		unsigned char *nb;

		while (cap < u->olen + len)
			cap *= 2;
		nb = realloc(u->obuf, cap);
		if (!nb)
			return -ENOMEM;
		u->obuf = nb;
		u->ocap = cap;
	}
	memcpy(u->obuf + u->olen, buf, len);
	u->olen += len;
	return 0;
}

/* Every file p's modules need is in the running helper: 0, or -EIO (no
 * helper). */
static int
unwind_send_files(struct unwinder *u, const struct unwind_pmods *p)
{
	sandbox_reap(&u->sb);
	for (int tries = 0; tries < 2; tries++) {
		uint64_t start;
		int ret = 0;

		if (u->sb.pid == 0 && sandbox_start(&u->sb) < 0) {
			sandbox_failed(&u->sb, "could not start");
			return -EIO;
		}
		start = u->sb.stats.starts;
		for (size_t i = 0; i < p->n && ret == 0; i++) {
			struct unwind_cfile *f = &u->files[p->mods[i].file];

			if (f->sent == start || f->failed)
				continue;
			/* The requests before it go first, in order. */
			ret = unwind_flush_out(u);
			if (ret == 0)
				ret = unwind_send_file(u, p->pid, &p->mods[i]);
			f->sent = start;
		}
		/* A helper restarted on the way has the first files not. */
		if (ret == 0 && u->sb.stats.starts == start && u->sb.pid)
			return 0;
	}
	return -EIO;
}

/* Queues a request (files sent first, then the head, modules and data,
 * held back until unwind_flush_out): 0, or -EIO when the helper failed
 * (killed and counted), -ENOMEM. */
static int
unwind_send(struct unwinder *u, const struct unwind_pmods *p,
	    struct unwind_req *q, const void *data, size_t len)
{
	size_t olen = u->olen;

	if (unwind_send_files(u, p) < 0)
		return -EIO;
	q->magic = UNWIND_MAGIC;
	q->pid = p->pid;
	q->n_mods = (uint32_t)p->n;
	if (unwind_out(u, q, sizeof(*q)) < 0 ||
	    unwind_out(u, p->mods, p->n * sizeof(*p->mods)) < 0 ||
	    unwind_out(u, data, len) < 0) {
		u->olen = olen;
		return -ENOMEM;
	}
	return 0;
}

/* The next answer of the helper that had it (start): the count, or
 * -errno (-EIO: the helper failed, or is not that one). */
static int
unwind_recv(struct unwinder *u, uint64_t start, struct unwind_frame *out,
	    size_t max)
{
	int n, status = 0;

	if (unwind_flush_out(u) < 0 || start == 0 ||
	    start != u->sb.stats.starts || u->sb.pid == 0)
		return -EIO;
	n = unwind_ans_recv(&u->sb, sandbox_deadline(&u->sb), out, max,
			    &status);
	if (n < 0) {
		sandbox_failed(&u->sb, sandbox_why(n));
		return -EIO;
	}
	return status < 0 ? status : n;
}

/* Every answer in flight read into the stash, so that the socket is free
 * for a request in between. */
static void
unwind_settle(struct unwinder *u)
{
	for (size_t i = 0; i < u->count; i++) {
		size_t k = (u->head + i) % UNWIND_PIPELINE;
		struct unwind_pend *e = &u->pend[k];

		if (e->n >= 0)
			continue;
		e->n = unwind_recv(u, e->start, u->stash[k], e->max);
		if (e->n < 0)
			e->n = 0;	/* the fallback, when its turn comes */
	}
}

/* What the collector says of pc without parsing: its module and file
 * offset, or [unknown]. */
static void
unwind_fallback(struct unwinder *u, int pid, uint64_t pc,
		struct unwind_frame *out)
{
	const struct unwind_pmods *p = unwind_find(u, pid);

	memset(out, 0, sizeof(*out));
	out->pc = pc;
	snprintf(out->name, sizeof(out->name), "[unknown]");
	for (size_t i = 0; p && i < p->n; i++) {
		const struct unwind_mod *m = &p->mods[i];
		const char *path = u->files[m->file].path;
		const char *base = strrchr(path, '/');

		if (pc < m->start || pc >= m->end)
			continue;
		snprintf(out->name, sizeof(out->name), "[%s]+0x%llx",
			 base ? base + 1 : path,
			 (unsigned long long)(pc - m->start + m->pgoff));
		out->allocator = unwind_is_allocator(path);
		break;
	}
	u->fallbacks++;
	log_ratelimited(&u->sb.rl, "unwind helper: %llu frames named without "
			"it (module and offset)",
			(unsigned long long)u->fallbacks);
}

int
unwind_walk_send(struct unwinder *u, int pid, int tid,
		 const uint64_t regs[UNWIND_REGS], const void *stack,
		 uint64_t size, size_t max)
{
	struct unwind_req q = { .kind = UNWIND_REQ_WALK, .tid = tid };
	struct unwind_pmods *p;
	struct unwind_pend *e;

	if (u->count == UNWIND_PIPELINE)
		return -EBUSY;
	p = unwind_pmods(u, pid);
	if (!p)
		return -ESRCH;
	e = &u->pend[(u->head + u->count++) % UNWIND_PIPELINE];
	*e = (struct unwind_pend){ .pid = pid, .rip = regs[16], .n = -1 };
	e->max = (uint32_t)(max < UNWIND_WALK_MAX ? max : UNWIND_WALK_MAX);
	if (e->max == 0)
		e->max = 1;
	q.max = e->max;
	q.stack_size = size < UNWIND_MAX_STACK ? size : UNWIND_MAX_STACK;
	memcpy(q.regs, regs, sizeof(q.regs));
	if (unwind_send(u, p, &q, stack, q.stack_size) == 0)
		e->start = u->sb.stats.starts;
	return 0;
}

int
unwind_walk_recv(struct unwinder *u, struct unwind_frame *out, size_t max)
{
	size_t k = u->head;
	struct unwind_pend *e = &u->pend[k];
	int n = e->n;

	if (u->count == 0)
		return -ENOENT;
	u->head = (u->head + 1) % UNWIND_PIPELINE;
	u->count--;
	if (n < 0)
		n = unwind_recv(u, e->start, u->stash[k], e->max);
	if (n > 0 && (size_t)n <= max) {
		memcpy(out, u->stash[k], (size_t)n * sizeof(*out));
		return n;
	}
	unwind_fallback(u, e->pid, e->rip, &out[0]);
	return 1;
}

int
unwind_frames(struct unwinder *u, int pid, int tid,
	      const uint64_t regs[UNWIND_REGS], const void *stack,
	      uint64_t size, struct unwind_frame *out, size_t max)
{
	int ret;

	if (max == 0)
		return 0;
	unwind_settle(u);
	while (u->count)	/* answers nobody asked for any more */
		(void)unwind_walk_recv(u, out, max);
	ret = unwind_walk_send(u, pid, tid, regs, stack, size, max);
	return ret < 0 ? ret : unwind_walk_recv(u, out, max);
}

int
unwind_names(struct unwinder *u, int pid, const uint64_t *pcs, size_t n,
	     struct unwind_frame *out)
{
	struct unwind_pmods *p;
	struct unwind_req q = { .kind = UNWIND_REQ_NAMES };
	int got = -EIO;

	unwind_settle(u);
	p = unwind_pmods(u, pid);
	if (!p)
		return -ESRCH;
	if (n == 0)
		return 0;
	if (n > UNWIND_MAX_PCS)
		n = UNWIND_MAX_PCS;
	q.n_pcs = q.max = (uint32_t)n;
	if (unwind_send(u, p, &q, pcs, n * sizeof(*pcs)) == 0)
		got = unwind_recv(u, u->sb.stats.starts, out, n);
	if (got == (int)n)
		return got;
	for (size_t i = 0; i < n; i++)
		unwind_fallback(u, pid, pcs[i], &out[i]);
	return (int)n;
}
