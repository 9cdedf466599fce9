#include "config.h"

/*
 * collector/sources/damon.c against a fake DAMON sysfs tree built here
 * under MEMTOP_SYSFS_ROOT (a temporary directory): what memtop writes to
 * set up a vaddr and a paddr kdamond, the snapshot it reads back from
 * tried_regions, the stop, and the refusal when another user's kdamond is
 * set up (nothing written then).  The real interface is exercised in the
 * guest (tests/numa/access-qemu.sh), never on a development machine.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "damon.h"
#include "testlib.h"

#define ADMIN "sys/kernel/mm/damon/admin/"
#define CTX "kdamonds/0/contexts/0/"

static char root[256];

static void
put(const char *rel, const char *val)
{
	char path[1024], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/" ADMIN "%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f) {
		test_fail_at(__FILE__, __LINE__, "cannot create %s", path);
		return;
	}
	fprintf(f, "%s\n", val);
	fclose(f);
}

static const char *
get(const char *rel)
{
	static char buf[256];
	char path[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/" ADMIN "%s", root, rel);
	f = fopen(path, "r");
	if (!f)
		return "(missing)";
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return buf;
}

/* Every file memtop's kdamond setup writes, as the kernel would show
 * them once nr_kdamonds, nr_contexts, nr_targets ... are set. */
static void
fake_tree(void)
{
	static const char *const files[] = {
		"kdamonds/0/state", "kdamonds/0/pid",
		"kdamonds/0/contexts/nr_contexts", CTX "operations",
		CTX "monitoring_attrs/intervals/sample_us",
		CTX "monitoring_attrs/intervals/aggr_us",
		CTX "monitoring_attrs/intervals/update_us",
		CTX "monitoring_attrs/nr_regions/min",
		CTX "monitoring_attrs/nr_regions/max",
		CTX "targets/nr_targets", CTX "targets/0/pid_target",
		CTX "targets/1/pid_target", CTX "targets/2/pid_target",
		CTX "targets/0/regions/nr_regions",
		CTX "targets/0/regions/0/start", CTX "targets/0/regions/0/end",
		CTX "targets/0/regions/1/start", CTX "targets/0/regions/1/end",
		CTX "schemes/nr_schemes", CTX "schemes/0/action",
		CTX "schemes/0/access_pattern/sz/max",
		CTX "schemes/0/access_pattern/nr_accesses/max",
		CTX "schemes/0/access_pattern/age/max",
	};

	put("kdamonds/nr_kdamonds", "0");
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		put(files[i], "0");
	put("kdamonds/0/state", "off");
	put("kdamonds/0/pid", "4321");
}

static void
test_absent(void)
{
	char why[400];

	check_eq_i64(damon_check("vaddr", why, sizeof(why)), -EOPNOTSUPP);
	check(strstr(why, "CONFIG_DAMON_SYSFS") != NULL);
}

/* Another user's kdamond: refused, named, and nothing written. */
static void
test_busy(void)
{
	const pid_t pids[] = { 100 };
	struct damon_opts o = { .pids = pids, .n_pids = 1, .sample_us = 5000,
				.aggr_us = 100000, .update_us = 1000000 };
	struct damon *d = NULL;
	char why[400];

	fake_tree();
	put("kdamonds/nr_kdamonds", "1");
	put("kdamonds/0/state", "on");
	put("kdamonds/0/pid", "77");
	put(CTX "operations", "paddr");
	check_eq_i64(damon_check("vaddr", why, sizeof(why)), -EBUSY);
	check(strstr(why, "kdamond 0: state on, pid 77") != NULL);
	check_eq_i64(damon_start(&d, &o, why, sizeof(why)), -EBUSY);
	check(d == NULL);
	check_eq_str(get("kdamonds/nr_kdamonds"), "1");
	check_eq_str(get("kdamonds/0/state"), "on");
	check_eq_str(get(CTX "operations"), "paddr");
	check_eq_str(get(CTX "targets/0/pid_target"), "0");
	/* Stopped but set up: its directories would go with nr_kdamonds. */
	put("kdamonds/0/state", "off");
	check_eq_i64(damon_check("vaddr", why, sizeof(why)), -EBUSY);
	check(strstr(why, "state off") != NULL);
}

