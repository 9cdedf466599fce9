/*
 * -e damon's regions (damonfeed.c): the machine's RAM from /proc/iomem
 * for a paddr kdamond, whose entries are named by the resources they
 * cover; the processes a launched command starts, for a vaddr one; and,
 * at each frame, every entry's region: its access count, age, and the
 * nodes of some of its pages (move_pages on up to DAMONFEED_PROBES pages
 * of a process's region, the memory-block map for each block of a
 * physical one).  Collector thread only.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"
#include "damon.h"
#include "frame.h"
#include "log.h"

#define DAMONFEED_PROBES	8	/* pages of a process's region */
#define DAMONFEED_BLOCKS	64	/* memory blocks of a physical one */
#define DAMONFEED_IOMEM_MAX	256
#define DAMONFEED_PAGE		4096u

/* A resource of /proc/iomem: depth 0 is a top-level one ("System RAM"),
 * depth 1 one inside it ("Kernel code"). */
struct damonfeed_res {
	uint64_t start, end;	/* [start, end) */
	int depth;
	char name[48];
};

struct damonfeed_iomem {
	struct damonfeed_res res[DAMONFEED_IOMEM_MAX];
	size_t n;
};

/* One line "  00100000-3ffdffff : System RAM"; false if not one. */
static bool
damonfeed_iomem_line(const char *line, struct damonfeed_res *r)
{
	unsigned long long s, e;
	int depth = 0, used = 0;

	while (line[depth] == ' ')
		depth++;
	if (sscanf(line + depth, "%llx-%llx : %n", &s, &e, &used) != 2 ||
	    !used || e < s)
		return false;
	r->start = s;
	r->end = e + 1;
	r->depth = depth / 2;
	snprintf(r->name, sizeof(r->name), "%.*s",
		 (int)strcspn(line + depth + used, "\n"), line + depth + used);
	return true;
}

void
damonfeed_iomem_free(struct damonfeed_iomem *m)
{
	free(m);
}

/*
 * /proc/iomem's resources and the top-level "System RAM" ranges (which
 * only root reads as they are: others see zeros) into *ranges.
 */
int
damonfeed_iomem_read(struct damonfeed_iomem **out, uint64_t (**ranges)[2],
		     size_t *n_ranges, char *why, size_t whylen)
{
	struct damonfeed_iomem *m = calloc(1, sizeof(*m));
	uint64_t (*rg)[2] = calloc(DAMONFEED_IOMEM_MAX, sizeof(*rg));
	char line[256];
	size_t n = 0;
	FILE *f = fopen("/proc/iomem", "re");

	if (!m || !rg || !f) {
		snprintf(why, whylen, "damon: /proc/iomem: %s",
			 f ? "out of memory" : strerror(errno));
		if (f)
			fclose(f);
		free(m);
		free(rg);
		return f ? -ENOMEM : -errno;
	}
	while (fgets(line, sizeof(line), f) && m->n < DAMONFEED_IOMEM_MAX) {
		struct damonfeed_res *r = &m->res[m->n];

		if (!damonfeed_iomem_line(line, r) || r->depth > 1)
			continue;
		m->n++;
		/* DAMON wants page-aligned regions. */
		if (r->depth == 0 && !strcmp(r->name, "System RAM") &&
		    r->start && r->end - r->start >= DAMONFEED_PAGE) {
			rg[n][0] = (r->start + DAMONFEED_PAGE - 1) &
				   ~(uint64_t)(DAMONFEED_PAGE - 1);
			rg[n][1] = r->end & ~(uint64_t)(DAMONFEED_PAGE - 1);
			n += rg[n][1] > rg[n][0];
		}
	}
	fclose(f);
	if (!n) {
		snprintf(why, whylen, "damon: no System RAM in /proc/iomem "
			 "(its addresses read as 0 without root)");
		free(m);
		free(rg);
		return -EACCES;
	}
	*out = m;
	*ranges = rg;
	*n_ranges = n;
	return 0;
}

/* The children of every task of pid (/proc/PID/task/TID/children) that
 * are not targets yet become targets; whether any did. */
static bool
damonfeed_children_of(struct collector *c, pid_t pid)
{
	char path[384], buf[4096];
	struct dirent *de;
	bool added = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		FILE *f;
		size_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children",
			 (int)pid, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		for (char *p = buf, *end; *p; p = end) {
			long child = strtol(p, &end, 10);
			struct target *t;

			if (end == p)
				break;
			if (child <= 0 || collector_find_target(c, child))
				continue;
			t = collector_add_target(c, (pid_t)child, false);
			if (t) {
				t->followed = true;
				added = true;
			}
		}
	}
	if (d)
		closedir(d);
	return added;
}

/*
 * A launched command's processes: those its tree started since the last
 * frame are targets now (DAMON has no fork records; /proc's children
 * lists need CONFIG_PROC_CHILDREN, as Debian's kernels have).  Whether
 * any was added.
 */
