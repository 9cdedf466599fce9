/*
 * The /proc/PID/maps parser and region names, from fixture files
 * (tests/fixtures/maps/: paths with spaces, deleted files, hugetlb, shared
 * anonymous memory, malformed lines), the stack-pointer parser, and live
 * on this process: [heap], [stack] and a blocked thread's [stack:TID].
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "maps-test.h"
#include "maps.h"
#include "testlib.h"

static char *
mtest_read(const char *name, size_t *len)
{
	const char *src = getenv("MEMTOP_SRCDIR");
	char path[4096];
	char *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/tests/fixtures/maps/%s", src ? src : ".",
		 name);
	f = fopen(path, "r");
	if (!f)
		test_skip("fixture %s not found (set MEMTOP_SRCDIR)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		test_skip("cannot read %s", path);
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

static void
mtest_basic(void)
{
	size_t len;
	char *text = mtest_read("basic.maps", &len);
	struct maps *m = maps_new(0);
	uint64_t gen;

	check_eq_i64(maps_load_text(m, text, len), 1);
	check_eq_u64(maps_count(m), 15);
	check_eq_u64(maps_bad_lines(m), 0);
	check_eq_str(maps_test_name(m, 0x55a61d52d000), "/usr/bin/prog+0x0");
	check_eq_str(maps_test_name(m, 0x55a61d531010), "/usr/bin/prog+0x3010");
	check_eq_str(maps_test_name(m, 0x55a61d533000), "/usr/bin/prog [bss]");
	check_eq_str(maps_test_name(m, 0x55a62f530000), "[heap]");
	check_eq_str(maps_test_name(m, 0x7fd6dc000000), "[anon]");
	check_eq_str(maps_test_name(m, 0x7fd6e2432000),
		     "/usr/lib/x86_64-linux-gnu/libc.so.6+0x1d4000");
	check_eq_str(maps_test_name(m, 0x7fd6e2453000), "[vdso]");
	check_eq_str(maps_test_name(m, 0x7ffec7df0000), "[stack]");
	check_eq_str(maps_test_name(m, 0x1000), "(none)");
	check_eq_str(maps_test_name(m, 0x55a61d52f000), "(none)");	/* a gap */
	check(maps_lookup(m, 0x7fd6e225b000) == NULL);	/* end is exclusive */
	check(maps_first_in(m, 0x55a61d52f000, 0x55a61d531000) ==
	      maps_lookup(m, 0x55a61d530000));
	check(maps_first_in(m, 0x10000, 0x20000) == NULL);

	/* A thread's stack pointer names its anonymous region; the main
	 * stack, the heap and file mappings keep their names. */
	gen = maps_generation(m);
	maps_note_thread_sp(m, 4243, 0x7fd6e2259de0);
	check_eq_str(maps_test_name(m, 0x7fd6e1a5b000), "[stack:4243]");
	check(maps_generation(m) != gen);
	maps_note_thread_sp(m, 4244, 0x7ffec7df30e0);
	maps_note_thread_sp(m, 4245, 0x55a62f530000);
	maps_note_thread_sp(m, 4246, 0x55a61d531000);
	maps_note_thread_sp(m, 4247, 0x1000);
	check_eq_str(maps_test_name(m, 0x7ffec7df0000), "[stack]");
	check_eq_str(maps_test_name(m, 0x55a62f530000), "[heap]");
	check_eq_str(maps_test_name(m, 0x55a61d531000), "/usr/bin/prog+0x3000");

	/* The same text again changes nothing; a changed text keeps the
	 * label of a region that kept its start. */
	gen = maps_generation(m);
	check_eq_i64(maps_load_text(m, text, len), 0);
	check_eq_u64(maps_generation(m), gen);
	memcpy(strstr(text, "55a62f54a000"), "55a62f56a000", 12);
	check_eq_i64(maps_load_text(m, text, len), 1);
	check_eq_str(maps_test_name(m, 0x55a62f569000), "[heap]");
	check_eq_str(maps_test_name(m, 0x7fd6e1a5b000), "[stack:4243]");
	maps_free(m);
	free(text);
}

