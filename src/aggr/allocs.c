/*
 * The producer's thread only.  See allocs.h.
 *
 * allocs_parse() walks a SAMPLE record's fields in the kernel's order
 * (include/uapi/linux/perf_event.h, PERF_RECORD_SAMPLE) up to STACK_USER:
 * what the live event asks (collector/sources/source_alloc.c), and what a
 * perf record of raw_syscalls:sys_exit with --call-graph dwarf writes.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "allocs.h"
#include "frame.h"
#include "log.h"
#include "unwind.h"

#define ALLOCS_FRAMES 24
/* Records decoded before they are applied: the walks in flight. */
#define ALLOCS_QUEUE 32
#define ALLOCS_MAP_ANONYMOUS 0x20
#define ALLOCS_PAGE 4096ull

/* What an allocation record holds. */
struct alloc_rec {
	uint32_t pid, tid;
	uint64_t time;
	int64_t call;		/* the syscall number (RAW id) */
	int64_t ret;
	uint64_t regs[UNWIND_REGS];	/* DWARF order */
	bool have_regs;
	const unsigned char *stack;	/* in the record: at queueing only */
	uint64_t stack_size;	/* bytes valid (dyn_size) */
	/* The call chain's pcs (context markers left out, return
	 * addresses moved into their calls), copied out of the record. */
	uint64_t pcs[ALLOCS_FRAMES];
	int n_pcs;
	bool walking;		/* a walk queued in the unwinder */
};

/* arch/x86/entry/syscalls/syscall_64.tbl */
#define ALLOCS_NR_MMAP 9
#define ALLOCS_NR_MUNMAP 11
#define ALLOCS_NR_BRK 12
#define ALLOCS_NR_MREMAP 25

enum alloc_call
allocs_call(int64_t nr)
{
	switch (nr) {
	case ALLOCS_NR_MMAP:
		return ALLOC_MMAP;
	case ALLOCS_NR_MUNMAP:
		return ALLOC_MUNMAP;
	case ALLOCS_NR_MREMAP:
		return ALLOC_MREMAP;
	case ALLOCS_NR_BRK:
		return ALLOC_BRK;
	default:
		return ALLOC_NONE;
	}
}
#define ALLOCS_RDI 5
#define ALLOCS_RSI 4
#define ALLOCS_RDX 1
#define ALLOCS_R10 10

struct allocs_cur {
	const unsigned char *p, *end;
};

static bool
allocs_u64(struct allocs_cur *c, uint64_t *v)
{
	if (c->end - c->p < 8)
		return false;
	memcpy(v, c->p, 8);
	c->p += 8;
	return true;
}

static bool
allocs_skip(struct allocs_cur *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n)
		return false;
	c->p += n;
	return true;
}

/* REGS_USER: the abi, then a u64 per bit of the mask; the registers
 * unwind.h needs into r->regs, in DWARF order. */
static bool
allocs_regs(struct allocs_cur *c, uint64_t mask, struct alloc_rec *r)
{
	uint64_t abi, n = (uint64_t)__builtin_popcountll(mask);
	const unsigned char *vals;

	if (!allocs_u64(c, &abi))
		return false;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		return true;
	vals = c->p;
	if (!allocs_skip(c, 8 * n))
		return false;
	/* Without SP and IP (the mask below asks for more) none is kept. */
	r->have_regs = unwind_regs_from_perf(mask, vals, n, r->regs) &&
		       (mask & ALLOCS_REGS_MASK) == ALLOCS_REGS_MASK;
	return true;
}

/*
 * CALLCHAIN: its pcs into r, context markers left out, return addresses
 * moved into their calls.  A frame-pointer walk that left the stack ends
 * in 0 (or garbage below the first page): no frame there or after, and
 * libdwfl would put 0 - 1 in whatever module it likes.
 */
