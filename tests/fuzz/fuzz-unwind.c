#include "config.h"

/*
 * Fuzz target for the unwind helper (src/names/unwind_helper.c,
 * unwind_wire.c; libdwfl underneath): what it does with a crafted module
 * file, with a crafted request, and what the collector makes of a crafted
 * answer (the helper may have been taken over by then).
 *
 * Input: byte 0 % 3 picks the part.
 *   0: the rest is a module file (from a memfd, in slot 0), mapped at
 *      0x1000000 in a process whose stack copy is the file's first 256
 *      bytes; a walk from its function fn and names of three pcs must give
 *      frames with terminated names, as many as asked at most.
 *   1: the rest is a request as the helper reads it (head, modules, data):
 *      unwind_req_check and unwind_mods_check must refuse it or the helper
 *      serve it (against the files earlier inputs left) without harm.
 *   2: the rest is an answer on a socketpair: unwind_ans_recv must refuse
 *      it or return checked frames.
 * A broken invariant is a __builtin_trap().
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target; otherwise
 * tests/fuzz/fuzzmain.c replays tests/fuzz/corpus/unwind (the small ELF
 * file below as a module, a walk and a names request over it, an answer
 * of two frames), then random mutations of the same three kinds.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "elf-build.h"
#include "fuzzmain.h"
#include "base.h"
#include "sandbox_int.h"
#include "unwind_int.h"

#define FUZZ_BASE	0x1000000ull
#define FUZZ_WIRE_MAX	(64 * 1024)
#define FUZZ_PID	4242

static struct unwind_helper *fuzz_h;

static void
fuzz_frames_ok(const struct unwind_frame *f, int n, int max)
{
	if (n > max)
		__builtin_trap();
	for (int i = 0; i < n; i++)
		if (!memchr(f[i].name, '\0', sizeof(f[i].name)))
			__builtin_trap();
}

/* elfb_small with its symbols in an allocated section: libdwfl names
 * only addresses in SHF_ALLOC sections. */
static size_t
fuzz_template(uint8_t *buf, size_t cap)
{
	size_t len = elfb_small(buf, cap);
	Elf64_Ehdr eh;
	Elf64_Shdr sh;

	if (len < sizeof(eh))
		return 0;
	memcpy(&eh, buf, sizeof(eh));
	memcpy(&sh, buf + eh.e_shoff + sizeof(sh), sizeof(sh));
	sh.sh_flags |= SHF_ALLOC;
	memcpy(buf + eh.e_shoff + sizeof(sh), &sh, sizeof(sh));
	return len;
}

static bool
fuzz_is_template(const uint8_t *data, size_t size)
{
	static uint8_t t[4096];
	static size_t len;

	if (!len)
		len = fuzz_template(t, sizeof(t));
	return size == len && memcmp(data, t, len) == 0;
}

static void
fuzz_module(const uint8_t *data, size_t size)
{
	static uint64_t stack[32];
	struct unwind_mod m = { .start = FUZZ_BASE, .file = 0 };
	struct unwind_req r = { .magic = UNWIND_MAGIC, .pid = FUZZ_PID,
				.tid = FUZZ_PID, .n_mods = 1, .max = 8 };
	struct unwind_frame out[UNWIND_MAX_PCS];
	uint64_t pcs[3] = { FUZZ_BASE + 0x84, FUZZ_BASE, FUZZ_BASE - 1 };
	int fd = memfd_create("fuzz-unwind", MFD_CLOEXEC), n;

	if (fd < 0)
		return;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	m.end = FUZZ_BASE + ((size + 4095) & ~4095ull) + 4096;
	unwind_helper_file(fuzz_h, 0, fd, "/fuzz/libfuzz.so");
	memset(stack, 0, sizeof(stack));
	memcpy(stack, data, size < sizeof(stack) ? size : sizeof(stack));
	r.kind = UNWIND_REQ_WALK;
	r.stack_size = sizeof(stack);
	r.regs[7] = (uint64_t)(uintptr_t)stack;
	r.regs[16] = FUZZ_BASE + 0x84;
	if (unwind_req_check(&r) != 0)
		__builtin_trap();
	n = unwind_helper_serve(fuzz_h, &r, &m, stack, out);
	fuzz_frames_ok(out, n, 8);
	r.kind = UNWIND_REQ_NAMES;
	r.stack_size = 0;
	r.n_pcs = 3;
	n = unwind_helper_serve(fuzz_h, &r, &m, pcs, out);
	fuzz_frames_ok(out, n, 3);
	/* The template itself: its function is found. */
	if (fuzz_is_template(data, size) &&
	    (n != 3 || strcmp(out[0].name, "fn+0x4") != 0))
		__builtin_trap();
}

