/*
 * DAMON sysfs control.  See damon.h; the file layout is the kernel's
 * Documentation/admin-guide/mm/damon/usage.rst ("sysfs Interface").
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "damon.h"
#include "sysfs.h"

#define DAMON_ADMIN "kernel/mm/damon/admin"
#define DAMON_CTX "kdamonds/0/contexts/0"
#define DAMON_SCHEME DAMON_CTX "/schemes/0"
#define DAMON_MAX_U32 "4294967295"

struct damon {
	char root[512];		/* .../damon/admin */
	bool on;
};

static int
damon_admin(char *buf, size_t len)
{
	return sysfs_path(buf, len, DAMON_ADMIN);
}

static int
damon_read_at(const char *root, const char *rel, char *buf, size_t len)
{
	char path[768];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return sysfs_read(path, buf, len);
}

static int
damon_write(const struct damon *d, const char *rel, const char *val,
	    char *why, size_t whylen)
{
	char path[768];
	size_t n = strlen(val);
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", d->root, rel);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0 || write(fd, val, n) != (ssize_t)n)
		ret = -errno;
	if (fd >= 0)
		close(fd);
	if (ret < 0 && why)
		snprintf(why, whylen, "damon: writing '%s' to %s: %s", val,
			 rel, strerror(-ret));
	return ret;
}

static int
damon_write_u64(const struct damon *d, const char *rel, uint64_t v,
		char *why, size_t whylen)
{
	char val[32];

	snprintf(val, sizeof(val), "%" PRIu64, v);
	return damon_write(d, rel, val, why, whylen);
}

/* Whether word is one of the whitespace-separated words of list. */
static bool
damon_listed(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || isspace((unsigned char)p[-1])) &&
		    (p[n] == '\0' || isspace((unsigned char)p[n])))
			return true;
	return false;
}

/*
 * Whether kdamond 0's context 0, which memtop has just made, offers the
 * operations ops: 0, or -EOPNOTSUPP saying what it offers.  A context
 * without avail_operations (kernels before 5.19) is taken at its word;
 * a context gone meanwhile means another DAMON user rewrote
 * nr_kdamonds: -EBUSY.
 */
static int
damon_ops_offered(const char *root, const char *ops, char *why,
		  size_t whylen)
{
	char avail[128], path[768];
	struct stat st;
	int got = damon_read_at(root, DAMON_CTX "/avail_operations", avail,
				sizeof(avail));

	if (got < 0) {
		snprintf(path, sizeof(path), "%s/" DAMON_CTX, root);
		if (stat(path, &st) == 0)
			return 0;
		snprintf(why, whylen, "damon: another DAMON user changed "
			 "kdamonds while memtop set one up (try again)");
		return -EBUSY;
	}
	if (damon_listed(avail, ops))
		return 0;
	for (char *p = avail; *p; p++)
		if (isspace((unsigned char)*p))
			*p = ' ';
	snprintf(why, whylen, "kernel without DAMON's %s operations "
		 "(avail_operations: %s; fix: a kernel with CONFIG_DAMON_%s, "
		 "as Debian 13's%s)", ops, avail,
		 strcmp(ops, "paddr") == 0 ? "PADDR" : "VADDR",
		 strcmp(ops, "vaddr") == 0 && damon_listed(avail, "paddr") ?
		 "; -a watches with paddr" : "");
	return -EOPNOTSUPP;
}

/*
 * Removes the kdamond memtop made (its "1" to nr_kdamonds succeeded).
 * The kernel refuses sysfs writes with EBUSY while another writer holds
 * DAMON's lock, so this tries for about 100 ms; a failure is reported,
 * since the empty kdamond left would read as another user's.
 */