static bool
allocs_chain(struct allocs_cur *c, struct alloc_rec *r)
{
	uint64_t nr, v;
	bool ended = false;

	if (!allocs_u64(c, &nr) || nr > 4096)
		return false;
	for (uint64_t i = 0; i < nr; i++) {
		if (!allocs_u64(c, &v))
			return false;
		if (v >= (uint64_t)PERF_CONTEXT_MAX || ended ||
		    r->n_pcs == ALLOCS_FRAMES)
			continue;	/* a context marker */
		if (v < ALLOCS_PAGE) {
			ended = true;
			continue;
		}
		r->pcs[r->n_pcs] = r->n_pcs ? v - 1 : v;
		r->n_pcs++;
	}
	return true;
}

/* Walks the fields of ev's sample_type; false when the record is short
 * or has a field of variable size before STACK_USER that is not read
 * here (READ, BRANCH_STACK). */
static bool
allocs_parse(const struct allocs_event *ev,
	     const struct perf_event_header *hdr, struct alloc_rec *r)
{
	uint64_t st = ev->sample_type, v, raw_size = 0;
	struct allocs_cur c = { (const unsigned char *)(hdr + 1),
				(const unsigned char *)hdr + hdr->size };
	const unsigned char *raw = NULL;

	memset(r, 0, sizeof(*r));
	if (!(st & PERF_SAMPLE_TID) || !(st & PERF_SAMPLE_RAW) ||
	    !(st & PERF_SAMPLE_REGS_USER) ||
	    (st & (PERF_SAMPLE_READ | PERF_SAMPLE_BRANCH_STACK)))
		return false;
	if ((st & PERF_SAMPLE_IDENTIFIER) && !allocs_u64(&c, &v))
		return false;
	if ((st & PERF_SAMPLE_IP) && !allocs_u64(&c, &v))
		return false;
	if (!allocs_u64(&c, &v))		/* TID */
		return false;
	r->pid = (uint32_t)v;
	r->tid = (uint32_t)(v >> 32);
	if ((st & PERF_SAMPLE_TIME) && !allocs_u64(&c, &r->time))
		return false;
	/* ADDR ID STREAM_ID CPU PERIOD: a u64 each, not read. */
	if (!allocs_skip(&c, 8 * (uint64_t)__builtin_popcountll(st &
		(PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
		 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD))))
		return false;
	if ((st & PERF_SAMPLE_CALLCHAIN) && !allocs_chain(&c, r))
		return false;
	if (c.end - c.p < 4)			/* RAW: u32 size, data */
		return false;
	memcpy(&v, c.p, 4);
	raw_size = (uint32_t)v;
	raw = c.p + 4;
	if (!allocs_skip(&c, 4 + raw_size))
		return false;
	if (ev->ret_off < 0 || (uint64_t)ev->ret_off + 8 > raw_size ||
	    ev->id_off < 0 || (uint64_t)ev->id_off + 8 > raw_size)
		return false;
	memcpy(&r->ret, raw + ev->ret_off, 8);
	memcpy(&r->call, raw + ev->id_off, 8);
	if (!allocs_regs(&c, ev->regs_user, r))
		return false;
	if (st & PERF_SAMPLE_STACK_USER) {
		if (!allocs_u64(&c, &v))
			return false;
		r->stack = c.p;
		if (!allocs_skip(&c, v))
			return false;
		if (v && (!allocs_u64(&c, &r->stack_size) ||
			  r->stack_size > v))
			return false;
	}
	/* Fields after STACK_USER (WEIGHT, DATA_SRC, ...) are not read. */
	return c.p == c.end || st >= PERF_SAMPLE_STACK_USER << 1;
}

bool
allocs_pick(struct objtab *t, const struct unwind_frame *f, int n,
	    int64_t *site)
{
	const char *callers[OBJTAB_CALLERS] = { NULL };
	int k = 0;

	while (k < n && f[k].allocator)
		k++;
	if (k == n)
		return false;
	for (int i = 0; i < OBJTAB_CALLERS && k + 1 + i < n; i++)
		callers[i] = f[k + 1 + i].name;
	*site = objtab_site_intern(t, f[k].name, callers, OBJTAB_CALLERS);
	return *site >= 0;
}

/* The site of r: its DWARF walk (queued by allocs_queue), else its call
 * chain, else unknown. */
