/*
 * The unwind helper's work (see unwind_int.h): libdwfl over the module
 * files the collector handed over, the stack walk over the shipped copy,
 * and the names of the frames.  Runs in the helper process (and the fuzz
 * target); nothing here opens a file or reads another process.
 */
#include "config.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind_int.h"

#define UNWIND_PROCS 64		/* Dwfls kept; the oldest is dropped */
/* Names kept per (pid, pc): libdwfl finds a symbol by walking the whole
 * symbol table, tens of microseconds in libc, and sites repeat. */
#define UNWIND_CACHE 1024

struct unwind_file {
	int fd;			/* -1: empty */
	char path[UNWIND_PATH];
};

/* The sample being unwound: what the thread callbacks read. */
struct unwind_ctx {
	int tid;
	const uint64_t *regs;
	const unsigned char *stack;
	uint64_t size;
	uint64_t sp;
};

struct unwind_proc {
	int pid;		/* 0 = free */
	Dwfl *dwfl;
	bool attached;		/* dwfl_attach_state done */
	uint64_t used;		/* last use, for dropping the oldest */
	struct unwind_mod *mods;	/* what the Dwfl was built from */
	size_t n_mods;
	struct unwind_ctx ctx;	/* the attach's argument: fixed address */
};

struct unwind_cached {
	int pid;		/* 0 = empty */
	uint64_t pc;
	struct unwind_frame f;
};

struct unwind_helper {
	struct unwind_file files[UNWIND_FILES];
	struct unwind_proc procs[UNWIND_PROCS];
	struct unwind_cached cache[UNWIND_CACHE];
	uint64_t clock;
	char *debuginfo_path;
	Dwfl_Callbacks callbacks;
};

/* A module's ELF from its slot's descriptor, mapped: the descriptor stays
 * the slot's, so the Dwfls of many processes hold none of their own. */
static int
unwind_find_elf(Dwfl_Module *mod, void **userdata, const char *name,
		Dwarf_Addr base, char **file_name, Elf **elfp)
{
	const struct unwind_file *f = *userdata;
	Elf *elf;

	(void)mod;
	(void)name;
	(void)base;
	(void)file_name;
	if (!f || f->fd < 0)
		return -1;
	elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_cntl(elf, ELF_C_FDREAD) == 0) {
		*elfp = elf;
		return -1;
	}
	if (elf)
		elf_end(elf);
	return -1;
}

/* Sites come from the files' own symbols (.symtab, .dynsym); separate
 * debug files are not looked for (the helper may open nothing), and CFI
 * for unwinding is in .eh_frame. */
static int
unwind_no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
		    Dwarf_Addr base, const char *file_name,
		    const char *debuglink_file, GElf_Word debuglink_crc,
		    char **debuginfo_file_name)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	(void)debuginfo_file_name;
	return -1;
}

struct unwind_helper *
unwind_helper_new(void)
{
	struct unwind_helper *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	elf_version(EV_CURRENT);
	for (size_t i = 0; i < UNWIND_FILES; i++)
		h->files[i].fd = -1;
	h->callbacks.find_elf = unwind_find_elf;
	h->callbacks.find_debuginfo = unwind_no_debuginfo;
	/* A crafted ET_REL file makes libdwfl place its sections: without
	 * this callback it calls a NULL pointer (fuzz-unwind found it). */
	h->callbacks.section_address = dwfl_offline_section_address;
	h->callbacks.debuginfo_path = &h->debuginfo_path;
	return h;
}

static void
unwind_drop(struct unwind_helper *h, struct unwind_proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	for (size_t i = 0; p->pid && i < UNWIND_CACHE; i++)
		if (h->cache[i].pid == p->pid)
			h->cache[i].pid = 0;
	free(p->mods);
	memset(p, 0, sizeof(*p));
}

void
unwind_helper_free(struct unwind_helper *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < UNWIND_PROCS; i++)
		unwind_drop(h, &h->procs[i]);
	for (size_t i = 0; i < UNWIND_FILES; i++)
		if (h->files[i].fd >= 0)
			close(h->files[i].fd);
	free(h);
}

void
unwind_helper_file(struct unwind_helper *h, uint32_t slot, int fd,
		   const char *path)
{
	struct unwind_file *f = &h->files[slot];

	/* A Dwfl that named the slot's old file may not open it yet: the
	 * processes using the slot are built again. */
	for (size_t i = 0; i < UNWIND_PROCS; i++)
		for (size_t j = 0; j < h->procs[i].n_mods; j++)
			if (h->procs[i].mods[j].file == slot) {
				unwind_drop(h, &h->procs[i]);
				break;
			}
	if (f->fd >= 0)
		close(f->fd);
	f->fd = fd;
	snprintf(f->path, sizeof(f->path), "%s", path);
}

