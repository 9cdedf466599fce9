/*
 * Inside the names room's unwinder (unwind.h): the unwind helper, a
 * process without privileges (sandbox_int.h) that holds the libdwfl state
 * and walks the stacks; and the wire between it and the collector.
 *
 * The collector (unwind.c) keeps each process's modules from
 * /proc/PID/maps, opens each module file itself (through /proc/PID/root,
 * as the symbols helper's files are opened) and hands it over once per
 * helper lifetime as a descriptor (SCM_RIGHTS) in a file slot; a request
 * then carries the process's modules (start, end, file offset, slot),
 * and either the registers and the stack copy to walk, or pcs to name.
 * The helper reports the modules to libdwfl from the descriptors and
 * reads memory only from the shipped stack; it answers frames, which the
 * collector checks before use.  Requests and answers are fixed-layout
 * structs (one machine, one build, both ends).
 */
#ifndef MEMTOP_UNWIND_INT_H
#define MEMTOP_UNWIND_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind.h"

#define UNWIND_MAGIC		0x6d656d756e773031ull	/* "memunw01" */
#define UNWIND_FILES		256	/* file slots of one helper */
#define UNWIND_MAX_MODS		512	/* modules per request */
#define UNWIND_MAX_STACK	(64u << 10)
#define UNWIND_MAX_PCS		64	/* pcs to name, frames answered */
#define UNWIND_PATH		256	/* a module's name, with its NUL */
#define UNWIND_PIPELINE		32	/* walks in flight (unwind_walk_send) */

enum unwind_req_kind {
	UNWIND_REQ_FILE = 1,	/* a descriptor for slot `file` */
	UNWIND_REQ_WALK,	/* walk regs and the stack of pid */
	UNWIND_REQ_NAMES,	/* name n_pcs pcs of pid */
};

struct unwind_req {
	uint64_t magic;
	uint32_t kind;		/* enum unwind_req_kind */
	int32_t pid, tid;
	uint32_t file;		/* FILE: the slot */
	uint32_t n_mods;	/* WALK, NAMES: modules that follow */
	uint32_t n_pcs;		/* NAMES: pcs that follow */
	uint32_t max;		/* frames wanted, <= UNWIND_MAX_PCS */
	uint32_t pad;
	uint64_t stack_size;	/* WALK: stack bytes that follow */
	uint64_t regs[UNWIND_REGS];
	char path[UNWIND_PATH];	/* FILE: the module's name */
};

/* One mapping of a module file. */
struct unwind_mod {
	uint64_t start, end, pgoff;
	uint32_t file;		/* slot */
	uint32_t pad;
};

struct unwind_ans_head {
	uint64_t magic;
	int32_t status;		/* 0 or -errno */
	uint32_t n;		/* frames that follow */
};

/*
 * 0 when h is a request the helper can serve (kind known, counts and
 * sizes in bounds, slot in range, path terminated), else -EPROTO.
 */
int unwind_req_check(const struct unwind_req *h);
/* 0 when every module's slot is in range and start < end; -EPROTO. */
int unwind_mods_check(const struct unwind_mod *m, size_t n);

/* The helper's state: files by slot, one Dwfl per recent process. */
struct unwind_helper;

struct unwind_helper *unwind_helper_new(void);	/* NULL on ENOMEM */
void unwind_helper_free(struct unwind_helper *h);
/* Slot `slot` now holds fd (consumed), a module called path. */
void unwind_helper_file(struct unwind_helper *h, uint32_t slot, int fd,
			const char *path);
/*
 * Serves one checked WALK or NAMES request: mods (h->n_mods of them),
 * then stack or pcs as the request says.  Frames into out (up to
 * UNWIND_MAX_PCS); the count, or -errno.
 */
int unwind_helper_serve(struct unwind_helper *h, const struct unwind_req *r,
			const struct unwind_mod *mods, const void *data,
			struct unwind_frame *out);
/* The helper process's loop (unwind_wire.c): never returns. */
void unwind_helper_main(void) __attribute__((noreturn));

/* The collector's side of one exchange: the answer, checked.  The count
 * of frames, or -ETIMEDOUT, -EPIPE, -EPROTO (the helper is then to be
 * killed), or the helper's own -errno (status). */
struct sandbox;
int unwind_ans_recv(struct sandbox *sb, uint64_t deadline_ns,
		    struct unwind_frame *out, size_t max, int *status);

/*
 * The collector's side (unwind.c; the module lists in unwind_mods.c).
 */
#include "sandbox_int.h"

struct maps;
struct names;

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
	uint8_t build_id[20];	/* replay: what the file must hold */
	uint8_t build_id_size;
	char path[UNWIND_PATH];
};

/* A process's modules, from /proc/PID/maps (or names, in replay). */
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
	struct names *names;	/* replay: modules from here, not /proc */
	/* Requests not yet written: a drain's walks go in one write, and
	 * the helper walks them in one wake-up. */
	unsigned char *obuf;
	size_t olen, ocap;
	uint64_t clock;
	uint64_t fallbacks;
};

/* pid's module list, or NULL (no LRU tick). */
struct unwind_pmods *unwind_find(struct unwinder *u, int pid);
/* pid's modules, read when new or stale; NULL when pid is gone (or, in
 * replay, has no module names proved). */
struct unwind_pmods *unwind_pmods(struct unwinder *u, int pid);

#endif