static int64_t
allocs_site(struct allocs *a, struct alloc_rec *r)
{
	struct unwind_frame f[ALLOCS_FRAMES], g[ALLOCS_FRAMES];
	int64_t site;
	int n = -1, m = 0;

	if (r->walking)
		n = unwind_walk_recv(a->unw, f, ALLOCS_FRAMES);
	r->walking = false;
	if (n > 0 && allocs_pick(a->objs, f, n, &site)) {
		a->st.unwound++;
		return site;
	}
	if (r->n_pcs > 0)
		m = unwind_names(a->unw, (int)r->pid, r->pcs,
				 (size_t)r->n_pcs, g);
	if (m > 0 && allocs_pick(a->objs, g, m, &site)) {
		a->st.chained++;
		return site;
	}
	a->st.unknown++;
	/* An allocator memtop does not know: its own frames are the site
	 * (man page, OBJECTS). */
	if (n > 0)
		return objtab_site_intern(a->objs, f[n - 1].name, NULL, 0);
	return objtab_site_intern(a->objs, "[unknown]", NULL, 0);
}

/*
 * The objects of pid in [base, base + size) born after `time`, however
 * many.  A launched command's records come through per-CPU rings drained
 * one after the other, so an munmap (or mmap) may be read after a newer
 * mmap of the same range: the newer objects are put back over whatever
 * the older record changed.  Up to ALLOCS_KEEP overlapping objects are
 * looked at in buf, more in a heap array.
 */
#define ALLOCS_KEEP 8

struct allocs_keep {
	struct obj buf[ALLOCS_KEEP];
	struct obj *o;		/* buf or a heap array */
	size_t n;
};

/* 0, or -ENOMEM: more than ALLOCS_KEEP newer objects overlap (a record
 * read late) and there is no memory to keep them (the caller leaves the
 * range as it is).  A record in order finds none: no copy, no memory. */
static int
allocs_newer(struct allocs *a, int32_t pid, uint64_t base, uint64_t size,
	     uint64_t time, struct allocs_keep *k)
{
	struct obj *newer = k->buf;
	size_t n = objtab_newer(a->objs, pid, base, size, time, newer,
				ALLOCS_KEEP);

	if (n > ALLOCS_KEEP) {
		newer = malloc(n * sizeof(*newer));
		if (!newer)
			return -ENOMEM;
		n = objtab_newer(a->objs, pid, base, size, time, newer, n);
	}
	k->o = newer;
	k->n = n;
	return 0;
}

/* The newer objects put back (each not kept counts untracked:
 * objtab_map). */
static void
allocs_restore(struct allocs *a, int32_t pid, struct allocs_keep *k)
{
	for (size_t i = 0; i < k->n; i++)
		(void)objtab_map(a->objs, pid, &k->o[i]);
	if (k->o != k->buf)
		free(k->o);
}

/* objtab_unmap for a record of `time`, sparing newer objects.  Without
 * memory to look at them the range keeps its objects, as objtab_unmap
 * keeps an object it has no memory to split: stale names, none lost. */
static void
allocs_unmap(struct allocs *a, int32_t pid, uint64_t base, uint64_t size,
	     uint64_t time)
{
	struct allocs_keep k;

	if (allocs_newer(a, pid, base, size, time, &k) < 0)
		return;
	objtab_unmap(a->objs, pid, base, size);
	allocs_restore(a, pid, &k);
}

/* pid's break (0: not known), its slot taken from the process idle
 * longest when every slot is used (-a sees many processes). */
static uint64_t *
allocs_brk(struct allocs *a, int32_t pid)
{
	size_t i, old = 0;

	for (i = 0; i < a->n_brks; i++) {
		if (a->brks[i].pid == pid)
			break;
		if (a->brks[i].used < a->brks[old].used)
			old = i;
	}
	if (i == a->n_brks) {
		i = a->n_brks < ALLOCS_BRKS ? a->n_brks++ : old;
		a->brks[i].pid = pid;
		a->brks[i].brk = 0;
	}
	a->brks[i].used = ++a->brk_clock;
	return &a->brks[i].brk;
}

