/*
 * The names test program: memory whose names memtop must find.  It faults
 * one page in each of
 *   exe-data   names_global_data (.data of this executable)
 *   exe-bss    names_global_array (.bss of this executable)
 *   lib-data   names_lib_array (.data of libnames-lib.so)
 *   heap       a malloc'd buffer ([heap])
 *   stack      a second thread's stack ([stack:TID])
 *   file       a shared mapping of a file (PATH+0x2000)
 *   private    a private mapping of the same file (PATH+0x1000)
 *   gone       a private mapping of PATH.gone, unmapped at once after
 *              its page is touched (PATH.gone+0x1000): only the kernel's
 *              MMAP2 record ever tells of it
 * each after MADV_DONTNEED, so the fault happens now whatever the loader
 * or malloc did before, and writes a JSON report of the page addresses
 * and the names expected.  Then it lingers (the thread blocked in a
 * system call, where memtop can read its stack pointer) and exits 0.
 * With --linger-ms 0 it lives a few milliseconds; the report's
 * "lived_us" says how long, from exec to exit.  --no-stack leaves the
 * stack page out of the report (a thread that never blocks while memtop
 * looks has no [stack:TID] label).
 *
 * Records out of time order: --stop-exec M stops its parent (memtop,
 * which launched it) with SIGSTOP, moves to CPU M and executes itself
 * again; --cpu N then moves the new image to CPU N once main runs (the
 * loader's mappings stay on CPU M), and the parent gets SIGCONT once
 * every page is touched (or at any exit).  The exec's records are then
 * in CPU M's ring and main's mappings in CPU N's, both undrained, and
 * memtop drains them one after the other.
 *
 *   names-test --report FILE --file PATH [--linger-ms N] [--no-stack]
 *              [--stop-exec M] [--cpu N]
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "names-lib.h"

#define NAMES_PAGE	4096
#define NAMES_HEAP_BYTES (64 * 1024)	/* below malloc's mmap threshold */
#define NAMES_FILE_BYTES (4 * NAMES_PAGE)
#define NAMES_FILE_OFF	0x2000
#define NAMES_PRIV_OFF	0x1000

__attribute__((aligned(4096)))
char names_global_data[4 * NAMES_PAGE] = { 1 };
__attribute__((aligned(4096)))
char names_global_array[4 * NAMES_PAGE];

struct names_thread {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state;		/* 0 start, 1 touched, 2 may exit */
	pid_t tid;
	uintptr_t page;
};

/* The one function that touches memory, so its name is the code site. */
static __attribute__((noinline)) void
names_touch(char *page)
{
	madvise(page, NAMES_PAGE, MADV_DONTNEED);
	*(volatile char *)page = 3;
}

/* Takes an address, not a pointer: gcc would otherwise warn that the
 * (deliberately untouched) stack buffer is read uninitialised. */
static uintptr_t
names_page_of(uintptr_t p)
{
	return p & ~(uintptr_t)(NAMES_PAGE - 1);
}

static void *
names_thread_main(void *arg)
{
	struct names_thread *t = arg;
	/* Deep enough that a page of it is new to the stack. */
	volatile char buf[6 * NAMES_PAGE];
	char *page = (char *)names_page_of((uintptr_t)buf + 3 * NAMES_PAGE);

	names_touch(page);
	buf[0] = 1;
	pthread_mutex_lock(&t->lock);
	t->tid = (pid_t)syscall(SYS_gettid);
	t->page = (uintptr_t)page;
	t->state = 1;
	pthread_cond_broadcast(&t->cond);
	/* Blocked in futex(2) from here: /proc/.../syscall shows its SP. */
	while (t->state != 2)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/* What main made besides the fixed pages. */
struct names_made {
	uintptr_t lib_page, heap_page, priv_page, gone_page;
	void *map;
	const char *path;
	bool no_stack;
};

static void
names_report_page(FILE *out, bool first, const char *what, uintptr_t page,
		  const char *region, const char *symbol)
{
	fprintf(out, "%s{\"what\":\"%s\",\"addr\":\"0x%lx\",\"region\":",
		first ? "" : ",", what, (unsigned long)page);
	if (region)
		fprintf(out, "\"%s\"", region);
	else
		fputs("null", out);
	fputs(",\"symbol\":", out);
	if (symbol)
		fprintf(out, "\"%s\"", symbol);
	else
		fputs("null", out);
	fputs("}", out);
}

/* Process start in CLOCK_BOOTTIME ns, from /proc/self/stat (clock
 * ticks since boot); 0 if unreadable. */
static uint64_t
names_started_ns(void)
{
	unsigned long long ticks = 0;
	char buf[1024], *p;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* starttime is field 22; after ") " come fields 3.. */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &ticks) != 1)
		return 0;
	return ticks * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* The JSON report: the process, and each page touched with the region and
 * symbol memtop must give it.  -1 if it cannot be written. */
