/*
 * The `ibs` source: AMD Instruction-Based Sampling, one `ibs_op` event
 * per thread (docs/kernel.md, "AMD IBS").  The PMU type is dynamic
 * (ibs_op/type).  Every tagged op is a sample; the kernel fills DATA_SRC
 * with mem_op LOAD or STORE for memory ops (source_decode's ROLE_OP
 * splits them) and ADDR only when the linear address is valid, so most
 * samples (non-memory ops) have addr 0 and are counted as unattributed.
 *
 * Kernel gates, judged from the release because nothing in sysfs says
 * them: ADDR/DATA_SRC/WEIGHT since 6.1, per-thread events (pid, cpu -1)
 * since 6.2.  User-only sampling: until 6.14 IBS refuses every exclude_*
 * bit, so it samples kernel ops too and needs CAP_PERFMON or
 * perf_event_paranoid <= 1; from 6.14 format/swfilt (config2:0) lets the
 * NMI handler drop them, and exclude_kernel works at paranoid 2.
 *
 * cnt_ctl=1 (where format/cnt_ctl exists) counts dispatched ops, so the
 * period is in ops, not cycles.  Periods: multiples of 16, at least 0x90
 * (6.15 rejects smaller ones; older kernels mask the low nibble silently);
 * source_period() adjusts and says so.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kver.h"
#include "source_hw.h"

#define IBS_PMU			"ibs_op"
#define IBS_DEFAULT_PERIOD	0x40000
#define IBS_PERIOD_STEP		16
#define IBS_PERIOD_MIN		0x90

#define IBS_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | \
			 PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | \
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_DATA_SRC | \
			 PERF_SAMPLE_WEIGHT_STRUCT)

static const char ibs_privilege_hint[] =
	"before 6.14 (no ibs_op/format/swfilt) IBS cannot leave out kernel "
	"samples, so it needs CAP_PERFMON or kernel.perf_event_paranoid <= 1 "
	"(sysctl -w kernel.perf_event_paranoid=1)";

/* 0 when this kernel release can give per-thread IBS addresses. */
static int
ibs_check_kernel(const struct kver *kv, char *why, size_t whylen)
{
	if (!kver_at_least(kv, 6, 1)) {
		snprintf(why, whylen, "not supported by this CPU/kernel "
			 "(kernel %s: IBS samples carry data addresses from "
			 "6.1 on)", kv->release);
		return -EOPNOTSUPP;
	}
	if (!kver_at_least(kv, 6, 2)) {
		snprintf(why, whylen, "not supported by this CPU/kernel "
			 "(kernel %s: per-thread IBS events need 6.2)",
			 kv->release);
		return -EOPNOTSUPP;
	}
	return 0;
}

int
source_ibs_init(struct source *src, char *why, size_t whylen)
{
	struct pmu_terms terms = { .n = 0 };
	bool real = pmu_sysfs_is_real(), swfilt, cnt_ctl;
	struct perf_event_attr *a;
	const char *failed;
	struct kver kv;
	int ret;

	memset(src, 0, sizeof(*src));
	snprintf(src->name, sizeof(src->name), "ibs");
	src->default_period = IBS_DEFAULT_PERIOD;
	src->period_step = IBS_PERIOD_STEP;
	src->period_min = IBS_PERIOD_MIN;
	src->has_kinds = true;
	src->period_in_sample = true;

	if (!pmu_exists(IBS_PMU)) {
		snprintf(why, whylen, "not supported by this CPU/kernel (no "
			 "ibs_op PMU: not an AMD CPU with IBS, or a VM, "
			 "where IBS is not virtualised)");
		return -ENODEV;
	}
	ret = kver_current(&kv);
	if (ret < 0) {
		snprintf(why, whylen, "not supported by this CPU/kernel "
			 "(cannot tell the kernel release: %s)",
			 strerror(-ret));
		return ret;
	}
	ret = ibs_check_kernel(&kv, why, whylen);
	if (ret < 0)
		return ret;

	swfilt = pmu_has_format(IBS_PMU, "swfilt");
	cnt_ctl = pmu_has_format(IBS_PMU, "cnt_ctl");
	if (cnt_ctl)
		pmu_terms_set(&terms, "cnt_ctl", 1);
	if (swfilt)
		pmu_terms_set(&terms, "swfilt", 1);
	ret = source_hw_add(src, IBS_PMU, IBS_PMU, NULL, &terms, ROLE_OP, -1,
			    why, whylen);
	if (ret < 0)
		return ret;
	a = &src->events[0].attr;
	a->sample_type = IBS_SAMPLE_TYPE;
	/* Without swfilt any exclude_* bit is EINVAL (perf_ibs_init). */
	a->exclude_kernel = swfilt;
	a->exclude_hv = swfilt;

	if (real) {
		ret = source_hw_probe(src, &failed);
		if (ret < 0) {
			source_hw_explain(-ret, failed,
					  swfilt ? NULL : ibs_privilege_hint,
					  why, whylen);
			return ret;
		}
	}
	source_hw_note(src, "ibs on ibs_op: one op tagged every N %s; loads "
		       "and stores from data_src, ops without a data address "
		       "count as unattributed",
		       cnt_ctl ? "dispatched ops" : "cycles");
	if (!swfilt)
		source_hw_note(src, "; kernel %s has no swfilt, so kernel "
			       "ops are sampled too (needs CAP_PERFMON or "
			       "perf_event_paranoid <= 1) and left "
			       "unattributed", kv.release);
	if (!real)
		source_hw_note(src, "; from MEMTOP_SYSFS_ROOT, not opened");
	return 0;
}
