/*
 * The `pebs` source: Intel PEBS memory sampling from the kernel's own
 * event descriptions (docs/kernel.md, "Intel PEBS").  Per core PMU (`cpu`, or
 * `cpu_core` and `cpu_atom` on hybrid parts, each with its own type):
 *
 *   mem-loads-aux   group leader, where the PMU publishes it (SPR, EMR,
 *                   hybrid P-cores): without it the ldlat event with
 *                   DATA_SRC fails with ENODATA.  Its samples are dropped.
 *   mem-loads       loads of at least ldlat cycles (default 30, --ldlat):
 *                   address, data source (level, snoop, remote, TLB) and
 *                   latency in WEIGHT.
 *   mem-stores      stores: address and (mostly) an L1 hit/miss.
 *
 * A thread only counts on the PMU of the core it runs on, so hybrid
 * machines get one set per core PMU in every channel.
 *
 * precise_ip comes from caps/max_precise (PEBS needs >= 1).  The sample
 * type holds only fields PEBS can write without an interrupt per record
 * (intel_pmu_large_pebs_flags), so the kernel may batch them (large PEBS):
 * no CALLCHAIN, no DATA_PAGE_SIZE, and no TIME because the channels set
 * use_clockid, which takes TIME out of the free-running set; the core
 * does not use sample times.  WEIGHT_STRUCT (5.12+) falls back to WEIGHT.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kver.h"
#include "source_hw.h"

#define PEBS_DEFAULT_LDLAT	30
/* Prime, so strided loops do not alias with it; above every minimum the
 * kernel enforces (32 on Nehalem, 128 for precise_ip=3 on SPR-class). */
#define PEBS_DEFAULT_PERIOD	10007
#define PEBS_MAX_PMUS		4

#define PEBS_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | \
			  PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | \
			  PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
			  PERF_SAMPLE_DATA_SRC)

struct pebs_pmu {
	char name[PMU_NAME_MAX];
	uint32_t type;
};

static int
pebs_pmu_cmp(const void *a, const void *b)
{
	const struct pebs_pmu *x = a, *y = b;

	return x->type < y->type ? -1 : x->type > y->type;
}

/* Core PMUs publishing mem-loads, by type (cpu_core before cpu_atom). */
static int
pebs_find_pmus(struct pebs_pmu *out, char *why, size_t whylen)
{
	char names[PEBS_MAX_PMUS][PMU_NAME_MAX];
	int n = pmu_list("cpu", "cpu_", names, PEBS_MAX_PMUS);
	int found = 0;

	for (int i = 0; i < n; i++) {
		if (!pmu_has_event(names[i], "mem-loads") ||
		    pmu_read_type(names[i], &out[found].type) < 0)
			continue;
		memcpy(out[found].name, names[i], PMU_NAME_MAX);
		found++;
	}
	if (found == 0) {
		snprintf(why, whylen, "not supported by this CPU/kernel (%s)",
			 n > 0 ? "no core PMU publishes events/mem-loads: "
				 "not an Intel CPU with PEBS load latency" :
				 "no Intel core PMU (cpu, cpu_*) in sysfs: "
				 "not x86, or a VM without a virtual PMU");
		return -ENODEV;
	}
	qsort(out, (size_t)found, sizeof(out[0]), pebs_pmu_cmp);
	return found;
}

/* Event names: "mem-loads", or "cpu_atom/mem-loads" on hybrid parts
 * (PMU names are short: truncation cannot happen in practice). */
static void
pebs_name(char *buf, size_t len, bool hybrid, const char *pmu,
	  const char *event)
{
	if (snprintf(buf, len, "%s%s%s", hybrid ? pmu : "",
		     hybrid ? "/" : "", event) >= (int)len)
		buf[len - 1] = '\0';
}

