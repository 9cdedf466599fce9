/*
 * The producer's thread only.  See heapobjs.h.
 *
 * A heap probe's record holds exactly what source_heap.c asks for, in
 * the kernel's order (include/uapi/linux/perf_event.h, PERF_RECORD_SAMPLE):
 * IDENTIFIER, TID, TIME, REGS_USER (the registers of sample_regs_user in
 * bit order), then for an entry (and a posix_memalign return) STACK_USER.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "allocs.h"
#include "heapobjs.h"
#include "log.h"
#include "unwind.h"

/* perf's x86 register numbers (arch/x86/include/uapi/asm/perf_regs.h). */
#define HEAP_NREGS 24
#define HEAP_AX 0
#define HEAP_DX 3
#define HEAP_SI 4
#define HEAP_DI 5
#define HEAP_SP 7
#define HEAP_IP 8
#define HEAP_FRAMES 24
#define HEAP_DEPTH 8		/* probed calls pending on one thread */
#define HEAP_MAX_THREADS 65536	/* pending states kept, then cleared */

/* perf's numbering to unwind.h's DWARF one (rax rdx rcx rbx rsi rdi rbp
 * rsp r8-r15 rip). */
static const uint8_t heap_perf_of_dwarf[UNWIND_REGS] = {
	0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8,
};

struct heap_rec {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t regs[HEAP_NREGS];
	const unsigned char *stack;
	uint64_t stack_size;	/* bytes valid */
};

struct heap_pend {
	uint64_t sp;		/* at the entry */
	uint64_t size;		/* bytes asked */
	uint64_t arg;		/* realloc: the old block; posix_memalign:
				 * where the pointer goes */
	uint32_t site;
	enum heap_fn fn;
	bool nested;		/* inside another probed call */
	bool skip;		/* no object: below min_size */
	bool no_site;		/* no memory for its site: counted untracked */
};

struct heap_thread {
	struct heap_pend v[HEAP_DEPTH];
	unsigned n;
};

static bool
heap_u64(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	if (end - *p < 8)
		return false;
	memcpy(v, *p, 8);
	*p += 8;
	return true;
}

static bool
heap_parse(const struct heap_event *ev, const struct perf_event_header *hdr,
	   struct heap_rec *r)
{
	const unsigned char *p = (const unsigned char *)(hdr + 1);
	const unsigned char *end = (const unsigned char *)hdr + hdr->size;
	uint64_t v, mask = ev->regs_user;
	/* The registers read below (source_heap.c asks for these or more):
	 * without them a record would be misread, not counted. */
	uint64_t need = 1ull << HEAP_SP |
			(ev->fn == HEAP_FREE ? 1ull << HEAP_DI :
			 ev->ret ? 1ull << HEAP_AX :
			 1ull << HEAP_DI | 1ull << HEAP_SI | 1ull << HEAP_DX |
			 1ull << HEAP_IP);

	memset(r, 0, sizeof(*r));
	/* Exactly these fields (a recording's attr may say otherwise). */
	if ((ev->sample_type & ~(uint64_t)PERF_SAMPLE_STACK_USER) !=
	    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	     PERF_SAMPLE_REGS_USER) || (mask & need) != need)
		return false;
	if (!heap_u64(&p, end, &v) || !heap_u64(&p, end, &v))
		return false;		/* IDENTIFIER, TID */
	r->pid = (uint32_t)v;
	r->tid = (uint32_t)(v >> 32);
	if (!heap_u64(&p, end, &r->time) || !heap_u64(&p, end, &v))
		return false;		/* TIME, REGS_USER abi */
	if (v == PERF_SAMPLE_REGS_ABI_NONE)
		return false;		/* a kernel thread: not ours */
	for (unsigned b = 0; b < HEAP_NREGS; b++)
		if (((mask >> b) & 1) && !heap_u64(&p, end, &r->regs[b]))
			return false;
	if (mask >> HEAP_NREGS)
		return false;
	if (ev->sample_type & PERF_SAMPLE_STACK_USER) {
		if (!heap_u64(&p, end, &v) || (uint64_t)(end - p) < v)
			return false;
		r->stack = p;
		p += v;
		if (v && (!heap_u64(&p, end, &r->stack_size) ||
			  r->stack_size > v))
			return false;
	}
	return p == end;
}