static void
test_vaddr(void)
{
	const pid_t pids[] = { 100, 200 };
	struct damon_opts o = { .pids = pids, .n_pids = 2, .sample_us = 5000,
				.aggr_us = 100000, .update_us = 1000000 };
	struct damon_region *regs = NULL;
	struct damon *d = NULL;
	size_t cap = 0;
	char why[400];

	fake_tree();
	check_eq_i64(damon_check("vaddr", why, sizeof(why)), 0);
	check_eq_i64(damon_start(&d, &o, why, sizeof(why)), 0);
	if (!d)
		return;
	check_eq_str(get("kdamonds/nr_kdamonds"), "1");
	check_eq_str(get("kdamonds/0/contexts/nr_contexts"), "1");
	check_eq_str(get(CTX "operations"), "vaddr");
	check_eq_str(get(CTX "monitoring_attrs/intervals/sample_us"), "5000");
	check_eq_str(get(CTX "monitoring_attrs/intervals/aggr_us"), "100000");
	check_eq_str(get(CTX "targets/nr_targets"), "2");
	check_eq_str(get(CTX "targets/0/pid_target"), "100");
	check_eq_str(get(CTX "targets/1/pid_target"), "200");
	check_eq_str(get(CTX "schemes/0/action"), "stat");
	check_eq_str(get(CTX "schemes/0/access_pattern/nr_accesses/max"),
		     "4294967295");
	check_eq_str(get(CTX "schemes/0/access_pattern/sz/max"),
		     "18446744073709551615");
	check_eq_str(get("kdamonds/0/state"), "on");
	check_eq_i64(damon_kdamond_pid(d), 4321);

	put(CTX "schemes/0/tried_regions/0/start", "4096");
	put(CTX "schemes/0/tried_regions/0/end", "69632");
	put(CTX "schemes/0/tried_regions/0/nr_accesses", "20");
	put(CTX "schemes/0/tried_regions/0/age", "3");
	put(CTX "schemes/0/tried_regions/1/start", "69632");
	put(CTX "schemes/0/tried_regions/1/end", "139264");
	put(CTX "schemes/0/tried_regions/1/nr_accesses", "0");
	put(CTX "schemes/0/tried_regions/1/age", "9");
	check_eq_i64(damon_snapshot(d, &regs, &cap, why, sizeof(why)), 2);
	check_eq_str(get("kdamonds/0/state"), "update_schemes_tried_regions");
	if (regs) {
		check_eq_u64(regs[0].start, 4096);
		check_eq_u64(regs[0].end, 69632);
		check_eq_u64(regs[0].nr_accesses, 20);
		check_eq_u64(regs[0].age, 3);
		check_eq_u64(regs[1].nr_accesses, 0);
		check_eq_u64(regs[1].age, 9);
		check_eq_u64(regs[0].target, 0);
		check_eq_u64(regs[1].target, 0);
	}
	/* The second target's regions start from below again. */
	put(CTX "schemes/0/tried_regions/2/start", "8192");
	put(CTX "schemes/0/tried_regions/2/end", "12288");
	put(CTX "schemes/0/tried_regions/2/nr_accesses", "5");
	put(CTX "schemes/0/tried_regions/2/age", "1");
	check_eq_i64(damon_snapshot(d, &regs, &cap, why, sizeof(why)), 3);
	if (regs) {
		check_eq_u64(regs[1].target, 0);
		check_eq_u64(regs[2].target, 1);
		check_eq_u64(regs[2].nr_accesses, 5);
	}
	{
		const pid_t more[] = { 100, 200, 300 };

		check_eq_i64(damon_set_pids(d, more, 3, why, sizeof(why)), 0);
		check_eq_str(get(CTX "targets/nr_targets"), "3");
		check_eq_str(get(CTX "targets/2/pid_target"), "300");
		check_eq_str(get("kdamonds/0/state"), "commit");
	}
	check_eq_i64(damon_set_intervals(d, 2500, 50000), 0);
	check_eq_str(get(CTX "monitoring_attrs/intervals/sample_us"), "2500");
	check_eq_str(get("kdamonds/0/state"), "commit");
	damon_stop(d);
	check_eq_str(get("kdamonds/0/state"), "off");
	check_eq_str(get("kdamonds/nr_kdamonds"), "0");
	free(regs);
}

static void
test_paddr(void)
{
	const uint64_t ranges[][2] = { { 0x100000, 0x20000000 },
				       { 0x100000000, 0x140000000 } };
	struct damon_opts o = { .paddr = true, .ranges = ranges,
				.n_ranges = 2, .sample_us = 5000,
				.aggr_us = 100000, .update_us = 1000000 };
	struct damon *d = NULL;
	char why[400];

	fake_tree();
	check_eq_i64(damon_start(&d, &o, why, sizeof(why)), 0);
	check_eq_str(get(CTX "operations"), "paddr");
	check_eq_str(get(CTX "targets/nr_targets"), "1");
	check_eq_str(get(CTX "targets/0/regions/nr_regions"), "2");
	check_eq_str(get(CTX "targets/0/regions/1/start"), "4294967296");
	check_eq_str(get(CTX "targets/0/regions/1/end"), "5368709120");
	damon_stop(d);
}