bool
damonfeed_follow_children(struct collector *c)
{
	bool added = false;

	collector_proc_begin(c);
	/* Targets added here are scanned too: grandchildren. */
	for (size_t i = 0; i < c->n_targets; i++)
		if (c->targets[i].alive &&
		    (c->targets[i].launched || c->targets[i].followed))
			added |= damonfeed_children_of(c, c->targets[i].pid);
	collector_proc_end(c);
	return added;
}

/* The region an entry stands for, in the last snapshot; NULL none. */
static const struct damon_region *
damonfeed_find(const struct collector *c, int32_t pid, uint64_t addr)
{
	for (size_t i = 0; i < c->n_regs; i++) {
		const struct damon_region *r = &c->regs[i];

		if (r->start != addr)
			continue;
		if (c->damon_paddr ||
		    (r->target < c->n_damon_pids &&
		     c->damon_pids[r->target] == pid))
			return r;
	}
	return NULL;
}

/* The nodes of up to DAMONFEED_PROBES pages spread over a process's
 * region. */
static void
damonfeed_probe_vaddr(struct collector *c, int32_t pid,
		      const struct damon_region *r, struct frame_damon *d)
{
	uint64_t pages = (r->end - r->start) / DAMONFEED_PAGE, addrs[8];
	int16_t nodes[8];
	size_t n = pages < DAMONFEED_PROBES ? (size_t)pages : DAMONFEED_PROBES;

	if (!c->nodemap || !n)
		return;
	for (size_t k = 0; k < n; k++)
		addrs[k] = r->start + pages * k / n * DAMONFEED_PAGE;
	nodemap_query(c->nodemap, pid, addrs, n, nodes);
	for (size_t k = 0; k < n; k++) {
		d->probed++;
		if (nodes[k] >= 0 && nodes[k] < FRAME_DAMON_NODES)
			d->nodes |= UINT64_C(1) << nodes[k];
		else
			d->unknown++;
	}
}

/* The node of each memory block a physical region covers (at most
 * DAMONFEED_BLOCKS of them). */
static void
damonfeed_probe_paddr(struct collector *c, const struct damon_region *r,
		      struct frame_damon *d)
{
	uint64_t bs = c->physnode ? physnode_block_size(c->physnode) : 0;

	for (uint64_t a = r->start; bs && a < r->end &&
	     d->probed < DAMONFEED_BLOCKS; a = (a / bs + 1) * bs) {
		int node = physnode_lookup(c->physnode, a);

		d->probed++;
		if (node >= 0 && node < FRAME_DAMON_NODES)
			d->nodes |= UINT64_C(1) << node;
		else
			d->unknown++;
	}
}

/* A physical region's name: the RAM resources it covers, with what the
 * kernel placed inside them ("System RAM (Kernel code, Kernel data)"). */
static char *
damonfeed_name(const struct collector *c, const struct damon_region *r)
{
	char buf[256];
	size_t used = 0, inner = 0;

	buf[0] = '\0';
	for (size_t i = 0; c->iomem && i < c->iomem->n; i++) {
		const struct damonfeed_res *x = &c->iomem->res[i];

		if (x->end <= r->start || x->start >= r->end)
			continue;
		if (x->depth == 0 && !used)
			used = (size_t)snprintf(buf, sizeof(buf), "%s",
						x->name);
		else if (x->depth == 1 && used && used < sizeof(buf))
			used += (size_t)snprintf(buf + used, sizeof(buf) - used,
						 "%s%s", inner++ ? ", " : " (",
						 x->name);
	}
	if (inner && used < sizeof(buf) - 1)
		strcat(buf, ")");
	return used ? strdup(buf) : NULL;
}

/* After a frame is built: each entry's region (size, access count, age,
 * nodes; a physical one's name). */
void
collector_damon_frame(struct collector *c, struct frame *f)
{
	for (size_t i = 0; c->damon && i < f->n_pages; i++) {
		struct frame_page *p = &f->pages[i];
		const struct damon_region *r = damonfeed_find(c, p->pid,
							      p->addr);
		uint64_t len = r ? r->end - r->start : 0;
		struct frame_damon *d;

		if (!r || !(d = calloc(1, sizeof(*d))))
			continue;
		p->size = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
		*d = (struct frame_damon){ .accesses = r->nr_accesses,
					   .checks = DAMONFEED_CHECKS,
					   .age = r->age,
					   .aggr_us = c->damon_aggr_us };
		if (c->damon_paddr) {
			char *name = damonfeed_name(c, r);

			damonfeed_probe_paddr(c, r, d);
			if (name) {
				free(p->region);
				p->region = name;
			}
		} else {
			damonfeed_probe_vaddr(c, p->pid, r, d);
		}
		p->damon = d;
	}
}
