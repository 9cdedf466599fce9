/*
 * The helpers' seccomp filter (see sandbox_int.h).  What a parse or an
 * unwind through libelf and libdw does: reads and maps the files it was
 * handed, opens separate debug information read-only (build-id,
 * debuglink; the symbols helper only, SANDBOX_OPENS: the unwind helper's
 * opens fail with EPERM), allocates, answers on its socket.  Mappings and protections never
 * executable, opens never for writing (both fail with EPERM: libdw's
 * dlopen of libdebuginfod fails, as it should); the only descriptors it
 * can write to are its socket and /dev/null.  Anything else kills the
 * process, which the collector
 * counts as a failed helper.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "sandbox_int.h"

/* Valgrind's translations are executable mappings the helper makes: under
 * valgrind (the test setup of that name) PROT_EXEC stays allowed. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define SYMBOLS_UNDER_VALGRIND()	RUNNING_ON_VALGRIND
#endif
#endif
#ifndef SYMBOLS_UNDER_VALGRIND
#define SYMBOLS_UNDER_VALGRIND()	0
#endif

#if defined(__x86_64__)
#define SYMBOLS_AUDIT_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SYMBOLS_AUDIT_ARCH	AUDIT_ARCH_AARCH64
#else
#define SYMBOLS_AUDIT_ARCH	0
#endif

#define SYMBOLS_NR	offsetof(struct seccomp_data, nr)
/* The low 32 bits of argument i (little-endian). */
#define SYMBOLS_ARG(i)	(offsetof(struct seccomp_data, args) + 8 * (i))

#define ALLOW_NR(nr) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/* Refused without killing: dlopen (libdw tries libdebuginfod) fails. */
#define SYMBOLS_EPERM	(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

/*
 * nr allowed when (argument i & mask) == 0, else EPERM: jumps to a check
 * that loads the argument, tests it and returns; the syscall number is
 * reloaded for the next rule when nr does not match.
 */
#define ALLOW_NR_ARG_CLEAR(nr, i, mask) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4), \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SYMBOLS_ARG(i)), \
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (mask), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SYMBOLS_EPERM), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/* nr allowed when argument i is a or b. */
#define ALLOW_NR_ARG_IN(nr, i, a, b) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 5), \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SYMBOLS_ARG(i)), \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (a), 2, 0), \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (b), 1, 0), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

#define OPEN_WRITES	(O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | O_PATH | \
			 (O_TMPFILE & ~O_DIRECTORY))

int
sandbox_seccomp_install(unsigned flags)
{
	const unsigned no_exec = SYMBOLS_UNDER_VALGRIND() ? 0 : PROT_EXEC;
	/* Without SANDBOX_OPENS every open is refused (EPERM): the rule
	 * matches openat, else a number no system call has. */
	const unsigned refused = (flags & SANDBOX_OPENS) ? ~0u : __NR_openat;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYMBOLS_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SYMBOLS_NR),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, refused, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SYMBOLS_EPERM),
		/* The rules that only compare the number come first. */
		ALLOW_NR(__NR_read),
		/* Writes on any descriptor: the helper holds none it could
		 * write to but its socket and /dev/null (valgrind, when it
		 * runs memtop, writes to its own). */
		ALLOW_NR(__NR_write),
		ALLOW_NR(__NR_sendto),
		ALLOW_NR(__NR_pread64),
		ALLOW_NR(__NR_recvmsg),
		ALLOW_NR(__NR_lseek),
		ALLOW_NR(__NR_fstat),
		ALLOW_NR(__NR_newfstatat),
		ALLOW_NR(__NR_statx),
		ALLOW_NR(__NR_close),
		ALLOW_NR(__NR_munmap),
		ALLOW_NR(__NR_mremap),
		ALLOW_NR(__NR_brk),
		ALLOW_NR(__NR_madvise),
		ALLOW_NR(__NR_futex),
		ALLOW_NR(__NR_getpid),
		ALLOW_NR(__NR_gettid),
		ALLOW_NR(__NR_clock_gettime),
		ALLOW_NR(__NR_getrandom),
		ALLOW_NR(__NR_sysinfo),		/* qsort's memory check */
		ALLOW_NR(__NR_getcwd),		/* debuginfo paths */
		ALLOW_NR(__NR_readlink),
		ALLOW_NR(__NR_readlinkat),
		ALLOW_NR(__NR_rt_sigreturn),
		ALLOW_NR(__NR_rt_sigprocmask),	/* valgrind, around each call */
		ALLOW_NR(__NR_rt_sigtimedwait),	/* valgrind polls signals */
		ALLOW_NR(__NR_exit),
		ALLOW_NR(__NR_exit_group),
		ALLOW_NR_ARG_CLEAR(__NR_mmap, 2, no_exec),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SYMBOLS_NR),
		ALLOW_NR_ARG_CLEAR(__NR_mprotect, 2, no_exec),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SYMBOLS_NR),
		ALLOW_NR_ARG_CLEAR(__NR_openat, 2, OPEN_WRITES),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SYMBOLS_NR),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SYMBOLS_NR),
		ALLOW_NR_ARG_IN(__NR_fcntl, 1, F_GETFD, F_GETFL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(f) / sizeof(f[0])),
		.filter = f,
	};

	if (SYMBOLS_AUDIT_ARCH == 0)
		return -ENOSYS;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	return 0;
}