static int
names_write_report(const char *report, const char *exe,
		   const struct names_thread *t, const struct names_made *m)
{
	char region[4300];
	struct timespec now;
	uint64_t started;
	FILE *out;

	out = fopen(report, "w");
	if (!out) {
		fprintf(stderr, "names-test: %s: %s\n", report,
			strerror(errno));
		return -1;
	}
	fprintf(out, "{\"exe\":\"%s\",\"pid\":%d,\"tid\":%d,\"pages\":[", exe,
		(int)getpid(), (int)t->tid);
	names_report_page(out, true, "exe-data",
			  (uintptr_t)names_global_data + NAMES_PAGE, NULL,
			  "names_global_data+0x1000");
	names_report_page(out, false, "exe-bss",
			  (uintptr_t)names_global_array + NAMES_PAGE, NULL,
			  "names_global_array+0x1000");
	names_report_page(out, false, "lib-data", m->lib_page, NULL,
			  "names_lib_array+0x2000");
	names_report_page(out, false, "heap", m->heap_page, "[heap]", NULL);
	snprintf(region, sizeof(region), "[stack:%d]", (int)t->tid);
	if (!m->no_stack)
		names_report_page(out, false, "stack", t->page, region, NULL);
	snprintf(region, sizeof(region), "%s+0x%x", m->path, NAMES_FILE_OFF);
	names_report_page(out, false, "file",
			  (uintptr_t)m->map + NAMES_FILE_OFF, region, NULL);
	snprintf(region, sizeof(region), "%s+0x%x", m->path, NAMES_PRIV_OFF);
	names_report_page(out, false, "private", m->priv_page, region, NULL);
	snprintf(region, sizeof(region), "%s.gone+0x%x", m->path,
		 NAMES_PRIV_OFF);
	names_report_page(out, false, "gone", m->gone_page, region, NULL);
	clock_gettime(CLOCK_BOOTTIME, &now);
	started = names_started_ns();
	fprintf(out, "],\"lived_us\":%llu}\n", started ? (unsigned long long)
		(((uint64_t)now.tv_sec * 1000000000ull +
		  (uint64_t)now.tv_nsec - started) / 1000) : 0ull);
	fclose(out);
	return 0;
}

static int
names_usage(void)
{
	fprintf(stderr, "usage: names-test --report FILE --file PATH "
		"[--linger-ms N] [--no-stack] [--stop-exec M] [--cpu N]\n");
	return 2;
}

/*
 * Maps the file shared (m->map) and privately, and PATH.gone privately;
 * touches a page of each of the private ones, then unmaps PATH.gone.
 * 0, or -1 with a message.
 */
static int
names_map_files(struct names_made *m, int *fd)
{
	char gone[4200];
	char *priv, *g;
	int gfd;

	*fd = open(m->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	snprintf(gone, sizeof(gone), "%s.gone", m->path);
	gfd = open(gone, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (*fd < 0 || gfd < 0 || ftruncate(*fd, NAMES_FILE_BYTES) < 0 ||
	    ftruncate(gfd, NAMES_FILE_BYTES) < 0) {
		fprintf(stderr, "names-test: %s: %s\n", m->path,
			strerror(errno));
		return -1;
	}
	m->map = mmap(NULL, NAMES_FILE_BYTES, PROT_READ | PROT_WRITE,
		      MAP_SHARED, *fd, 0);
	priv = mmap(NULL, NAMES_FILE_BYTES, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE, *fd, 0);
	g = mmap(NULL, NAMES_FILE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		 gfd, 0);
	close(gfd);
	if (m->map == MAP_FAILED || priv == MAP_FAILED || g == MAP_FAILED) {
		fprintf(stderr, "names-test: mmap: %s\n", strerror(errno));
		return -1;
	}
	m->priv_page = (uintptr_t)priv + NAMES_PRIV_OFF;
	names_touch(priv + NAMES_PRIV_OFF);
	m->gone_page = (uintptr_t)g + NAMES_PRIV_OFF;
	names_touch(g + NAMES_PRIV_OFF);
	munmap(g, NAMES_FILE_BYTES);
	unlink(gone);
	return 0;
}

/* Runs on cpu alone from now on; 0 or -1 with a message. */
static int
names_on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		perror("names-test: sched_setaffinity");
		return -1;
	}
	return 0;
}

