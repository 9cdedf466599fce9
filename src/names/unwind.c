/* Collector thread only.  See unwind.h. */
#include "config.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps.h"
#include "names_int.h"
#include "unwind.h"

#define UNWIND_PROCS 64		/* Dwfls kept; the oldest is dropped */
/* Names kept per (pid, pc): libdwfl finds a symbol by walking the whole
 * symbol table, tens of microseconds in libc, and sites repeat. */
#define UNWIND_CACHE 1024

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
	struct unwind_ctx ctx;	/* the attach's argument: fixed address */
};

struct unwind_cached {
	int pid;		/* 0 = empty */
	uint64_t pc;
	struct unwind_frame f;
};

struct unwinder {
	struct unwind_proc procs[UNWIND_PROCS];
	struct unwind_cached cache[UNWIND_CACHE];
	uint64_t clock;
	char *debuginfo_path;
	Dwfl_Callbacks callbacks;
	struct names *names;	/* modules from here, not /proc (replay) */
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

/*
 * A module's ELF file read whole into memory, its descriptor closed: a
 * Dwfl is kept per process (up to UNWIND_PROCS), and holding a descriptor
 * per module would take them from the channels (RLIMIT_NOFILE).
 */
static int
unwind_find_elf(Dwfl_Module *mod, void **userdata, const char *name,
		Dwarf_Addr base, char **file_name, Elf **elfp)
{
	int fd = dwfl_linux_proc_find_elf(mod, userdata, name, base,
					  file_name, elfp);
	Elf *elf;

	if (fd < 0 || *elfp)
		return fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_cntl(elf, ELF_C_FDREAD) == 0) {
		*elfp = elf;
		close(fd);
		return -1;
	}
	if (elf)
		elf_end(elf);
	return fd;
}

/* Sites come from the files' own symbols (.symtab, .dynsym); separate
 * debug files are not looked for: a lookup per module costs time and
 * descriptors, and CFI for unwinding is in .eh_frame. */
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

struct unwinder *
unwinder_new(void)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	elf_version(EV_CURRENT);
	u->callbacks.find_elf = unwind_find_elf;
	u->callbacks.find_debuginfo = unwind_no_debuginfo;
	u->callbacks.debuginfo_path = &u->debuginfo_path;
	return u;
}

static void
unwind_drop(struct unwind_proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	memset(p, 0, sizeof(*p));
}

void
unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < UNWIND_PROCS; i++)
		unwind_drop(&u->procs[i]);
	free(u);
}

