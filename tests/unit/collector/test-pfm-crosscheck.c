#include "config.h"

/*
 * Cross-check of the PEBS encodings memtop packs from the recorded sysfs
 * trees (tests/fixtures/sysfs-pmu) against libpfm4's own event tables, forced to
 * the matching PMU with LIBPFM_FORCE_PMU.  libpfm4 knows no IBS, hybrid
 * or Zen 5 tables and returns PERF_TYPE_RAW, so only config/config1 of
 * the Intel server parts are compared.  Its one known wrong encoding,
 * Sapphire Rapids MEM_TRANS_RETIRED:STORE_SAMPLE = 0x3cd where the
 * kernel's mem-stores is 0x2cd (tests/fixtures/README-sysfs-pmu.md), is
 * asserted as a divergence so that a fixed libpfm4 shows up here too.
 *
 * Without libpfm4-dev at build time this test prints SKIP; the same
 * encodings are still checked against hand-written values by
 * dryrun-fixtures.sh and test-pmu.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base.h"
#include "pmu.h"
#include "testlib.h"

#ifdef MEMTOP_HAVE_LIBPFM
#include <perfmon/pfmlib_perf_event.h>

struct xcase {
	const char *pfm_pmu;		/* LIBPFM_FORCE_PMU */
	const char *pfm_event;
	const char *tree;		/* tests/fixtures/sysfs-pmu/<tree> */
	const char *sysfs_event;	/* cpu/events/<...> */
	unsigned ldlat;			/* override, 0 = none */
	uint64_t kernel_config;		/* what the kernel's string packs to */
	bool libpfm_differs;		/* the documented divergence */
	uint64_t libpfm_config;		/* libpfm4's value when it differs */
};

static const struct xcase xcases[] = {
	{ "skx", "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30", "skylake-sp",
	  "mem-loads", 30, 0x1cd, false, 0 },
	{ "skx", "MEM_INST_RETIRED:ALL_STORES", "skylake-sp", "mem-stores", 0,
	  0x82d0, false, 0 },
	{ "icx", "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30", "icelake-sp",
	  "mem-loads", 30, 0x1cd, false, 0 },
	{ "icx", "MEM_INST_RETIRED:ALL_STORES", "icelake-sp", "mem-stores", 0,
	  0x82d0, false, 0 },
	{ "spr", "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30", "sapphire-rapids",
	  "mem-loads", 30, 0x1cd, false, 0 },
	{ "spr", "MEM_TRANS_RETIRED:STORE_SAMPLE", "sapphire-rapids",
	  "mem-stores", 0, 0x2cd, true, 0x3cd },
	{ "spr", "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=100", "sapphire-rapids",
	  "mem-loads", 100, 0x1cd, false, 0 },
};

/*
 * Encodes with libpfm4 forced to pmu, in a child process: libpfm4 reads
 * LIBPFM_FORCE_PMU once per process, not at every pfm_initialize().
 * 0 or -1.
 */
static int
pfm_encode(const char *pmu, const char *event, struct perf_event_attr *attr)
{
	int fds[2], status;
	pid_t pid;
	ssize_t n;

	if (pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		pfm_perf_encode_arg_t arg;
		int ret;

		close(fds[0]);
		setenv("LIBPFM_FORCE_PMU", pmu, 1);
		ret = pfm_initialize();
		if (ret != PFM_SUCCESS) {
			fprintf(stderr, "  pfm_initialize(%s): %s\n", pmu,
				pfm_strerror(ret));
			_exit(1);
		}
		memset(attr, 0, sizeof(*attr));
		memset(&arg, 0, sizeof(arg));
		arg.attr = attr;
		arg.size = sizeof(arg);
		ret = pfm_get_os_event_encoding(event, PFM_PLM3,
						PFM_OS_PERF_EVENT, &arg);
		if (ret != PFM_SUCCESS) {
			fprintf(stderr, "  %s on %s: %s\n", event, pmu,
				pfm_strerror(ret));
			_exit(1);
		}
		_exit(write(fds[1], attr, sizeof(*attr)) ==
		      (ssize_t)sizeof(*attr) ? 0 : 1);
	}
	close(fds[1]);
	n = read(fds[0], attr, sizeof(*attr));
	close(fds[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || n != (ssize_t)sizeof(*attr))
		return -1;
	return 0;
}

int
main(void)
{
	const char *srcdir = getenv("MEMTOP_SRCDIR");
	char root[1024], err[256];

	if (!srcdir)
		test_skip("MEMTOP_SRCDIR not set (run through meson test)");
	for (size_t i = 0; i < ARRAY_SIZE(xcases); i++) {
		const struct xcase *c = &xcases[i];
		struct pmu_terms ov = { .n = 0 };
		struct perf_event_attr ours, theirs;

		fprintf(stderr, "%s %s\n", c->pfm_pmu, c->pfm_event);
		snprintf(root, sizeof(root), "%s/tests/fixtures/sysfs-pmu/%s", srcdir,
			 c->tree);
		setenv("MEMTOP_SYSFS_ROOT", root, 1);
		if (c->ldlat)
			pmu_terms_set(&ov, "ldlat", c->ldlat);
		memset(&ours, 0, sizeof(ours));
		if (!check_eq_i64(pmu_encode("cpu", c->sysfs_event, &ov, &ours,
					     err, sizeof(err)), 0))
			continue;
		check_eq_u64(ours.config, c->kernel_config);
		check_eq_u64(ours.config1, c->ldlat);
		if (!check_eq_i64(pfm_encode(c->pfm_pmu, c->pfm_event,
					     &theirs), 0))
			continue;
		check_eq_u64(theirs.type, PERF_TYPE_RAW);
		check_eq_u64(theirs.config1, ours.config1);
		if (c->libpfm_differs) {
			/* If this fails, libpfm4 was fixed: drop the flag. */
			check_eq_u64(theirs.config, c->libpfm_config);
			check(theirs.config != ours.config);
		} else {
			check_eq_u64(theirs.config, ours.config);
		}
	}
	return test_result();
}

#else

int
main(void)
{
	test_skip("built without libpfm4 (apt-get install libpfm4-dev)");
}

#endif