static const char mtest_overflow[] = "ffffffffffffffffff-1 r--p 0 0:0 0\n";

static void
mtest_odd(void)
{
	size_t len;
	char *text = mtest_read("odd.maps", &len);
	struct maps *m = maps_new(0);
	const struct maps_region *r;

	check_eq_i64(maps_load_text(m, text, len), 1);
	/* Not a mapping, end below start, perms "rwzp". */
	check_eq_u64(maps_bad_lines(m), 3);
	check_eq_u64(maps_count(m), 10);
	check_eq_str(maps_test_name(m, 0x7f0000001000),
		     "/tmp/my data/file with spaces.bin+0x3000");
	r = maps_lookup(m, 0x7f0000000000);
	check(r && r->shared && r->kind == MAPS_FILE && !r->deleted);
	check_eq_str(maps_test_name(m, 0x7f0000004000), "/tmp/gone.so (deleted)+0x0");
	check_eq_str(maps_test_name(m, 0x7f0000005800),
		     "/tmp/gone.so (deleted)+0x1800");
	check_eq_str(maps_test_name(m, 0x7f0000006000), "/tmp/gone.so (deleted) [bss]");
	r = maps_lookup(m, 0x7f0000004000);
	check(r && r->deleted && r->inode == 99 && r->dev_major == 0xfe);
	check_eq_str(r ? r->path : "", "/tmp/gone.so");
	check_eq_str(maps_test_name(m, 0x7f0000300000), "[anon:hugetlb]");
	check_eq_str(maps_test_name(m, 0x7f0000400000), "[anon:shared]");
	check_eq_str(maps_test_name(m, 0x7f0000401000), "[anon:my arena]");
	check_eq_str(maps_test_name(m, 0x7f0000402000), "[stack:4711]");
	check_eq_str(maps_test_name(m, 0x7f0000405000),
		     "/tmp/odd name (deleted) (deleted)+0x0");
	check_eq_str(maps_test_name(m, 0x7f0000406000), "/memfd:jit (deleted)+0x0");
	maps_free(m);
	free(text);

	/* Degenerate texts. */
	m = maps_new(0);
	check_eq_i64(maps_load_text(m, "", 0), 1);
	check_eq_u64(maps_count(m), 0);
	check_eq_i64(maps_load_text(m, "1000-2000 r--p 0 0:0 0", 22), 1);
	check_eq_u64(maps_count(m), 1);
	check_eq_str(maps_test_name(m, 0x1800), "[anon]");
	check_eq_i64(maps_load_text(m, "1000-2000 r--p 0 0:0", 20), 1);
	check_eq_u64(maps_count(m), 0);
	check_eq_u64(maps_bad_lines(m), 1);
	check_eq_i64(maps_load_text(m, mtest_overflow, strlen(mtest_overflow)),
		     1);
	check_eq_u64(maps_bad_lines(m), 1);
	maps_free(m);
	maps_free(NULL);
}

static void
mtest_syscall_sp(void)
{
	uint64_t sp = 0;

	check_eq_i64(maps_parse_syscall_sp("202 0x7fd6e225a990 0x109 0x627 "
		"0x0 0x0 0xffffffff 0x7ffec7df30e0 0x7fd6e22e3f16\n", &sp), 0);
	check_eq_u64(sp, 0x7ffec7df30e0);
	check_eq_i64(maps_parse_syscall_sp("-1 0x7ffc1000 0x401100\n", &sp), 0);
	check_eq_u64(sp, 0x7ffc1000);
	check_eq_i64(maps_parse_syscall_sp("running\n", &sp), -EAGAIN);
	check_eq_i64(maps_parse_syscall_sp("", &sp), -EINVAL);
	check_eq_i64(maps_parse_syscall_sp("1 2 3 4\n", &sp), -EINVAL);
	check_eq_i64(maps_parse_syscall_sp("-1 7ffc 0x1\n", &sp), -EINVAL);
	check_eq_i64(maps_parse_syscall_sp("-1 0x0 0x1\n", &sp), -EINVAL);
}