static struct heap_thread *
heap_thread(struct heapobjs *h, uint32_t tid)
{
	struct heap_thread *t = u64map_get(&h->threads, tid);

	if (t)
		return t;
	if (u64map_count(&h->threads) >= HEAP_MAX_THREADS)
		u64map_clear(&h->threads, free);
	t = calloc(1, sizeof(*t));
	if (t && u64map_put(&h->threads, tid, t) == t) {
		free(t);
		t = NULL;
	}
	return t;
}

/* The site from a walk of the entry's stack copy, or the return address
 * itself when the walk names nothing outside the allocator. */
static int64_t
heap_unwind(struct heapobjs *h, const struct heap_rec *r,
	    const struct unwind_frame *ret)
{
	struct unwind_frame f[HEAP_FRAMES];
	uint64_t regs[UNWIND_REGS];
	int64_t site;
	int n;

	for (size_t i = 0; i < UNWIND_REGS; i++)
		regs[i] = r->regs[heap_perf_of_dwarf[i]];
	n = unwind_frames(h->unw, (int)r->pid, (int)r->tid, regs, r->stack,
			  r->stack_size, f, HEAP_FRAMES);
	h->st.unwound++;
	if (n > 0 && allocs_pick(h->sites, f, n, &site))
		return site;
	/* An allocator memtop does not know: its frame is the site. */
	return objtab_site_intern(h->sites, ret->name, NULL, 0);
}

/* The site of an outermost allocating call: its caller. */
static int64_t
heap_site(struct heapobjs *h, const struct heap_rec *r)
{
	struct heap_site_slot *s;
	struct unwind_frame ret;
	uint64_t ra, pc, k;
	int64_t site;

	if (r->stack_size < 8)
		return objtab_site_intern(h->sites, "[unknown]", NULL, 0);
	memcpy(&ra, r->stack, 8);	/* [rsp] at the entry */
	k = (ra ^ (uint64_t)r->pid * 0x9e3779b97f4a7c15ull) *
	    0x9e3779b97f4a7c15ull;
	s = &h->cache[k >> 52 & (HEAPOBJS_CACHE - 1)];
	if (s->ret == ra && s->pid == (int32_t)r->pid)
		return s->site;
	pc = ra - 1;		/* into the call */
	if (unwind_names(h->unw, (int)r->pid, &pc, 1, &ret) < 1)
		return objtab_site_intern(h->sites, "[unknown]", NULL, 0);
	site = heap_unwind(h, r, &ret);
	/* A caller inside an allocator (strdup) has callers of its own. */
	if (site >= 0 && !ret.allocator)
		*s = (struct heap_site_slot){ .pid = (int32_t)r->pid,
					      .site = (uint32_t)site,
					      .ret = ra };
	return site;
}