static void
names_cont_parent(void)
{
	kill(getppid(), SIGCONT);
}

/* --stop-exec M at argv[at]: the parent stopped, on CPU M, this program
 * again without it and with --cont-parent.  Returns only on failure. */
static int
names_stop_exec(int argc, char **argv, int at)
{
	static char cont[] = "--cont-parent";
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int k = 0;

	if (!args || names_on_cpu(atoi(argv[at + 1])) < 0)
		return 1;
	for (int i = 0; i < argc; i++)
		if (i != at && i != at + 1)
			args[k++] = argv[i];
	args[k++] = cont;
	if (kill(getppid(), SIGSTOP) < 0) {
		perror("names-test: SIGSTOP to the parent");
		return 1;
	}
	execv("/proc/self/exe", args);
	perror("names-test: exec");
	names_cont_parent();
	return 1;
}

struct names_args {
	const char *report;
	long linger_ms;
	int cpu;		/* -1: where it runs */
	int stop_at;		/* argv index of --stop-exec, or -1 */
};

/* The command line into a and m; 0, or names_usage's status. */
static int
names_parse(int argc, char **argv, struct names_args *a,
	    struct names_made *m)
{
	*a = (struct names_args){ NULL, 2000, -1, -1 };
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--report") == 0 && i + 1 < argc)
			a->report = argv[++i];
		else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
			m->path = argv[++i];
		else if (strcmp(argv[i], "--linger-ms") == 0 && i + 1 < argc)
			a->linger_ms = atol(argv[++i]);
		else if (strcmp(argv[i], "--no-stack") == 0)
			m->no_stack = true;
		else if (strcmp(argv[i], "--cpu") == 0 && i + 1 < argc)
			a->cpu = atoi(argv[++i]);
		else if (strcmp(argv[i], "--stop-exec") == 0 && i + 1 < argc)
			a->stop_at = i++;
		else if (strcmp(argv[i], "--cont-parent") != 0)
			return names_usage();
	}
	return a->report && m->path ? 0 : names_usage();
}

int
main(int argc, char **argv)
{
	struct names_thread t = { PTHREAD_MUTEX_INITIALIZER,
				  PTHREAD_COND_INITIALIZER, 0, 0, 0 };
	struct names_made m = { 0 };
	struct names_args a;
	struct timespec ts;
	pthread_t th;
	char exe[4096], *heap;
	bool cont = false;
	ssize_t n;
	int fd, ret;

	/* The parent is stopped: it goes on whatever happens next (but a
	 * crash; e2e-names.sh's watchdog is for that). */
	for (int i = 1; i < argc && !cont; i++)
		cont = strcmp(argv[i], "--cont-parent") == 0;
	if (cont)
		atexit(names_cont_parent);
	ret = names_parse(argc, argv, &a, &m);
	if (ret)
		return ret;
	if (a.stop_at >= 0)
		return names_stop_exec(argc, argv, a.stop_at);
	if (a.cpu >= 0 && names_on_cpu(a.cpu) < 0)
		return 1;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		perror("names-test: /proc/self/exe");
		return 1;
	}
	exe[n] = '\0';
	heap = malloc(NAMES_HEAP_BYTES);
	if (!heap || names_map_files(&m, &fd) < 0 ||
	    pthread_create(&th, NULL, names_thread_main, &t) != 0) {
		fprintf(stderr, "names-test: setup failed\n");
		return 1;
	}

	names_touch(names_global_data + NAMES_PAGE);
	names_touch(names_global_array + NAMES_PAGE);
	m.lib_page = (uintptr_t)names_lib_touch(2 * NAMES_PAGE);
	m.heap_page = names_page_of((uintptr_t)heap + NAMES_HEAP_BYTES / 2);
	names_touch((char *)m.heap_page);
	names_touch((char *)m.map + NAMES_FILE_OFF);

	pthread_mutex_lock(&t.lock);
	while (t.state != 1)
		pthread_cond_wait(&t.cond, &t.lock);
	pthread_mutex_unlock(&t.lock);
	if (cont)
		names_cont_parent();	/* every page touched */

	ts.tv_sec = a.linger_ms / 1000;
	ts.tv_nsec = (a.linger_ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);

	pthread_mutex_lock(&t.lock);
	t.state = 2;
	pthread_cond_broadcast(&t.cond);
	pthread_mutex_unlock(&t.lock);
	pthread_join(th, NULL);
	/* Written last: its lived_us covers the whole run. */
	if (names_write_report(a.report, exe, &t, &m) < 0)
		return 1;
	munmap((void *)m.map, NAMES_FILE_BYTES);
	close(fd);
	free(heap);
	return 0;
}