/* Adds one core PMU's events, numbered after those already in src. */
static int
pebs_add_pmu(struct source *src, const char *pmu, bool hybrid,
	     unsigned ldlat, char *why, size_t whylen)
{
	struct pmu_terms ov = { .n = 0 };
	int precise = pmu_max_precise(pmu);
	int leader = -1, ret;
	char name[64];

	if (precise == 0) {
		snprintf(why, whylen, "not supported by this CPU/kernel "
			 "(%s/caps/max_precise is 0: PEBS is not available)",
			 pmu);
		return -EOPNOTSUPP;
	}
	/* Kernels before the caps/ directory had PEBS at level 1 at least. */
	if (precise < 0)
		precise = 1;

	if (pmu_has_event(pmu, "mem-loads-aux")) {
		pebs_name(name, sizeof(name), hybrid, pmu, "mem-loads-aux");
		leader = source_hw_add(src, name, pmu, "mem-loads-aux", NULL,
				       ROLE_AUX, -1, why, whylen);
		if (leader < 0)
			return leader;
	}
	pmu_terms_set(&ov, "ldlat", ldlat);
	pebs_name(name, sizeof(name), hybrid, pmu, "mem-loads");
	ret = source_hw_add(src, name, pmu, "mem-loads", &ov, ROLE_LOAD,
			    leader, why, whylen);
	if (ret < 0)
		return ret;
	if (pmu_has_event(pmu, "mem-stores")) {
		pebs_name(name, sizeof(name), hybrid, pmu, "mem-stores");
		ret = source_hw_add(src, name, pmu, "mem-stores", NULL,
				    ROLE_STORE, -1, why, whylen);
		if (ret < 0)
			return ret;
	}

	for (size_t i = 0; i < src->n_events; i++) {
		struct perf_event_attr *a = &src->events[i].attr;

		if (strcmp(src->events[i].pmu, pmu) != 0)
			continue;
		a->precise_ip = (unsigned)precise;
		a->sample_type = PEBS_SAMPLE_TYPE;
		a->exclude_kernel = 1;
		a->exclude_hv = 1;
	}
	return 0;
}

static void
pebs_set_weight(struct source *src, uint64_t bit)
{
	for (size_t i = 0; i < src->n_events; i++) {
		src->events[i].attr.sample_type &=
			~(uint64_t)(PERF_SAMPLE_WEIGHT |
				    PERF_SAMPLE_WEIGHT_STRUCT);
		src->events[i].attr.sample_type |= bit;
	}
}

/*
 * Real PMU: try WEIGHT_STRUCT, and WEIGHT when the kernel refuses it with
 * EINVAL (it predates 5.12).  0 or -errno with a status in why.
 */
static int
pebs_probe(struct source *src, bool *weight_struct, char *why,
	   size_t whylen)
{
	const char *failed;
	int ret;

	pebs_set_weight(src, PERF_SAMPLE_WEIGHT_STRUCT);
	*weight_struct = true;
	ret = source_hw_probe(src, &failed);
	if (ret == -EINVAL) {
		pebs_set_weight(src, PERF_SAMPLE_WEIGHT);
		*weight_struct = false;
		ret = source_hw_probe(src, &failed);
	}
	if (ret < 0)
		source_hw_explain(-ret, failed, NULL, why, whylen);
	return ret;
}

int
source_pebs_init(struct source *src, unsigned ldlat, char *why,
		 size_t whylen)
{
	struct pebs_pmu pmus[PEBS_MAX_PMUS];
	bool weight_struct, real = pmu_sysfs_is_real();
	char pmu_name[64] = "";
	struct kver kv;
	int n, ret;

	memset(src, 0, sizeof(*src));
	snprintf(src->name, sizeof(src->name), "pebs");
	src->default_period = PEBS_DEFAULT_PERIOD;
	src->has_kinds = true;
	src->period_in_sample = true;
	if (ldlat == 0)
		ldlat = PEBS_DEFAULT_LDLAT;

	n = pebs_find_pmus(pmus, why, whylen);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		ret = pebs_add_pmu(src, pmus[i].name, n > 1, ldlat, why,
				   whylen);
		if (ret < 0)
			return ret;
	}

	if (real) {
		ret = pebs_probe(src, &weight_struct, why, whylen);
		if (ret < 0)
			return ret;
	} else {
		/* A recorded tree: judge WEIGHT_STRUCT by the release. */
		weight_struct = kver_current(&kv) < 0 ||
				kver_at_least(&kv, 5, 12);
		pebs_set_weight(src, weight_struct ? PERF_SAMPLE_WEIGHT_STRUCT :
						     PERF_SAMPLE_WEIGHT);
	}

	pmu_read_file(pmus[0].name, "caps/pmu_name", pmu_name,
		      sizeof(pmu_name));
	source_hw_note(src, "pebs on %s%s%s%s", pmus[0].name,
		       n > 1 ? " and " : "", n > 1 ? pmus[1].name : "",
		       n > 2 ? " ..." : "");
	if (pmu_name[0])
		source_hw_note(src, " (%s)", pmu_name);
	source_hw_note(src, ": loads of %u+ cycles and stores, with data "
		       "address, source and latency (%s)", ldlat,
		       weight_struct ? "WEIGHT_STRUCT" : "WEIGHT");
	if (src->events[0].role == ROLE_AUX)
		source_hw_note(src, "; mem-loads-aux leads the load group, "
			       "its samples are ignored");
	if (n > 1)
		source_hw_note(src, "; one set per core type, a thread "
			       "samples on the type it runs on");
	if (!real)
		source_hw_note(src, "; from MEMTOP_SYSFS_ROOT, not opened");
	return 0;
}