static void
heap_entry(struct heapobjs *h, const struct heap_event *ev,
	   const struct heap_rec *r)
{
	struct heap_thread *t = heap_thread(h, r->tid);
	const uint64_t *g = r->regs;
	uint64_t sp = g[HEAP_SP];
	struct heap_pend *p;
	int64_t site;

	if (!t) {			/* no memory for the thread */
		h->st.bad++;
		return;
	}
	/* Calls that began at or below this frame have returned unseen. */
	while (t->n && t->v[t->n - 1].sp <= sp) {
		t->n--;
		h->st.unpaired++;
	}
	if (t->n == HEAP_DEPTH) {
		memmove(&t->v[0], &t->v[1], (HEAP_DEPTH - 1) * sizeof(t->v[0]));
		t->n--;
		h->st.unpaired++;
	}
	p = &t->v[t->n++];
	memset(p, 0, sizeof(*p));
	p->sp = sp;
	p->fn = ev->fn;
	if (t->n > 1) {
		p->nested = true;
		h->st.nested++;
		return;
	}
	h->st.calls++;
	switch (ev->fn) {
	case HEAP_CALLOC:
		if (__builtin_mul_overflow(g[HEAP_DI], g[HEAP_SI], &p->size))
			p->size = UINT64_MAX;
		break;
	case HEAP_REALLOC:
		p->arg = g[HEAP_DI];
		p->size = g[HEAP_SI];
		break;
	case HEAP_MEMALIGN:
		p->arg = g[HEAP_DI];
		p->size = g[HEAP_DX];
		break;
	case HEAP_ALIGNED:
		p->size = g[HEAP_SI];
		break;
	default:
		p->size = g[HEAP_DI];
		break;
	}
	if (p->size < h->min_size) {
		p->skip = true;
		h->st.small++;
		return;
	}
	site = heap_site(h, r);
	p->no_site = site < 0;
	p->site = site < 0 ? 0 : (uint32_t)site;
}

/* free(ptr) at time: the object at ptr ends, unless a newer one is there
 * (a record read late). */
static void
heap_end(struct heapobjs *h, int32_t pid, uint64_t ptr, uint64_t time)
{
	const struct obj *o = ptr ? objtab_find(h->objs, pid, ptr) : NULL;

	if (!o || o->base != ptr || o->birth > time)
		return;
	objtab_unmap(h->objs, pid, o->base, o->size);
	h->st.frees++;
}

static void
heap_new(struct heapobjs *h, const struct heap_rec *r,
	 const struct heap_pend *p, uint64_t base)
{
	struct obj o = { .base = base, .size = p->size ? p->size : 1,
			 .site = p->site, .tid = (int32_t)r->tid,
			 .birth = r->time, .alloc_size = p->size };
	const struct obj *cur = objtab_find(h->objs, (int32_t)r->pid, base);

	if (p->skip || base == 0 || (cur && cur->birth > r->time))
		return;
	/* A size that wraps counts bad; an object the table could not keep
	 * (full, or no memory for it or its site) counts in its untracked. */
	if (o.base + o.size < o.base) {
		h->st.bad++;
		return;
	}
	if (p->no_site) {
		objtab_untrack(h->objs);
		return;
	}
	if (objtab_map(h->objs, (int32_t)r->pid, &o) == 0)
		h->st.objects++;
}

/* posix_memalign's pointer: in the caller's frame (the return's stack
 * copy), else read from the process. */
static uint64_t
heap_out_ptr(const struct heapobjs *h, const struct heap_rec *r,
	     uint64_t where)
{
	uint64_t sp = r->regs[HEAP_SP], v = 0;
	struct iovec local = { &v, sizeof(v) };
	struct iovec remote = { (void *)(uintptr_t)where, sizeof(v) };

	/* where - sp + 8 wraps for a where just below 2^64 (a crafted
	 * file): compared without the + 8. */
	if (where >= sp && r->stack_size >= 8 &&
	    where - sp <= r->stack_size - 8) {
		memcpy(&v, r->stack + (where - sp), 8);
		return v;
	}
	if (h->no_peek ||
	    process_vm_readv((pid_t)r->pid, &local, 1, &remote, 1, 0) != 8)
		return 0;
	return v;
}

static void
heap_return(struct heapobjs *h, const struct heap_event *ev,
	    const struct heap_rec *r)
{
	struct heap_thread *t = u64map_get(&h->threads, r->tid);
	uint64_t sp = r->regs[HEAP_SP] - 8, ax = r->regs[HEAP_AX];
	struct heap_pend p;

	while (t && t->n && t->v[t->n - 1].sp < sp) {
		t->n--;
		h->st.unpaired++;
	}
	if (!t || !t->n || t->v[t->n - 1].sp != sp ||
	    t->v[t->n - 1].fn != ev->fn) {
		h->st.unpaired += !h->sampled;
		return;
	}
	p = t->v[--t->n];
	if (p.nested)
		return;
	switch (p.fn) {
	case HEAP_REALLOC:
		/* realloc(p, 0) frees; a failed one leaves p as it was. */
		if (p.arg && (ax || p.size == 0))
			heap_end(h, (int32_t)r->pid, p.arg, r->time);
		heap_new(h, r, &p, ax);
		break;
	case HEAP_MEMALIGN:
		if (ax == 0)
			heap_new(h, r, &p, heap_out_ptr(h, r, p.arg));
		break;
	default:
		heap_new(h, r, &p, ax);
		break;
	}
}