/* Reports the modules: the mappings of one file in a row make one
 * module, from its first start to its last end (as libdwfl's own
 * reading of /proc/PID/maps does). */
static int
unwind_report(struct unwind_helper *h, Dwfl *dwfl,
	      const struct unwind_mod *m, size_t n)
{
	dwfl_report_begin(dwfl);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		Dwfl_Module *mod;
		void **ud = NULL;

		while (j < n && m[j].file == m[i].file &&
		       m[j].start >= m[j - 1].end)
			j++;
		mod = dwfl_report_module(dwfl, h->files[m[i].file].path,
					 m[i].start, m[j - 1].end);
		if (mod && dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL,
					    NULL, NULL) && ud)
			*ud = &h->files[m[i].file];
		i = j;
	}
	return dwfl_report_end(dwfl, NULL, NULL) == 0 ? 0 : -ENOEXEC;
}

/* pid's Dwfl for these modules, built again when they changed; NULL on
 * error. */
static struct unwind_proc *
unwind_proc(struct unwind_helper *h, int pid, const struct unwind_mod *mods,
	    size_t n)
{
	struct unwind_proc *p = NULL, *old = &h->procs[0];

	for (size_t i = 0; i < UNWIND_PROCS && !p; i++)
		if (h->procs[i].pid == pid)
			p = &h->procs[i];
	if (p && p->n_mods == n &&
	    (n == 0 || memcmp(p->mods, mods, n * sizeof(*mods)) == 0)) {
		p->used = ++h->clock;
		return p;
	}
	if (p)
		old = p;
	else
		for (size_t i = 0; i < UNWIND_PROCS; i++) {
			if (h->procs[i].pid == 0) {
				old = &h->procs[i];
				break;
			}
			if (h->procs[i].used < old->used)
				old = &h->procs[i];
		}
	unwind_drop(h, old);
	p = old;
	p->mods = malloc(n ? n * sizeof(*mods) : 1);
	p->dwfl = p->mods ? dwfl_begin(&h->callbacks) : NULL;
	if (!p->dwfl || unwind_report(h, p->dwfl, mods, n) < 0) {
		unwind_drop(h, p);
		return NULL;
	}
	memcpy(p->mods, mods, n * sizeof(*mods));
	p->n_mods = n;
	p->pid = pid;
	p->used = ++h->clock;
	return p;
}

static void
unwind_name_in(Dwfl *dwfl, uint64_t pc, struct unwind_frame *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	const char *mname = NULL, *sym = NULL, *base;
	Dwarf_Addr start = 0;
	GElf_Off off = 0;
	GElf_Sym s;

	memset(out, 0, sizeof(*out));
	out->pc = pc;
	if (mod) {
		mname = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL,
					 NULL, NULL);
		sym = dwfl_module_addrinfo(mod, pc, &off, &s, NULL, NULL,
					   NULL);
	}
	out->allocator = mname && unwind_is_allocator(mname);
	if (sym) {
		snprintf(out->name, sizeof(out->name), "%s+0x%llx", sym,
			 (unsigned long long)off);
		return;
	}
	base = mname ? strrchr(mname, '/') : NULL;
	base = base ? base + 1 : mname;
	if (base)
		snprintf(out->name, sizeof(out->name), "[%s]+0x%llx", base,
			 (unsigned long long)(pc - start));
	else
		snprintf(out->name, sizeof(out->name), "0x%llx",
			 (unsigned long long)pc);
}

/* unwind_name_in through the cache. */
static void
unwind_name_cached(struct unwind_helper *h, int pid, Dwfl *dwfl, uint64_t pc,
		   struct unwind_frame *out)
{
	uint64_t k = (pc ^ (uint64_t)pid * 0x9e3779b97f4a7c15ull) *
		     0x9e3779b97f4a7c15ull;
	struct unwind_cached *c = &h->cache[k >> 54 & (UNWIND_CACHE - 1)];

	if (c->pid == pid && c->pc == pc) {
		*out = c->f;
		return;
	}
	unwind_name_in(dwfl, pc, out);
	c->pid = pid;
	c->pc = pc;
	c->f = *out;
}

static pid_t
unwind_next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	struct unwind_ctx *c = dwfl_arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = c;
	return c->tid;
}

