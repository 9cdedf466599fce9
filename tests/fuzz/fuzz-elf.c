#include "config.h"

/*
 * Fuzz target for the ELF parse that runs in the symbols helper
 * (src/names/symbols_parse.c, libelf and libdw underneath) and for the
 * collector's reading of the helper's answer (src/names/symbols_wire.c),
 * which must hold when the helper has been taken over by a crafted file.
 *
 * Input: byte 0 picks the part.  Even: the rest is an ELF file, parsed
 * from a memfd; its tables must pass symbols_table_check() and survive a
 * trip over a socketpair unchanged.  Odd: the rest is written raw to a
 * socketpair as a helper's answer; symbols_wire_recv() must either refuse
 * it or return tables that pass the check.  A broken invariant is a
 * __builtin_trap().
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target; otherwise
 * tests/fuzz/fuzzmain.c replays tests/fuzz/corpus/elf, then random
 * mutations of a small ELF file with a symbol table and of a well-formed
 * answer.
 */

#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "elf-build.h"
#include "fuzzmain.h"
#include "base.h"
#include "sandbox_int.h"
#include "symbols_int.h"

/* Inputs larger than a socket buffer would need a reader thread. */
#define FUZZ_WIRE_MAX	(64 * 1024)

static int
fuzz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The target's own check of what the collector will index into, apart
 * from symbols_table_check(): names inside a terminated pool. */
static void
fuzz_indexable(const struct symbols_table *t)
{
	const struct symbols_sym *arrs[2] = { t->objects, t->functions };
	size_t ns[2] = { t->n_objects, t->n_functions };

	if (t->pool_len && t->pool[t->pool_len - 1] != '\0')
		__builtin_trap();
	for (int a = 0; a < 2; a++)
		for (size_t i = 0; i < ns[a]; i++)
			if (arrs[a][i].name >= t->pool_len ||
			    (i && arrs[a][i].addr < arrs[a][i - 1].addr))
				__builtin_trap();
}

static void
fuzz_same(const struct symbols_table *a, const struct symbols_table *b)
{
	if (a->n_loads != b->n_loads || a->n_objects != b->n_objects ||
	    a->n_functions != b->n_functions || a->pool_len != b->pool_len)
		__builtin_trap();
	if ((a->n_loads && memcmp(a->loads, b->loads,
				  a->n_loads * sizeof(*a->loads))) ||
	    (a->n_objects && memcmp(a->objects, b->objects,
				    a->n_objects * sizeof(*a->objects))) ||
	    (a->n_functions && memcmp(a->functions, b->functions,
				      a->n_functions * sizeof(*a->functions))) ||
	    (a->pool_len && memcmp(a->pool, b->pool, a->pool_len)))
		__builtin_trap();
}

static void
fuzz_parse(const uint8_t *data, size_t size)
{
	struct symbols_table t, back;
	int fd = fuzz_memfd(data, size), sv[2], ret, status = 1;
	size_t bytes;

	if (fd < 0)
		return;
	memset(&t, 0, sizeof(t));
	ret = symbols_parse(fd, &t, false);
	if (ret > 0 || (ret == 0 && symbols_table_check(&t) != 0))
		__builtin_trap();
	if (ret == 0)
		fuzz_indexable(&t);
	bytes = 64 + t.n_loads * sizeof(*t.loads) +
		(t.n_objects + t.n_functions) * sizeof(struct symbols_sym) +
		t.pool_len;
	if (ret == 0 && bytes <= FUZZ_WIRE_MAX &&
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
		memset(&back, 0, sizeof(back));
		if (symbols_wire_send(sv[0], ret, &t) != 0 ||
		    symbols_wire_recv(sv[1], base_now_ns() + 1000000000ull,
				      &status, &back) != 0 || status != 0)
			__builtin_trap();
		fuzz_same(&t, &back);
		symbols_table_free(&back);
		close(sv[0]);
		close(sv[1]);
	}
	symbols_table_free(&t);
}

static void
fuzz_wire(const uint8_t *data, size_t size)
{
	struct symbols_table t;
	int sv[2], status = 1, ret;

	if (size > FUZZ_WIRE_MAX ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	if (size && write(sv[0], data, size) != (ssize_t)size)
		__builtin_trap();
	close(sv[0]);		/* the helper is gone after its answer */
	memset(&t, 0, sizeof(t));
	ret = symbols_wire_recv(sv[1], base_now_ns() + 1000000000ull,
				&status, &t);
	if (ret == 0 && (status > 0 || symbols_table_check(&t) != 0))
		__builtin_trap();
	if (ret == 0)
		fuzz_indexable(&t);
	if (ret != 0 && (t.loads || t.objects || t.functions || t.pool))
		__builtin_trap();
	symbols_table_free(&t);
	close(sv[1]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		fuzz_wire(data + 1, size - 1);
	else
		fuzz_parse(data + 1, size - 1);
	return 0;
}

/* A template (ELF file, or its tables as the helper's answer) with a few
 * random bytes replaced, or cut short. */
static size_t
fuzz_elf_generate(uint64_t *x, uint8_t *buf, size_t cap)
{
	size_t len = elfb_small(buf + 1, cap - 1) + 1;

	buf[0] = 0;
	if (fuzz_next(x) % 4 == 0) {
		/* The answer a helper would send for it. */
		struct symbols_table t;
		int fd = fuzz_memfd(buf + 1, len - 1), sv[2];
		ssize_t n;

		memset(&t, 0, sizeof(t));
		if (fd >= 0 && symbols_parse(fd, &t, false) == 0 &&
		    socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
			symbols_wire_send(sv[0], 0, &t);
			close(sv[0]);
			n = read(sv[1], buf + 1, cap - 1);
			len = n > 0 ? (size_t)n + 1 : 1;
			buf[0] = 1;
			close(sv[1]);
		}
		symbols_table_free(&t);
	}
	return fuzz_flip_cut(x, buf, len);
}

const struct fuzz_target fuzz_target = {
	.name = "fuzz-elf",
	.generate = fuzz_elf_generate,
	.seed = 0x656c6631,
	.n_random = 1000,
	.random_max = 4096,
};