void
heapobjs_record(struct heapobjs *h, const struct heap_event *ev,
		const struct perf_event_header *hdr)
{
	struct heap_rec r;

	if (!h->objs)
		return;
	if (!heap_parse(ev, hdr, &r)) {
		h->st.bad++;
		return;
	}
	if (ev->fn == HEAP_FREE)
		heap_end(h, (int32_t)r.pid, r.regs[HEAP_DI], r.time);
	else if (ev->ret)
		heap_return(h, ev, &r);
	else
		heap_entry(h, ev, &r);
}

int
heapobjs_init(struct heapobjs *h, struct objtab *sites, struct unwinder *unw,
	      size_t max_objects, uint64_t min_size)
{
	memset(h, 0, sizeof(*h));
	h->sites = sites;
	h->unw = unw;
	h->min_size = min_size;
	h->objs = objtab_new_sharing(max_objects, sites);
	h->cache = calloc(HEAPOBJS_CACHE, sizeof(*h->cache));
	if (!h->objs || !h->cache) {
		heapobjs_fini(h);
		return -ENOMEM;
	}
	return 0;
}

void
heapobjs_fini(struct heapobjs *h)
{
	if (!h)
		return;
	objtab_free(h->objs);
	free(h->cache);
	u64map_clear(&h->threads, free);
	h->objs = NULL;
	h->cache = NULL;
}

void
heapobjs_exec(struct heapobjs *h, int32_t pid, uint64_t time)
{
	if (!h->objs)
		return;
	objtab_drop_older(h->objs, pid, time);
	/* The new image's return addresses are other code. */
	for (size_t i = 0; i < HEAPOBJS_CACHE; i++)
		if (h->cache[i].pid == pid)
			h->cache[i].ret = 0;
}

/* By enum heap_fn. */
static const char *const heap_kinds[] = {
	[HEAP_MALLOC] = "malloc", [HEAP_CALLOC] = "calloc",
	[HEAP_REALLOC] = "realloc", [HEAP_MEMALIGN] = "posix_memalign",
	[HEAP_ALIGNED] = "aligned_alloc", [HEAP_FREE] = "free",
};
#define HEAP_GROUP "memtop_heap:"
#define HEAP_RETURN "__return"

int
heapobjs_event_name(enum heap_fn fn, bool ret, char *buf, size_t len)
{
	const char *kind = (size_t)fn < sizeof(heap_kinds) /
			   sizeof(heap_kinds[0]) ? heap_kinds[fn] : NULL;

	return snprintf(buf, len, "%s%s%s", HEAP_GROUP,
			kind ? kind : "unknown", ret ? HEAP_RETURN : "");
}

bool
heapobjs_event_parse(const char *name, struct heap_event *ev)
{
	size_t g = strlen(HEAP_GROUP);

	if (strncmp(name, HEAP_GROUP, g) != 0)
		return false;
	name += g;
	for (size_t i = 1; i < sizeof(heap_kinds) / sizeof(heap_kinds[0]);
	     i++) {
		size_t k = strlen(heap_kinds[i]);

		if (strncmp(name, heap_kinds[i], k) != 0)
			continue;
		if (name[k] == '\0' ||
		    (i != HEAP_FREE && strcmp(name + k, HEAP_RETURN) == 0)) {
			ev->fn = (enum heap_fn)i;
			ev->ret = name[k] != '\0';
			return true;
		}
	}
	return false;
}