static int
damon_remove_own(const struct damon *d, char *why, size_t whylen)
{
	int ret = -EBUSY;

	for (int i = 0; i < 100 && ret == -EBUSY; i++) {
		if (i)
			usleep(1000);
		ret = damon_write(d, "kdamonds/nr_kdamonds", "0", NULL, 0);
	}
	if (ret < 0 && why)
		snprintf(why, whylen, "damon: cannot remove the kdamond memtop "
			 "set up (writing 0 to kdamonds/nr_kdamonds: %s; fix: "
			 "echo 0 > /sys/kernel/mm/damon/admin/kdamonds/"
			 "nr_kdamonds)", strerror(-ret));
	return ret;
}

/* See damon_check: nr_kdamonds is 0 and writable here. */
static int
damon_probe_ops(const char *root, const char *ops, char *why, size_t whylen)
{
	struct damon d = { .on = false };
	int ret, gone;

	snprintf(d.root, sizeof(d.root), "%s", root);
	ret = damon_write(&d, "kdamonds/nr_kdamonds", "1", why, whylen);
	if (ret < 0)
		return ret;	/* nothing made: nothing to remove */
	ret = damon_write(&d, "kdamonds/0/contexts/nr_contexts", "1", why,
			  whylen);
	if (ret == 0)
		ret = damon_ops_offered(root, ops, why, whylen);
	gone = damon_remove_own(&d, ret < 0 ? NULL : why, whylen);
	return ret < 0 ? ret : gone;
}

int
damon_check(const char *ops, char *why, size_t whylen)
{
	char root[512], path[600], buf[64], rel[96], state[32], pid[32];
	long n;

	if (damon_admin(root, sizeof(root)) < 0 ||
	    damon_read_at(root, "kdamonds/nr_kdamonds", buf, sizeof(buf)) < 0) {
		snprintf(why, whylen, "kernel without DAMON's sysfs interface "
			 "(fix: a kernel with CONFIG_DAMON_SYSFS, "
			 "CONFIG_DAMON_VADDR and CONFIG_DAMON_PADDR, as "
			 "Debian 13's)");
		return -EOPNOTSUPP;
	}
	n = strtol(buf, NULL, 10);
	if (n > 0) {
		snprintf(rel, sizeof(rel), "kdamonds/0/state");
		if (damon_read_at(root, rel, state, sizeof(state)) < 0)
			snprintf(state, sizeof(state), "unknown");
		if (damon_read_at(root, "kdamonds/0/pid", pid, sizeof(pid)) < 0)
			snprintf(pid, sizeof(pid), "?");
		snprintf(why, whylen, "another DAMON user's kdamond is set up "
			 "(%ld kdamond(s); kdamond 0: state %s, pid %s): "
			 "memtop leaves it alone (fix: -e faults --rearm, or "
			 "stop that DAMON user)", n, state, pid);
		return -EBUSY;
	}
	snprintf(path, sizeof(path), "%s/kdamonds/nr_kdamonds", root);
	if (access(path, W_OK) != 0) {
		snprintf(why, whylen, "%s: %s (fix: run memtop as root)", path,
			 strerror(errno));
		return -EACCES;
	}
	return ops ? damon_probe_ops(root, ops, why, whylen) : 0;
}

/* The monitoring context: operations, intervals, region counts. */
static int
damon_setup_ctx(struct damon *d, const struct damon_opts *o, char *why,
		size_t whylen)
{
	const char *ops = o->paddr ? "paddr" : "vaddr";
	int ret;

	ret = damon_write(d, "kdamonds/0/contexts/nr_contexts", "1", why,
			  whylen);
	if (ret == 0)
		ret = damon_ops_offered(d->root, ops, why, whylen);
	if (ret == 0)
		ret = damon_write(d, DAMON_CTX "/operations", ops, why, whylen);
	if (ret == 0)
		ret = damon_set_intervals(d, o->sample_us, o->aggr_us);
	if (ret == 0)
		ret = damon_write_u64(d, DAMON_CTX "/monitoring_attrs/intervals/"
				      "update_us", o->update_us, why, whylen);
	if (ret == 0)
		ret = damon_write(d, DAMON_CTX "/monitoring_attrs/nr_regions/"
				  "min", "10", why, whylen);
	if (ret == 0)
		ret = damon_write(d, DAMON_CTX "/monitoring_attrs/nr_regions/"
				  "max", "1000", why, whylen);
	return ret;
}

