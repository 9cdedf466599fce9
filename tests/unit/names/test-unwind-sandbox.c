/*
 * The unwind helper (src/names/unwind.c, unwind_helper.c) seen from
 * outside: it runs as nobody (when the test is root) with no_new_privs and
 * a seccomp filter (/proc/PID/status), and it is the one that names: this
 * process's own functions come back named from the helper, with the
 * collector side parsing nothing.  A helper stopped past its timeout is
 * killed and counted, the request falls back to module+offset names
 * (counted), and the next request is named by a fresh helper.  A helper
 * killed while idle is replaced without a failure of the request.  Walks
 * in flight are answered in order, a whole walk (a heap probe's) between
 * them leaves them their answers, and all fall back when the helper stops
 * with them.  A caller's pc in no module ends a walk.  An answer that
 * breaks the wire's rules is refused.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper-check.h"
#include "base.h"
#include "sandbox_int.h"
#include "testlib.h"
#include "unwind.h"
#include "unwind_int.h"

__attribute__((noinline, used)) static int
unwtest_marker(int x)
{
	return x * 3 + 1;
}

/* Names the marker's pc + 4 and libc's getpid (malloc would be the
 * sanitizers' own): 0 when both came back. */
static int
unwtest_name(struct unwinder *u, struct unwind_frame f[2])
{
	uint64_t pcs[2] = { (uint64_t)(uintptr_t)&unwtest_marker + 4,
			    (uint64_t)(uintptr_t)&getpid };

	return unwind_names(u, (int)getpid(), pcs, 2, f) == 2 ? 0 : -1;
}

static void
unwtest_identity(void)
{
	struct unwinder *u = unwinder_new();
	struct unwind_frame f[2];
	struct unwind_stats st;
	int32_t first;

	check(u != NULL);
	if (!u)
		return;
	unwinder_stats(u, &st);
	check_eq_u64(st.starts, 1);	/* forked by unwinder_new */
	check_eq_i64(unwtest_name(u, f), 0);
	/* Confined before it read anything: it has answered. */
	helper_check_confined(st.pid);
	check_eq_str(f[0].name, "unwtest_marker+0x4");
	check(!f[0].allocator);
	check(strncmp(f[1].name, "[", 1) != 0 &&
	      strstr(f[1].name, "+0x0") != NULL);
	check(f[1].allocator);		/* libc's */
	unwinder_stats(u, &st);
	check_eq_u64(st.failures, 0);
	check_eq_u64(st.fallbacks, 0);
	first = st.pid;

	if (getenv("MEMTOP_WRAPPER")) {
		printf("# SKIP helper restarts: under valgrind\n");
		unwinder_free(u);
		return;
	}
	/* Stopped (a hang): killed after the timeout, counted, and the
	 * request named by the collector alone, module and offset. */
	unwinder_timeout(u, 300);
	kill(first, SIGSTOP);
	check_eq_i64(unwtest_name(u, f), 0);
	check(strncmp(f[0].name, "[test-unwind-sandbox]+0x", 24) == 0);
	unwinder_stats(u, &st);
	check_eq_u64(st.failures, 1);
	check_eq_u64(st.fallbacks, 2);
	check_eq_i64(st.pid, 0);
	/* The next request: a fresh helper, names again (its first parse is
	 * slow in a sanitizer build on a loaded machine: not a hang). */
	unwinder_timeout(u, 20000);
	check_eq_i64(unwtest_name(u, f), 0);
	check_eq_str(f[0].name, "unwtest_marker+0x4");
	unwinder_stats(u, &st);
	check_eq_u64(st.starts, 2);
	check(st.pid > 0 && st.pid != first);
	helper_check_confined(st.pid);
	/* Killed while idle (a crash): replaced, nothing lost, but the dead
	 * one counted. */
	first = st.pid;
	kill(first, SIGKILL);
	helper_wait_dead(first);
	check_eq_i64(unwtest_name(u, f), 0);
	check_eq_str(f[0].name, "unwtest_marker+0x4");
	unwinder_stats(u, &st);
	check_eq_u64(st.starts, 3);
	check_eq_u64(st.failures, 2);
	check_eq_u64(st.fallbacks, 2);
	unwinder_free(u);
}

/* Queues n walks whose first frame is the marker's pc + 4 (a stack of
 * zeros: the walk ends there). */
static void
unwtest_send(struct unwinder *u, int n)
{
	uint64_t regs[UNWIND_REGS] = { 0 };
	static uint64_t stack[64];

	regs[7] = (uint64_t)(uintptr_t)stack;
	regs[16] = (uint64_t)(uintptr_t)&unwtest_marker + 4;
	for (int i = 0; i < n; i++)
		check_eq_i64(unwind_walk_send(u, (int)getpid(), (int)getpid(),
					      regs, stack, sizeof(stack), 8),
			     0);
}

/* A whole walk (unwind_frames, as collector/live/heapobjs.c walks)
 * while a drain's walks are in flight: it is answered, and they still
 * are, in order. */
static void
unwtest_frames_between(struct unwinder *u)
{
	uint64_t regs[UNWIND_REGS] = { 0 };
	static uint64_t stack[64];
	struct unwind_frame f[8];

	regs[7] = (uint64_t)(uintptr_t)stack;
	regs[16] = (uint64_t)(uintptr_t)&unwtest_marker + 4;
	unwtest_send(u, 2);
	check(unwind_frames(u, (int)getpid(), (int)getpid(), regs, stack,
			    sizeof(stack), f, 8) >= 1);
	check_eq_str(f[0].name, "unwtest_marker+0x4");
	for (int i = 0; i < 2; i++) {
		check(unwind_walk_recv(u, f, 8) >= 1);
		check_eq_str(f[0].name, "unwtest_marker+0x4");
	}
	check_eq_i64(unwind_walk_recv(u, f, 8), -ENOENT);
}