static void
allocs_new(struct allocs *a, struct alloc_rec *r, uint64_t base,
	   uint64_t size, uint64_t asked)
{
	int64_t site = allocs_site(a, r);
	struct obj o = { .base = base,
			 .size = (size + ALLOCS_PAGE - 1) & ~(ALLOCS_PAGE - 1),
			 .site = site < 0 ? 0 : (uint32_t)site,
			 .tid = (int32_t)r->tid, .birth = r->time,
			 .alloc_size = asked };
	struct allocs_keep k;

	/* A length that wraps (a crafted recording: the kernel fails such a
	 * call) did not decode. */
	if (o.size == 0 || o.base + o.size < o.base) {
		a->st.bad++;
		return;
	}
	/* No memory for its site, or for the newer objects it overlaps:
	 * not kept. */
	if (site < 0 || allocs_newer(a, (int32_t)r->pid, o.base, o.size,
				     o.birth, &k) < 0) {
		objtab_untrack(a->objs);
		return;
	}
	if (objtab_map(a->objs, (int32_t)r->pid, &o) == 0 &&
	    a->st.objects++ < 64)
		log_msg("object %#llx+%llu of pid %d: %s",
			(unsigned long long)o.base,
			(unsigned long long)o.size, (int)r->pid,
			objtab_site(a->objs, o.site)->site);
	allocs_restore(a, (int32_t)r->pid, &k);
}

/* brk: growth is an object from the old break, shrinking ends objects.
 * brk(0) (glibc's first call in a new image) only notes the break; a
 * move from a break not known counts an object untracked and notes it. */
static void
allocs_on_brk(struct allocs *a, struct alloc_rec *r)
{
	uint64_t *brk = allocs_brk(a, (int32_t)r->pid), now = (uint64_t)r->ret;

	/* brk(0) asks where the break is: a new image's first call. */
	if (r->regs[ALLOCS_RDI] == 0) {
		*brk = now;
		return;
	}
	/* A move of a break not known (a process that began before memtop
	 * watched, or whose slot went to others): whatever it made is not
	 * known, counted as one object not kept (an upper bound: the move
	 * may have shrunk the heap or failed). */
	if (*brk == 0)
		objtab_untrack(a->objs);
	else if (now > *brk)
		allocs_new(a, r, *brk, now - *brk, now - *brk);
	else if (now < *brk)
		allocs_unmap(a, (int32_t)r->pid, now, *brk - now, r->time);
	*brk = now;
}

/* Applies one queued record, in the order they were read. */
static void
allocs_apply(struct allocs *a, struct alloc_rec *r)
{
	const uint64_t *g = r->regs;

	switch (allocs_call(r->call)) {
	case ALLOC_MMAP:
		if (g[ALLOCS_R10] & ALLOCS_MAP_ANONYMOUS)
			allocs_new(a, r, (uint64_t)r->ret, g[ALLOCS_RSI],
				   g[ALLOCS_RSI]);
		else	/* a file mapping replaces what was there */
			allocs_unmap(a, (int32_t)r->pid, (uint64_t)r->ret,
				     g[ALLOCS_RSI], r->time);
		break;
	case ALLOC_MUNMAP:
		allocs_unmap(a, (int32_t)r->pid, g[ALLOCS_RDI],
			     g[ALLOCS_RSI], r->time);
		break;
	case ALLOC_MREMAP:
		allocs_unmap(a, (int32_t)r->pid, g[ALLOCS_RDI],
			     g[ALLOCS_RSI], r->time);
		allocs_new(a, r, (uint64_t)r->ret, g[ALLOCS_RDX],
			   g[ALLOCS_RDX]);
		break;
	case ALLOC_BRK:
		allocs_on_brk(a, r);
		break;
	case ALLOC_NONE:
		break;
	}
	if (r->walking) {	/* a walk no object needed: its answer */
		struct unwind_frame f[ALLOCS_FRAMES];

		(void)unwind_walk_recv(a->unw, f, ALLOCS_FRAMES);
	}
}