/* The vaddr targets: one per pid. */
static int
damon_setup_pids(struct damon *d, const pid_t *pids, size_t n, char *why,
		 size_t whylen)
{
	char rel[160];
	int ret;

	ret = damon_write_u64(d, DAMON_CTX "/targets/nr_targets", n, why,
			      whylen);
	for (size_t i = 0; ret == 0 && i < n; i++) {
		snprintf(rel, sizeof(rel), DAMON_CTX "/targets/%zu/pid_target",
			 i);
		ret = damon_write_u64(d, rel, (uint64_t)pids[i], why, whylen);
	}
	return ret;
}

/* The targets: one per pid (vaddr), or one with the ranges (paddr). */
static int
damon_setup_targets(struct damon *d, const struct damon_opts *o, char *why,
		    size_t whylen)
{
	char rel[160];
	int ret;

	if (!o->paddr)
		return damon_setup_pids(d, o->pids, o->n_pids, why, whylen);
	ret = damon_write(d, DAMON_CTX "/targets/nr_targets", "1", why,
			  whylen);
	if (ret == 0)
		ret = damon_write_u64(d, DAMON_CTX "/targets/0/regions/"
				      "nr_regions", o->n_ranges, why, whylen);
	for (size_t i = 0; ret == 0 && i < o->n_ranges; i++) {
		snprintf(rel, sizeof(rel), DAMON_CTX "/targets/0/regions/%zu/"
			 "start", i);
		ret = damon_write_u64(d, rel, o->ranges[i][0], why, whylen);
		snprintf(rel, sizeof(rel), DAMON_CTX "/targets/0/regions/%zu/"
			 "end", i);
		if (ret == 0)
			ret = damon_write_u64(d, rel, o->ranges[i][1], why,
					      whylen);
	}
	return ret;
}

/*
 * One `stat` scheme matching every region: the access pattern's maxima
 * default to 0, which would match only idle regions of size 0.
 */
static int
damon_setup_scheme(struct damon *d, char *why, size_t whylen)
{
	static const char *const maxima[] = {
		DAMON_SCHEME "/access_pattern/sz/max",
		DAMON_SCHEME "/access_pattern/nr_accesses/max",
		DAMON_SCHEME "/access_pattern/age/max",
	};
	int ret;

	ret = damon_write(d, DAMON_CTX "/schemes/nr_schemes", "1", why,
			  whylen);
	if (ret == 0)
		ret = damon_write(d, DAMON_SCHEME "/action", "stat", why,
				  whylen);
	for (size_t i = 0; ret == 0 && i < sizeof(maxima) / sizeof(*maxima);
	     i++)
		ret = damon_write(d, maxima[i], i == 0 ? "18446744073709551615"
				  : DAMON_MAX_U32, why, whylen);
	return ret;
}

int
damon_start(struct damon **out, const struct damon_opts *o, char *why,
	    size_t whylen)
{
	struct damon *d;
	int ret = damon_check(NULL, why, whylen);

	if (ret < 0)
		return ret;
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	damon_admin(d->root, sizeof(d->root));
	ret = damon_write(d, "kdamonds/nr_kdamonds", "1", why, whylen);
	if (ret < 0) {
		free(d);	/* nothing made: nothing to remove */
		return ret;
	}
	ret = damon_setup_ctx(d, o, why, whylen);
	if (ret == 0)
		ret = damon_setup_targets(d, o, why, whylen);
	if (ret == 0)
		ret = damon_setup_scheme(d, why, whylen);
	if (ret == 0)
		ret = damon_write(d, "kdamonds/0/state", "on", why, whylen);
	if (ret < 0) {
		damon_remove_own(d, NULL, 0);
		free(d);
		return ret;
	}
	d->on = true;
	*out = d;
	return 0;
}