/* A walk from the marker's entry (its return address the stack's first
 * word, as the ABI puts it there): a return address in this program is
 * a second frame; one in no module (a word past the copied stack, as a
 * brk from deep in malloc gave: 0x7ffffffff000) ends the walk, never a
 * frame named by a raw address. */
static void
unwtest_misread(void)
{
	struct unwinder *u = unwinder_new();
	uint64_t regs[UNWIND_REGS] = { 0 };
	static uint64_t stack[64];
	struct unwind_frame f[8];
	int n;

	check(u != NULL);
	if (!u)
		return;
	regs[7] = (uint64_t)(uintptr_t)stack;
	regs[16] = (uint64_t)(uintptr_t)&unwtest_marker;
	stack[0] = (uint64_t)(uintptr_t)&unwtest_name + 8;
	n = unwind_frames(u, (int)getpid(), (int)getpid(), regs, stack,
			  sizeof(stack), f, 8);
	check(n >= 2);
	if (n >= 2)
		check(strncmp(f[1].name, "unwtest_name+", 13) == 0);
	stack[0] = 0x7ffffffff000ull;
	n = unwind_frames(u, (int)getpid(), (int)getpid(), regs, stack,
			  sizeof(stack), f, 8);
	check_eq_i64(n, 1);
	check_eq_str(f[0].name, "unwtest_marker+0x0");
	unwinder_free(u);
}

/* Walks in flight: answered in order; a helper stopped with walks in
 * flight fails them all to the fallback, each counted once. */
static void
unwtest_pipeline(void)
{
	struct unwinder *u = unwinder_new();
	struct unwind_frame f[8];
	struct unwind_stats st;

	if (!u)
		return;
	unwtest_send(u, 3);
	for (int i = 0; i < 3; i++) {
		check(unwind_walk_recv(u, f, 8) >= 1);
		check_eq_str(f[0].name, "unwtest_marker+0x4");
	}
	check_eq_i64(unwind_walk_recv(u, f, 8), -ENOENT);
	/* A names request while walks are in flight: each gets its own. */
	unwtest_send(u, 2);
	check_eq_i64(unwtest_name(u, f), 0);
	check_eq_str(f[0].name, "unwtest_marker+0x4");
	check(f[1].allocator);
	for (int i = 0; i < 2; i++) {
		check(unwind_walk_recv(u, f, 8) >= 1);
		check_eq_str(f[0].name, "unwtest_marker+0x4");
	}
	unwtest_frames_between(u);
	unwinder_stats(u, &st);
	check_eq_u64(st.failures, 0);
	check_eq_u64(st.fallbacks, 0);
	if (getenv("MEMTOP_WRAPPER")) {
		unwinder_free(u);
		return;
	}
	unwinder_timeout(u, 300);
	unwtest_send(u, 3);
	kill(st.pid, SIGSTOP);
	for (int i = 0; i < 3; i++) {
		check_eq_i64(unwind_walk_recv(u, f, 8), 1);
		check(strncmp(f[0].name, "[test-unwind-sandbox]+0x", 24) == 0);
	}
	unwinder_stats(u, &st);
	check_eq_u64(st.failures, 1);
	check_eq_u64(st.fallbacks, 3);
	unwinder_free(u);
}

/* One answer written by hand, read back as the collector would. */
static int
unwtest_answer(uint64_t magic, int32_t status, uint32_t n, bool terminated)
{
	struct unwind_ans_head a = { .magic = magic, .status = status,
				     .n = n };
	struct unwind_frame f[4], out[4];
	struct sandbox sb = { .sock = -1 };
	int sv[2], st = 0, ret;

	memset(f, 0, sizeof(f));
	for (size_t i = 0; i < 4; i++)
		snprintf(f[i].name, sizeof(f[i].name), "f%zu", i);
	if (!terminated)
		memset(f[0].name, 'x', sizeof(f[0].name));
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return -errno;
	(void)!write(sv[0], &a, sizeof(a));
	(void)!write(sv[0], f, sizeof(f));
	sb.sock = sv[1];
	ret = unwind_ans_recv(&sb, base_now_ns() + 1000000000ull, out, 2,
			      &st);
	close(sv[0]);
	close(sv[1]);
	free(sb.rb.buf);
	return ret < 0 ? ret : st < 0 ? st : ret;
}

static void
unwtest_wire(void)
{
	check_eq_i64(unwtest_answer(UNWIND_MAGIC, 0, 2, true), 2);
	check_eq_i64(unwtest_answer(UNWIND_MAGIC, -ENOEXEC, 0, true),
		     -ENOEXEC);
	check_eq_i64(unwtest_answer(UNWIND_MAGIC + 1, 0, 2, true), -EPROTO);
	check_eq_i64(unwtest_answer(UNWIND_MAGIC, 0, 3, true), -EPROTO);
	check_eq_i64(unwtest_answer(UNWIND_MAGIC, 0, 2, false), -EPROTO);
	check_eq_i64(unwtest_answer(UNWIND_MAGIC, 5, 0, true), -EPROTO);
}

int
main(void)
{
	unwtest_identity();
	unwtest_misread();
	unwtest_pipeline();
	unwtest_wire();
	return test_result();
}