static struct unwind_proc *
unwind_find(struct unwinder *u, int pid)
{
	for (size_t i = 0; i < UNWIND_PROCS; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	return NULL;
}

void
unwind_stale(struct unwinder *u, int pid)
{
	struct unwind_proc *p = unwind_find(u, pid);

	if (p)
		unwind_drop(p);
	for (size_t i = 0; i < UNWIND_CACHE; i++)
		if (u->cache[i].pid == pid)
			u->cache[i].pid = 0;
}

void
unwind_forget(struct unwinder *u, int pid)
{
	unwind_stale(u, pid);
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

void
unwind_use_names(struct unwinder *u, struct names *names)
{
	u->names = names;
}

/* Did names open path as a module of np and prove it (by build id)? */
static bool
unwind_proven(const struct names_proc *np, const char *path)
{
	for (size_t i = 0; i < np->n_mods; i++)
		if (np->mods[i].file && !np->mods[i].pending &&
		    np->mods[i].path && strcmp(np->mods[i].path, path) == 0)
			return true;
	return false;
}

/*
 * pid's modules as names knows them from a capture's MMAP2 records,
 * written as /proc/PID/maps lines for libdwfl, so that a module spans the
 * same pages as live: its file mappings, for the files names opened and
 * proved by build id.  0 when at least one was reported.
 */
static int
unwind_report_names(struct unwinder *u, Dwfl *dwfl, int pid)
{
	struct names_proc *np;
	char *text = NULL;
	size_t len = 0, n = 0;
	FILE *f;
	int ret;

	names_prepare(u->names, pid);
	np = names_proc(u->names, pid);
	f = np ? open_memstream(&text, &len) : NULL;
	if (!f)
		return -1;
	for (size_t i = 0; i < maps_count(np->maps); i++) {
		const struct maps_region *r = maps_at(np->maps, i);

		if (r->kind != MAPS_FILE || !r->path ||
		    !unwind_proven(np, r->path))
			continue;
		fprintf(f, "%llx-%llx r%c%cp %llx %02x:%02x %llu %s\n",
			(unsigned long long)r->start,
			(unsigned long long)r->end,
			r->prot & MAPS_PROT_WRITE ? 'w' : '-',
			r->prot & MAPS_PROT_EXEC ? 'x' : '-',
			(unsigned long long)r->pgoff, r->dev_major,
			r->dev_minor, (unsigned long long)r->inode, r->path);
		n++;
	}
	/* A memstream is written only: read the text through another. */
	if (fclose(f) != 0 || n == 0 || !(f = fmemopen(text, len, "r"))) {
		free(text);
		return -1;
	}
	ret = dwfl_linux_proc_maps_report(dwfl, f);
	fclose(f);
	free(text);
	return ret;
}

/* pid's Dwfl, reporting its modules from /proc (or names) when new; NULL
 * on error. */
static struct unwind_proc *
unwind_proc(struct unwinder *u, int pid)
{
	struct unwind_proc *p = unwind_find(u, pid), *old;

	if (p) {
		p->used = ++u->clock;
		return p;
	}
	old = &u->procs[0];
	for (size_t i = 0; i < UNWIND_PROCS; i++) {
		if (u->procs[i].pid == 0) {
			old = &u->procs[i];
			break;
		}
		if (u->procs[i].used < old->used)
			old = &u->procs[i];
	}
	unwind_drop(old);
	p = old;
	p->dwfl = dwfl_begin(&u->callbacks);
	if (!p->dwfl)
		return NULL;
	dwfl_report_begin(p->dwfl);
	if ((u->names ? unwind_report_names(u, p->dwfl, pid) :
			dwfl_linux_proc_report(p->dwfl, pid)) != 0 ||
	    dwfl_report_end(p->dwfl, NULL, NULL) != 0) {
		unwind_drop(p);
		return NULL;
	}
	p->pid = pid;
	p->used = ++u->clock;
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
unwind_name_cached(struct unwinder *u, int pid, Dwfl *dwfl, uint64_t pc,
		   struct unwind_frame *out)
{
	uint64_t h = (pc ^ (uint64_t)pid * 0x9e3779b97f4a7c15ull) *
		     0x9e3779b97f4a7c15ull;
	struct unwind_cached *c = &u->cache[h >> 54 & (UNWIND_CACHE - 1)];

	if (c->pid == pid && c->pc == pc) {
		*out = c->f;
		return;
	}
	unwind_name_in(dwfl, pc, out);
	c->pid = pid;
	c->pc = pc;
	c->f = *out;
}

int
unwind_name(struct unwinder *u, int pid, uint64_t pc,
	    struct unwind_frame *out)
{
	struct unwind_proc *p = unwind_proc(u, pid);

	if (!p)
		return -ESRCH;
	unwind_name_cached(u, pid, p->dwfl, pc, out);
	return 0;
}

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
	w->out[w->n].pc = activation ? pc : pc - 1;
	w->out[w->n].allocator = unwind_in_allocator(w->dwfl,
						     w->out[w->n].pc);
	w->out[w->n].name[0] = '\0';
	if (w->site == w->max && !w->out[w->n].allocator)
		w->site = w->n;
	/* The site and its callers are all a caller reads. */
	if (++w->n == w->max || w->n > w->site + UNWIND_CALLERS)
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

int
unwind_frames(struct unwinder *u, int pid, int tid,
	      const uint64_t regs[UNWIND_REGS], const void *stack,
	      uint64_t size, struct unwind_frame *out, size_t max)
{
	struct unwind_proc *p = unwind_proc(u, pid);
	struct unwind_walk w = { .out = out, .max = max, .site = max };

	if (!p)
		return -ESRCH;
	if (max == 0)
		return 0;
	p->ctx = (struct unwind_ctx){ .tid = tid, .regs = regs,
				      .stack = stack, .size = size,
				      .sp = regs[7] };
	if (!p->attached) {
		if (!dwfl_attach_state(p->dwfl, NULL, pid,
				       &unwind_thread_callbacks, &p->ctx)) {
			/* No CFI walk: the first pc alone. */
			unwind_name_in(p->dwfl, regs[16], &out[0]);
			return 1;
		}
		p->attached = true;
	}
	w.dwfl = p->dwfl;
	(void)dwfl_getthread_frames(p->dwfl, tid, unwind_frame_cb, &w);
	if (w.n == 0) {
		unwind_name_in(p->dwfl, regs[16], &out[0]);
		return 1;
	}
	/* Names for the site and its callers, else for the outermost
	 * frame (an allocator memtop does not know). */
	for (size_t i = w.site < w.n ? w.site : w.n - 1; i < w.n; i++)
		unwind_name_cached(u, pid, p->dwfl, out[i].pc, &out[i]);
	return (int)w.n;
}