/* Only the copied stack is readable: the walk ends where it ends. */
static bool
unwind_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
		   void *dwfl_arg)
{
	struct unwind_ctx *c = dwfl_arg;

	(void)dwfl;
	if (addr < c->sp || addr + sizeof(*result) > c->sp + c->size ||
	    addr + sizeof(*result) < addr)
		return false;
	memcpy(result, c->stack + (addr - c->sp), sizeof(*result));
	return true;
}

static bool
unwind_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwind_ctx *c = thread_arg;
	Dwarf_Word regs[UNWIND_REGS];

	for (size_t i = 0; i < UNWIND_REGS; i++)
		regs[i] = c->regs[i];
	return dwfl_thread_state_registers(thread, 0, UNWIND_REGS, regs);
}

static const Dwfl_Thread_Callbacks unwind_thread_callbacks = {
	.next_thread = unwind_next_thread,
	.memory_read = unwind_memory_read,
	.set_initial_registers = unwind_set_initial_registers,
};

struct unwind_walk {
	struct unwind_frame *out;
	size_t max, n;
	size_t site;		/* index of the first frame outside, or max */
	Dwfl *dwfl;
};

/* Is pc in an allocator's module?  No symbol lookup: cheap. */
static bool
unwind_in_allocator(Dwfl *dwfl, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	const char *name = mod ? dwfl_module_info(mod, NULL, NULL, NULL,
						  NULL, NULL, NULL, NULL) :
				 NULL;

	return name && unwind_is_allocator(name);
}

static int
unwind_frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwind_walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* A return address points after the call: name the call. */
	if (!activation)
		pc--;
	/* A caller's pc in no module is a word the walk misread (past the
	 * copied stack, or a frame without CFI): the walk ends before it.
	 * The first pc, the registers' own, is always kept. */
	if (w->n > 0 && !dwfl_addrmodule(w->dwfl, pc))
		return DWARF_CB_ABORT;
	memset(&w->out[w->n], 0, sizeof(w->out[w->n]));
	w->out[w->n].pc = pc;
	w->out[w->n].allocator = unwind_in_allocator(w->dwfl,
						     w->out[w->n].pc);
	if (w->site == w->max && !w->out[w->n].allocator)
		w->site = w->n;
	/* The site and its callers are all a caller reads. */
	if (++w->n == w->max || w->n > w->site + UNWIND_CALLERS)
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

/* The walk of a WALK request (see unwind_frames in unwind.h). */
static int
unwind_walk(struct unwind_helper *h, struct unwind_proc *p,
	    const struct unwind_req *r, const void *stack,
	    struct unwind_frame *out)
{
	struct unwind_walk w = { .out = out, .max = r->max, .site = r->max,
				 .dwfl = p->dwfl };

	p->ctx = (struct unwind_ctx){ .tid = r->tid, .regs = r->regs,
				      .stack = stack, .size = r->stack_size,
				      .sp = r->regs[7] };
	if (!p->attached) {
		if (!dwfl_attach_state(p->dwfl, NULL, r->pid,
				       &unwind_thread_callbacks, &p->ctx)) {
			/* No CFI walk: the first pc alone. */
			unwind_name_in(p->dwfl, r->regs[16], &out[0]);
			return 1;
		}
		p->attached = true;
	}
	(void)dwfl_getthread_frames(p->dwfl, r->tid, unwind_frame_cb, &w);
	if (w.n == 0) {
		unwind_name_in(p->dwfl, r->regs[16], &out[0]);
		return 1;
	}
	/* Names for the site and its callers, else for the outermost
	 * frame (an allocator memtop does not know). */
	for (size_t i = w.site < w.n ? w.site : w.n - 1; i < w.n; i++)
		unwind_name_cached(h, r->pid, p->dwfl, out[i].pc, &out[i]);
	return (int)w.n;
}

int
unwind_helper_serve(struct unwind_helper *h, const struct unwind_req *r,
		    const struct unwind_mod *mods, const void *data,
		    struct unwind_frame *out)
{
	struct unwind_proc *p = unwind_proc(h, r->pid, mods, r->n_mods);

	if (!p)
		return -ENOEXEC;
	if (r->kind == UNWIND_REQ_WALK)
		return unwind_walk(h, p, r, data, out);
	for (uint32_t i = 0; i < r->n_pcs && i < r->max; i++) {
		uint64_t pc;

		memcpy(&pc, (const unsigned char *)data + i * sizeof(pc),
		       sizeof(pc));
		unwind_name_cached(h, r->pid, p->dwfl, pc, &out[i]);
	}
	return (int)(r->n_pcs < r->max ? r->n_pcs : r->max);
}