/*
 * A kernel built without CONFIG_DAMON_VADDR lists paddr alone in a
 * context's avail_operations, takes "vaddr" into `operations` and
 * refuses only `on`: the check asks a context of its own, says which
 * operations are missing (so -e auto moves on), and leaves nr_kdamonds
 * at 0; paddr passes.
 */
static void
test_ops_missing(void)
{
	const pid_t pids[] = { 100 };
	struct damon_opts o = { .pids = pids, .n_pids = 1, .sample_us = 5000,
				.aggr_us = 100000, .update_us = 1000000 };
	struct damon *d = NULL;
	char why[400] = "";

	fake_tree();
	put(CTX "avail_operations", "paddr");
	check_eq_i64(damon_check("vaddr", why, sizeof(why)), -EOPNOTSUPP);
	check(strstr(why, "without DAMON's vaddr operations "
		      "(avail_operations: paddr; fix: a kernel with "
		      "CONFIG_DAMON_VADDR") != NULL);
	check_eq_str(get("kdamonds/nr_kdamonds"), "0");
	check_eq_str(get("kdamonds/0/contexts/nr_contexts"), "1");
	check_eq_i64(damon_start(&d, &o, why, sizeof(why)), -EOPNOTSUPP);
	check(d == NULL);
	check_eq_str(get(CTX "operations"), "0");
	check_eq_str(get("kdamonds/nr_kdamonds"), "0");
	put(CTX "avail_operations", "fvaddr\npaddr");
	check_eq_i64(damon_check("vaddr", why, sizeof(why)), -EOPNOTSUPP);
	check(strstr(why, "avail_operations: fvaddr paddr;") != NULL);
	check_eq_i64(damon_check("paddr", why, sizeof(why)), 0);
	put(CTX "avail_operations", "vaddr\nfvaddr\npaddr");
	check_eq_i64(damon_check("vaddr", why, sizeof(why)), 0);
	check_eq_str(get("kdamonds/nr_kdamonds"), "0");
}

/* The probe's other ends: a write that fails half-way (nr_contexts made
 * a directory: EISDIR even as root) still removes the kdamond the probe
 * made; a context gone before its avail_operations is read (another
 * DAMON user rewrote nr_kdamonds) is -EBUSY, not "works". */
static void
test_probe_paths(void)
{
	char path[512], why[400] = "";

	fake_tree();
	snprintf(path, sizeof(path), "%s/" ADMIN "kdamonds/0/contexts/"
		 "nr_contexts", root);
	check(unlink(path) == 0 && mkdir(path, 0755) == 0);
	check_eq_i64(damon_check("vaddr", why, sizeof(why)), -EISDIR);
	check(strstr(why, "kdamonds/0/contexts/nr_contexts") != NULL);
	check_eq_str(get("kdamonds/nr_kdamonds"), "0");
	check(rmdir(path) == 0);
	fake_tree();
	snprintf(path, sizeof(path), "rm -rf '%s/" ADMIN CTX "'", root);
	check(system(path) == 0);
	check_eq_i64(damon_check("vaddr", why, sizeof(why)), -EBUSY);
	check(strstr(why, "another DAMON user changed kdamonds") != NULL);
	check_eq_str(get("kdamonds/nr_kdamonds"), "0");
	fake_tree();
	/* Asked nothing (damon_start's own check): nothing written. */
	put("kdamonds/nr_kdamonds", "0");
	put("kdamonds/0/contexts/nr_contexts", "7");
	check_eq_i64(damon_check(NULL, why, sizeof(why)), 0);
	check_eq_str(get("kdamonds/0/contexts/nr_contexts"), "7");
}

int
main(void)
{
	char cmd[300];

	snprintf(root, sizeof(root), "/tmp/memtop-damon-XXXXXX");
	if (!mkdtemp(root))
		test_skip("mkdtemp failed");
	setenv("MEMTOP_SYSFS_ROOT", root, 1);
	test_absent();
	test_busy();
	test_vaddr();
	test_paddr();
	test_ops_missing();
	test_probe_paths();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
	return test_result();
}