/* Does r make an object (so its stack is to be walked)? */
static bool
allocs_makes(const struct alloc_rec *r)
{
	switch (allocs_call(r->call)) {
	case ALLOC_MMAP:
		return r->regs[ALLOCS_R10] & ALLOCS_MAP_ANONYMOUS;
	case ALLOC_MREMAP:
		return true;
	case ALLOC_BRK:
		return r->regs[ALLOCS_RDI] != 0;
	default:
		return false;
	}
}

void
allocs_flush(struct allocs *a)
{
	for (size_t i = 0; i < a->n_queued; i++)
		allocs_apply(a, &a->queue[i]);
	a->n_queued = 0;
}

/*
 * Decodes one record into the queue and sends its walk to the unwind
 * helper, which walks while more records are read: a drain's walks cost
 * one wake-up of the helper, not one each.  The queue is applied, in
 * order, when full and at allocs_flush (the end of each drain).
 */
void
allocs_queue(struct allocs *a, const struct allocs_event *ev,
	     const struct perf_event_header *hdr)
{
	struct alloc_rec *r = &a->queue[a->n_queued];

	a->st.events++;
	if (!allocs_parse(ev, hdr, r) || !r->have_regs) {
		a->st.bad++;
		return;
	}
	if (r->ret < 0 && r->ret > -4096)
		return;		/* the call failed: nothing changed */
	/* A file mapping: the process has a module the walks from here on
	 * must know. */
	if (allocs_call(r->call) == ALLOC_MMAP &&
	    !(r->regs[ALLOCS_R10] & ALLOCS_MAP_ANONYMOUS))
		unwind_stale(a->unw, (int)r->pid);
	r->walking = allocs_makes(r) && r->stack_size &&
		     unwind_walk_send(a->unw, (int)r->pid, (int)r->tid,
				      r->regs, r->stack, r->stack_size,
				      ALLOCS_FRAMES) == 0;
	r->stack = NULL;
	if (++a->n_queued == ALLOCS_QUEUE)
		allocs_flush(a);
}

void
allocs_record(struct allocs *a, const struct allocs_event *ev,
	      const struct perf_event_header *hdr)
{
	allocs_queue(a, ev, hdr);
	allocs_flush(a);
}

int
allocs_init(struct allocs *a, size_t max_objects)
{
	memset(a, 0, sizeof(*a));
	a->objs = objtab_new(max_objects);
	a->queue = calloc(ALLOCS_QUEUE, sizeof(*a->queue));
	a->unw = a->queue ? unwinder_new() : NULL;
	if (!a->objs || !a->unw) {
		allocs_fini(a);
		return -ENOMEM;
	}
	return 0;
}

void
allocs_frame(const struct allocs *a, struct frame *f)
{
	struct unwind_stats us = { 0 };

	f->objects_lost = a->st.lost + a->st.bad;
	if (a->unw)
		unwinder_stats(a->unw, &us);
	f->names_unwind_fallbacks = us.fallbacks;
}

void
allocs_use_names(struct allocs *a, struct names *names)
{
	if (a->unw)
		unwind_use_names(a->unw, names);
}

void
allocs_fini(struct allocs *a)
{
	if (!a)
		return;
	objtab_free(a->objs);
	unwinder_free(a->unw);
	free(a->queue);
	a->queue = NULL;
	a->n_queued = 0;
	a->objs = NULL;
	a->unw = NULL;
}

void
allocs_exec(struct allocs *a, int32_t pid, uint64_t time)
{
	if (!a->objs)
		return;
	objtab_drop_older(a->objs, pid, time);
	unwind_stale(a->unw, pid);
}

void
allocs_exit(struct allocs *a, int32_t pid)
{
	if (a->unw)
		unwind_forget(a->unw, pid);
	/* Its break slot is the first taken by a new process (used 0),
	 * kept until then for its records still queued or read late. */
	for (size_t i = 0; i < a->n_brks; i++)
		if (a->brks[i].pid == pid)
			a->brks[i].used = 0;
}
