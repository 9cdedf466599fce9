/*
 * Collector thread only (or the main thread before it starts).  See
 * unwind.h; the split between the collector and the unwind helper is in
 * unwind_int.h.
 *
 * The collector parses no ELF or DWARF here: it reads /proc/PID/maps
 * (kernel text; in replay, names' recorded regions: unwind_mods.c), opens
 * the module files and passes their descriptors,
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

/* Opens slot i's file as pid sees it (in replay, by its path, proved by
 * build id) and hands it over; a file that cannot be opened is not
 * retried while its slot lasts. */
static int
unwind_send_file(struct unwinder *u, int pid, const struct unwind_mod *m)
{
	struct unwind_cfile *f = &u->files[m->file];
	struct maps_region r = { .start = m->start, .end = m->end,
				 .pgoff = m->pgoff, .inode = f->inode,
				 .dev_major = f->dev_major,
				 .dev_minor = f->dev_minor,
				 .kind = MAPS_FILE, .deleted = f->deleted,
				 .path = f->path,
				 .build_id_size = f->build_id_size };
	struct unwind_req q = { .magic = UNWIND_MAGIC,
				.kind = UNWIND_REQ_FILE, .file = m->file };
	struct stat st;
	int fd, ret;

	memcpy(r.build_id, f->build_id, sizeof(r.build_id));
	/* Replay: the recorded pid is no process here; the path, proved. */
	fd = symbols_region_fd(u->names ? 0 : pid, &r, &st);

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

/* A walk's request: registers, the stack kept, at most max frames
 * (1 to UNWIND_WALK_MAX). */
static void
unwind_walk_req(struct unwind_req *q, int tid,
		const uint64_t regs[UNWIND_REGS], uint64_t size, size_t max)
{
	*q = (struct unwind_req){ .kind = UNWIND_REQ_WALK, .tid = tid };
	q->max = (uint32_t)(max < UNWIND_WALK_MAX ? max : UNWIND_WALK_MAX);
	if (q->max == 0)
		q->max = 1;
	q->stack_size = size < UNWIND_MAX_STACK ? size : UNWIND_MAX_STACK;
	memcpy(q->regs, regs, sizeof(q->regs));
}

int
unwind_walk_send(struct unwinder *u, int pid, int tid,
		 const uint64_t regs[UNWIND_REGS], const void *stack,
		 uint64_t size, size_t max)
{
	struct unwind_req q;
	struct unwind_pmods *p;
	struct unwind_pend *e;

	if (u->count == UNWIND_PIPELINE)
		return -EBUSY;
	p = unwind_pmods(u, pid);
	if (!p)
		return -ESRCH;
	unwind_walk_req(&q, tid, regs, size, max);
	e = &u->pend[(u->head + u->count++) % UNWIND_PIPELINE];
	*e = (struct unwind_pend){ .pid = pid, .rip = regs[16], .n = -1,
				   .max = q.max };
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

/* One walk now, outside the queue: the walks in flight (a drain's, the
 * heap probes' walk comes between them) keep their answers, stashed. */
int
unwind_frames(struct unwinder *u, int pid, int tid,
	      const uint64_t regs[UNWIND_REGS], const void *stack,
	      uint64_t size, struct unwind_frame *out, size_t max)
{
	struct unwind_req q;
	struct unwind_pmods *p;
	int n = -EIO;

	if (max == 0)
		return 0;
	unwind_settle(u);
	p = unwind_pmods(u, pid);
	if (!p)
		return -ESRCH;
	unwind_walk_req(&q, tid, regs, size, max);
	if (unwind_send(u, p, &q, stack, q.stack_size) == 0)
		n = unwind_recv(u, u->sb.stats.starts, out, q.max);
	if (n > 0)
		return n;
	unwind_fallback(u, pid, regs[16], &out[0]);
	return 1;
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

bool
unwind_regs_from_perf(uint64_t mask, const void *vals, uint64_t n,
		      uint64_t regs[UNWIND_REGS])
{
	/* perf's bits 0-8 (AX .. IP) to DWARF; R8-R15 (16-23) are 8-15. */
	static const uint8_t dwarf_of[9] = { 0, 3, 2, 1, 4, 5, 6, 7, 16 };
	const unsigned char *p = vals;
	const uint64_t need = 1u << 7 | 1u << 8;	/* SP, IP */

	memset(regs, 0, UNWIND_REGS * sizeof(regs[0]));
	if ((mask & need) != need ||
	    (uint64_t)__builtin_popcountll(mask) != n)
		return false;
	for (unsigned b = 0; b < 64; b++) {
		uint64_t v;

		if (!(mask & UINT64_C(1) << b))
			continue;
		memcpy(&v, p, sizeof(v));
		p += sizeof(v);
		if (b < 9)
			regs[dwarf_of[b]] = v;
		else if (b >= 16 && b < 24)
			regs[b - 8] = v;
	}
	return true;
}