struct mtest_thread {
	int fd;
	pid_t tid;
	uintptr_t local;
	volatile int ready;
};

static void *
mtest_thread_main(void *arg)
{
	struct mtest_thread *t = arg;
	char c;

	t->tid = (pid_t)syscall(SYS_gettid);
	t->local = (uintptr_t)&c;
	__atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
	/* Blocked in read(2): /proc/.../syscall shows the stack pointer. */
	if (read(t->fd, &c, 1) < 0)
		return NULL;
	return NULL;
}

static void
mtest_live(void)
{
	struct mtest_thread t = { 0 };
	struct maps *m = maps_new((int32_t)getpid());
	char want[32], *heap = malloc(100);
	int fds[2], local;
	pthread_t th;
	bool named = false;

	if (pipe(fds) < 0 || !heap)
		test_skip("pipe: %s", strerror(errno));
	t.fd = fds[0];
	check_eq_i64(pthread_create(&th, NULL, mtest_thread_main, &t), 0);
	while (!__atomic_load_n(&t.ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	/* The thread may still be on its way into read(2). */
	for (int i = 0; i < 200 && !named; i++) {
		check(maps_refresh(m) >= 0);
		snprintf(want, sizeof(want), "[stack:%d]", (int)t.tid);
		named = strcmp(maps_test_name(m, t.local), want) == 0;
		if (!named)
			usleep(5000);
	}
	check_eq_str(maps_test_name(m, t.local), want);
	check_eq_str(maps_test_name(m, (uintptr_t)&local), "[stack]");
	if (sbrk(0) != (void *)-1 && (uintptr_t)heap < (uintptr_t)sbrk(0))
		check_eq_str(maps_test_name(m, (uintptr_t)heap), "[heap]");
	check(write(fds[1], "x", 1) == 1);
	pthread_join(th, NULL);
	close(fds[0]);
	close(fds[1]);
	free(heap);
	maps_free(m);

	/* A process that is gone: an error, and the regions stay. */
	m = maps_new(0x7ffffff0);
	check(maps_refresh(m) < 0);
	check_eq_u64(maps_count(m), 0);
	maps_free(m);
}

/*
 * An anonymous mapping made right above a thread stack merges into the
 * stack's VMA: only [start, start + RLIMIT_STACK) above the guard page is
 * the stack, the rest is [anon].  Uses this process's own limit.
 */
static void
mtest_merged_stack(void)
{
	static const char text[] =
		"7f0000000000-7f0000001000 ---p 00000000 00:00 0 \n"
		"7f0000001000-7f0000901000 rw-p 00000000 00:00 0 \n";
	struct maps *m = maps_new(getpid());
	const uint64_t start = 0x7f0000001000, end = 0x7f0000901000;
	struct rlimit rl;

	getrlimit(RLIMIT_STACK, &rl);
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= end - start) {
		printf("note: RLIMIT_STACK %llu: merged-stack case not run\n",
		       (unsigned long long)rl.rlim_cur);
		maps_free(m);
		return;
	}
	check_eq_i64(maps_load_text(m, text, sizeof(text) - 1), 1);
	maps_note_thread_sp(m, 77, start + rl.rlim_cur - 0x1000);
	check_eq_str(maps_test_name(m, start + rl.rlim_cur - 0x1000), "[stack:77]");
	check_eq_str(maps_test_name(m, start), "[stack:77]");
	check_eq_str(maps_test_name(m, start + rl.rlim_cur), "[anon]");
	check_eq_str(maps_test_name(m, end - 0x1000), "[anon]");
	maps_free(m);
}

int
main(void)
{
	mtest_basic();
	mtest_merged_stack();
	mtest_odd();
	mtest_syscall_sp();
	mtest_live();
	return test_result();
}
