/*
 * Naming thread stacks: each thread's stack pointer from
 * /proc/PID/task/TID/syscall marks the anonymous region that holds it as
 * [stack:TID].  Collector thread only.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps.h"
#include "maps_int.h"

int
maps_parse_syscall_sp(const char *text, uint64_t *sp)
{
	const char *fields[10];
	size_t n = 0;
	const char *s = text;

	if (strncmp(text, "running", 7) == 0)
		return -EAGAIN;
	while (*s && n < 10) {
		while (*s == ' ')
			s++;
		if (!*s || *s == '\n')
			break;
		fields[n++] = s;
		while (*s && *s != ' ' && *s != '\n')
			s++;
	}
	/* "NR A1 A2 A3 A4 A5 A6 SP PC" or "-1 SP PC". */
	if (n != 9 && n != 3)
		return -EINVAL;
	s = fields[n - 2];
	if (s[0] != '0' || s[1] != 'x')
		return -EINVAL;
	s += 2;
	if (!maps_hex(&s, s + strcspn(s, " \n"), sp) || *sp == 0)
		return -EINVAL;
	return 0;
}

/* The soft RLIMIT_STACK of pid in bytes, 0 when unlimited or unknown. */
static uint64_t
maps_stack_limit(int32_t pid)
{
	char path[64], line[256];
	uint64_t limit = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Max stack size", 14) == 0) {
			const char *v = line + 14;

			while (*v == ' ')
				v++;
			if (*v >= '0' && *v <= '9')
				limit = strtoull(v, NULL, 10);
			break;
		}
	}
	fclose(f);
	return limit;
}

void
maps_note_thread_sp(struct maps *m, int32_t tid, uint64_t sp)
{
	ptrdiff_t i = maps_floor(m->regions, m->n, sp);
	struct maps_region *r;

	if (i < 0 || sp >= m->regions[i].end)
		return;
	r = &m->regions[i];
	/* The main thread's stack is [stack]; a stack in the heap or in a
	 * file mapping keeps that name. */
	if (r->kind != MAPS_ANON && r->kind != MAPS_THREAD_STACK)
		return;
	if (r->kind == MAPS_THREAD_STACK && r->tid == tid)
		return;
	r->kind = MAPS_THREAD_STACK;
	r->tid = tid;
	r->stack_end = r->end;
	/* glibc puts a PROT_NONE guard page right below a thread stack and
	 * sizes the stack by RLIMIT_STACK. */
	if (i > 0 && m->regions[i - 1].end == r->start &&
	    m->regions[i - 1].prot == 0) {
		uint64_t limit = maps_stack_limit(m->pid);

		if (limit && r->start + limit > sp && r->start + limit < r->end)
			r->stack_end = r->start + limit;
	}
	m->generation++;
}

void
maps_probe_threads(struct maps *m)
{
	char path[64], *buf;
	struct dirent *de;
	size_t seen = 0, probed = 0, len;
	uint64_t sp;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)m->pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0 || tid == m->pid)
			continue;
		/* Round-robin past the cap so every thread gets its turn. */
		if (seen++ < m->sp_cursor)
			continue;
		if (probed++ == MAPS_MAX_SP_PROBES)
			break;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/syscall",
			 (int)m->pid, tid);
		if (maps_read_file(path, &buf, &len) < 0)
			continue;
		if (maps_parse_syscall_sp(buf, &sp) == 0)
			maps_note_thread_sp(m, (int32_t)tid, sp);
		free(buf);
	}
	m->sp_cursor = de ? m->sp_cursor + MAPS_MAX_SP_PROBES : 0;
	closedir(d);
}