int
damon_set_pids(struct damon *d, const pid_t *pids, size_t n, char *why,
	       size_t whylen)
{
	int ret = damon_setup_pids(d, pids, n, why, whylen);

	if (ret == 0 && d->on)
		ret = damon_write(d, "kdamonds/0/state", "commit", why,
				  whylen);
	return ret;
}

int
damon_set_intervals(struct damon *d, uint64_t sample_us, uint64_t aggr_us)
{
	int ret;

	ret = damon_write_u64(d, DAMON_CTX "/monitoring_attrs/intervals/"
			      "sample_us", sample_us, NULL, 0);
	if (ret == 0)
		ret = damon_write_u64(d, DAMON_CTX "/monitoring_attrs/"
				      "intervals/aggr_us", aggr_us, NULL, 0);
	if (ret == 0 && d->on)
		ret = damon_write(d, "kdamonds/0/state", "commit", NULL, 0);
	return ret;
}

static int
damon_region_u64(const struct damon *d, size_t i, const char *field,
		 uint64_t *out)
{
	char rel[160], buf[32];
	int ret;

	snprintf(rel, sizeof(rel), DAMON_SCHEME "/tried_regions/%zu/%s", i,
		 field);
	ret = damon_read_at(d->root, rel, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	*out = strtoull(buf, NULL, 10);
	return 0;
}

/* One update of the tried regions and their reading. */
static int
damon_snapshot_once(struct damon *d, struct damon_region **regs,
		    size_t *cap, char *why, size_t whylen)
{
	size_t n = 0;
	uint32_t target = 0;
	int ret;

	ret = damon_write(d, "kdamonds/0/state", "update_schemes_tried_regions",
			  why, whylen);
	if (ret < 0)
		return ret;
	for (;; n++) {
		struct damon_region r;
		uint64_t v[4];

		if (damon_region_u64(d, n, "start", &v[0]) < 0)
			break;
		if (damon_region_u64(d, n, "end", &v[1]) < 0 ||
		    damon_region_u64(d, n, "nr_accesses", &v[2]) < 0 ||
		    damon_region_u64(d, n, "age", &v[3]) < 0)
			break;
		/* The next target's regions start again from below. */
		if (n > 0 && v[0] < (*regs)[n - 1].start)
			target++;
		r = (struct damon_region){ v[0], v[1], (uint32_t)v[2],
					   (uint32_t)v[3], target };
		if (n == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			struct damon_region *p = realloc(*regs,
							 nc * sizeof(*p));

			if (!p) {
				snprintf(why, whylen, "out of memory");
				return -ENOMEM;
			}
			*regs = p;
			*cap = nc;
		}
		(*regs)[n] = r;
	}
	return (int)n;
}

/*
 * The kernel may answer an update before the scheme was applied again,
 * with no tried region at all (seen on 6.12): then once more.
 */
int
damon_snapshot(struct damon *d, struct damon_region **regs, size_t *cap,
	       char *why, size_t whylen)
{
	int n = damon_snapshot_once(d, regs, cap, why, whylen);

	if (n == 0)
		n = damon_snapshot_once(d, regs, cap, why, whylen);
	return n;
}

pid_t
damon_kdamond_pid(const struct damon *d)
{
	char buf[32];

	if (damon_read_at(d->root, "kdamonds/0/pid", buf, sizeof(buf)) < 0)
		return -1;
	return (pid_t)strtol(buf, NULL, 10);
}

void
damon_stop(struct damon *d)
{
	if (!d)
		return;
	damon_write(d, "kdamonds/0/state", "off", NULL, 0);
	damon_remove_own(d, NULL, 0);
	free(d);
}