static void
fuzz_request(const uint8_t *data, size_t size)
{
	static struct unwind_mod mods[UNWIND_MAX_MODS];
	struct unwind_frame out[UNWIND_MAX_PCS];
	struct unwind_req r;
	size_t need;
	void *rest;
	int n;

	if (size < sizeof(r))
		return;
	memcpy(&r, data, sizeof(r));
	if (unwind_req_check(&r) != 0 || r.kind == UNWIND_REQ_FILE)
		return;
	need = sizeof(r) + r.n_mods * sizeof(*mods) +
	       (r.kind == UNWIND_REQ_WALK ? r.stack_size :
					    r.n_pcs * sizeof(uint64_t));
	if (size < need)
		return;
	memcpy(mods, data + sizeof(r), r.n_mods * sizeof(*mods));
	if (unwind_mods_check(mods, r.n_mods) != 0)
		return;
	/* An exact copy of the data, so ASan sees a read past it. */
	rest = malloc(need - sizeof(r) - r.n_mods * sizeof(*mods) + 1);
	if (!rest)
		return;
	memcpy(rest, data + sizeof(r) + r.n_mods * sizeof(*mods),
	       need - sizeof(r) - r.n_mods * sizeof(*mods));
	n = unwind_helper_serve(fuzz_h, &r, mods, rest, out);
	fuzz_frames_ok(out, n, (int)r.max);
	free(rest);
}

static void
fuzz_answer(const uint8_t *data, size_t size)
{
	struct sandbox sb = { .sock = -1 };
	struct unwind_frame out[4];
	int sv[2], st = 1, n;

	if (size > FUZZ_WIRE_MAX ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	if (size && write(sv[0], data, size) != (ssize_t)size)
		__builtin_trap();
	close(sv[0]);
	sb.sock = sv[1];
	n = unwind_ans_recv(&sb, base_now_ns() + 1000000000ull, out, 4,
			    &st);
	if (n >= 0 && st > 0)
		__builtin_trap();
	if (n > 0)
		fuzz_frames_ok(out, n, 4);
	free(sb.rb.buf);
	close(sv[1]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!fuzz_h)
		fuzz_h = unwind_helper_new();
	if (size == 0 || !fuzz_h)
		return 0;
	switch (data[0] % 3) {
	case 0:
		fuzz_module(data + 1, size - 1);
		break;
	case 1:
		fuzz_request(data + 1, size - 1);
		break;
	default:
		fuzz_answer(data + 1, size - 1);
		break;
	}
	return 0;
}

/* The three seeds, a few bytes flipped or cut short: the small ELF file; a
 * walk request over it; an answer of two frames. */
static size_t
fuzz_unwind_generate(uint64_t *x, uint8_t *buf, size_t cap)
{
	unsigned kind = (unsigned)(fuzz_next(x) % 3);
	size_t len = 1;

	buf[0] = (uint8_t)kind;
	if (kind == 0) {
		len += fuzz_template(buf + 1, cap - 1);
	} else if (kind == 1) {
		struct unwind_req r = { .magic = UNWIND_MAGIC,
					.kind = UNWIND_REQ_WALK,
					.pid = FUZZ_PID, .tid = FUZZ_PID,
					.n_mods = 1, .max = 8,
					.stack_size = 64 };
		struct unwind_mod m = { .start = FUZZ_BASE,
					.end = FUZZ_BASE + 8192 };

		r.regs[16] = FUZZ_BASE + 0x84;
		memcpy(buf + len, &r, sizeof(r));
		len += sizeof(r);
		memcpy(buf + len, &m, sizeof(m));
		len += sizeof(m);
		memset(buf + len, 0, 64);
		len += 64;
	} else {
		struct unwind_ans_head a = { .magic = UNWIND_MAGIC, .n = 2 };
		struct unwind_frame f[2];

		memset(f, 0, sizeof(f));
		strcpy(f[0].name, "fn+0x4");
		strcpy(f[1].name, "[libc.so.6]+0x10");
		memcpy(buf + len, &a, sizeof(a));
		len += sizeof(a);
		memcpy(buf + len, f, sizeof(f));
		len += sizeof(f);
	}
	return fuzz_flip_cut(x, buf, len);
}

const struct fuzz_target fuzz_target = {
	.name = "fuzz-unwind",
	.generate = fuzz_unwind_generate,
	.seed = 0x756e7731,
	.n_random = 1000,
	.random_max = 4096,
};
