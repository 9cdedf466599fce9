/*
 * Main thread.  See dryrun.h.
 *
 * --list-events builds every source the way a run would, which opens its
 * events once on this machine (source_*_init), so "works" is a fact, not
 * a guess.  Under MEMTOP_SYSFS_ROOT the hardware sources come from a
 * recorded tree whose PMUs do not exist here: they are built but not
 * opened, and say "would open".
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "cpulist.h"
#include "dryrun.h"
#include "log.h"
#include "pmu.h"
#include "softdirty.h"
#include "source.h"
#include "sysfs.h"

enum dryrun_kind {
	DRYRUN_PEBS,
	DRYRUN_IBS,
	DRYRUN_SPE,
	DRYRUN_DAMON,
	DRYRUN_FAULTS,
};

static const struct {
	enum dryrun_kind kind;
	const char *name;
} dryrun_sources[] = {
	{ DRYRUN_PEBS, "pebs" },
	{ DRYRUN_IBS, "ibs" },
	{ DRYRUN_SPE, "spe" },
	{ DRYRUN_DAMON, "damon" },
	{ DRYRUN_FAULTS, "faults" },
};

static const struct {
	uint64_t bit;
	const char *name;
} dryrun_sample_bits[] = {
	{ PERF_SAMPLE_IP, "IP" },
	{ PERF_SAMPLE_TID, "TID" },
	{ PERF_SAMPLE_TIME, "TIME" },
	{ PERF_SAMPLE_ADDR, "ADDR" },
	{ PERF_SAMPLE_READ, "READ" },
	{ PERF_SAMPLE_CALLCHAIN, "CALLCHAIN" },
	{ PERF_SAMPLE_ID, "ID" },
	{ PERF_SAMPLE_CPU, "CPU" },
	{ PERF_SAMPLE_PERIOD, "PERIOD" },
	{ PERF_SAMPLE_STREAM_ID, "STREAM_ID" },
	{ PERF_SAMPLE_RAW, "RAW" },
	{ PERF_SAMPLE_WEIGHT, "WEIGHT" },
	{ PERF_SAMPLE_DATA_SRC, "DATA_SRC" },
	{ PERF_SAMPLE_IDENTIFIER, "IDENTIFIER" },
	{ PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR" },
	{ PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT" },
	{ PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE" },
};

static const char *
dryrun_role(enum event_role role)
{
	switch (role) {
	case ROLE_LOAD: return "load";
	case ROLE_STORE: return "store";
	case ROLE_AUX: return "aux";
	case ROLE_OP: return "op";
	case ROLE_FAULT: return "fault";
	case ROLE_FAULT_TP: return "fault";
	}
	return "?";
}

/* Builds one source as a run would; 0 or -errno with the status in why. */
static int
dryrun_build(enum dryrun_kind kind, struct source *src, char *why,
	     size_t whylen)
{
	char text[400] = "";
	int ret;

	switch (kind) {
	case DRYRUN_PEBS:
		return source_pebs_init(src, 0, why, whylen);
	case DRYRUN_IBS:
		return source_ibs_init(src, why, whylen);
	case DRYRUN_SPE:
		return source_spe_status(why, whylen);
	case DRYRUN_DAMON:
		ret = source_damon_init(src, false, text, sizeof(text));
		snprintf(why, whylen, "%s%s%s", ret == -EBUSY ? "busy (" :
			 ret == -EACCES ? "permission denied (" :
			 ret == -EOPNOTSUPP && !strstr(text, "not supported") ?
			 "not supported by this CPU/kernel (" : "", text,
			 ret == -EOPNOTSUPP && strstr(text, "not supported") ?
			 "" : ")");
		return ret;
	case DRYRUN_FAULTS:
		break;
	}
	ret = source_faults_init(src, text, sizeof(text));
	if (ret < 0)
		snprintf(why, whylen, "%s (%s)",
			 ret == -EACCES || ret == -EPERM ?
			 "permission denied" :
			 "not supported by this CPU/kernel", text);
	return ret;
}

/* The faults source's --rearm: whether the kernel keeps soft-dirty bits. */
static void
dryrun_softdirty(FILE *out)
{
	char why[300];

	if (softdirty_probe(why, sizeof(why)) < 0)
		fprintf(out, "soft-dirty (faults --rearm) not supported by "
			"this kernel (%s)\n", why);
	else
		fprintf(out, "soft-dirty (faults --rearm) works: each page's "
			"first write per interval is a fault (loads not seen; "
			"needs write access to /proc/PID/clear_refs: the "
			"target's user or CAP_SYS_PTRACE)\n");
}

int
dryrun_list_events(FILE *out)
{
	bool any = false;

	for (size_t i = 0; i < ARRAY_SIZE(dryrun_sources); i++) {
		enum dryrun_kind kind = dryrun_sources[i].kind;
		bool hw = kind != DRYRUN_FAULTS;
		struct source src;
		char why[512];

		memset(&src, 0, sizeof(src));
		if (dryrun_build(kind, &src, why, sizeof(why)) < 0) {
			fprintf(out, "%-7s %s\n", dryrun_sources[i].name, why);
			continue;
		}
		any = true;
		fprintf(out, "%-7s %s: ", dryrun_sources[i].name,
			hw && !pmu_sysfs_is_real() ? "would open" : "works");
		for (size_t e = 0; e < src.n_events; e++)
			fprintf(out, "%s%s/%s (type %" PRIu32 ")",
				e ? ", " : "", src.events[e].pmu,
				src.events[e].name, src.events[e].attr.type);
		if (src.n_events == 0 && src.damon)
			fprintf(out, "a kdamond of memtop's own (DAMON sysfs, "
				"no perf event)");
		fprintf(out, "; %s\n", src.note);
		if (kind == DRYRUN_FAULTS)
			dryrun_softdirty(out);
	}
	/* Beside every source: the allocation events (issue 18). */
	{
		struct source src;

		memset(&src, 0, sizeof(src));
		source_alloc_init(&src);
		if (src.alloc_hold_fd >= 0)
			close(src.alloc_hold_fd);
		fprintf(out, "%-7s %s\n", "objects", src.alloc_note +
			(strncmp(src.alloc_note, "objects: ", 9) ? 0 : 9));
	}
	/* --heap-objects: the uprobe PMU and the right to open it. */
	{
		char why[200];

		fprintf(out, "%-7s %s: %s\n", "heap",
			source_heap_check(why, sizeof(why)) == 0 ?
			"--heap-objects works" : "--heap-objects off", why);
	}
	return any ? 0 : 1;
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void
dryrun_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void
dryrun_sample_type(FILE *out, uint64_t st, bool json)
{
	bool first = true;

	for (size_t i = 0; i < ARRAY_SIZE(dryrun_sample_bits); i++) {
		if (!(st & dryrun_sample_bits[i].bit))
			continue;
		fprintf(out, json ? "%s\"%s\"" : "%s%s", first ? "" :
			(json ? "," : "|"), dryrun_sample_bits[i].name);
		first = false;
	}
}

static void
dryrun_event_json(FILE *out, const struct source *src,
		  const struct event_spec *ev, uint64_t period,
		  const char *cpus)
{
	const struct perf_event_attr *a = &ev->attr;

	fputs("{\"name\":", out);
	dryrun_json_str(out, ev->name);
	fputs(",\"pmu\":", out);
	dryrun_json_str(out, ev->pmu);
	fprintf(out, ",\"type\":%" PRIu32 ",\"config\":\"0x%" PRIx64
		"\",\"config1\":\"0x%" PRIx64 "\",\"config2\":\"0x%" PRIx64
		"\",\"precise_ip\":%u,\"sample_type\":[", a->type,
		(uint64_t)a->config, (uint64_t)a->config1,
		(uint64_t)a->config2, (unsigned)a->precise_ip);
	dryrun_sample_type(out, a->sample_type, true);
	fprintf(out, "],\"sample_period\":%" PRIu64 ",\"exclude_kernel\":%s"
		",\"leader\":", period, a->exclude_kernel ? "true" : "false");
	if (ev->leader >= 0)
		dryrun_json_str(out, src->events[ev->leader].name);
	else
		fputs("null", out);
	fprintf(out, ",\"role\":\"%s\"", dryrun_role(ev->role));
	if (cpus) {
		fputs(",\"cpus\":", out);
		dryrun_json_str(out, cpus);
	}
	fputc('}', out);
}

static void
dryrun_event_text(FILE *out, const struct source *src,
		  const struct event_spec *ev, uint64_t period,
		  const char *cpus)
{
	const struct perf_event_attr *a = &ev->attr;

	fprintf(out, "event %s pmu=%s type=%" PRIu32 " config=0x%" PRIx64
		" config1=0x%" PRIx64 " config2=0x%" PRIx64 " precise_ip=%u"
		" sample_period=%" PRIu64 " exclude_kernel=%u leader=%s"
		" role=%s\n  sample_type=", ev->name, ev->pmu, a->type,
		(uint64_t)a->config, (uint64_t)a->config1,
		(uint64_t)a->config2, (unsigned)a->precise_ip, period,
		(unsigned)a->exclude_kernel,
		ev->leader >= 0 ? src->events[ev->leader].name : "-",
		dryrun_role(ev->role));
	dryrun_sample_type(out, a->sample_type, false);
	if (cpus)
		fprintf(out, "\n  cpus=%s", cpus);
	fputc('\n', out);
}

/* The CPUs of *watched that ev counts on, into buf ("" for none). */
static void
dryrun_event_cpus(const struct event_spec *ev, const struct cpulist *watched,
		  char *buf, size_t len)
{
	struct cpulist on = { { 0 } };

	for (int c = cpulist_next(watched, 0); c >= 0;
	     c = cpulist_next(watched, c + 1))
		if (source_event_on_cpu(ev, c))
			cpulist_set(&on, c);
	cpulist_format(&on, buf, len);
}

/* -a without -C: the online CPUs (under MEMTOP_SYSFS_ROOT, the tree's). */
static int
dryrun_watched(const struct cpulist *cpus, struct cpulist *out)
{
	char path[512];
	int ret;

	if (cpus) {
		*out = *cpus;
		return 0;
	}
	ret = sysfs_path(path, sizeof(path), "devices/system/cpu/online");
	if (ret == 0)
		ret = cpulist_read(path, out);
	if (ret < 0)
		log_error("--dry-run -a: cannot read the online CPUs "
			  "(%s): %s", path, strerror(-ret));
	return ret;
}

int
dryrun_print(const struct source_opts *so, bool json, bool system,
	     const struct cpulist *cpus, FILE *out)
{
	struct source src;
	struct cpulist watched;
	char why[1024], on[SOURCE_MAX_EVENTS][256];
	uint64_t period;
	size_t shown = 0;
	int ret = source_select_opts(so, &src, why, sizeof(why));

	if (ret < 0) {
		log_error("%s", why);
		return 1;
	}
	if (system && dryrun_watched(cpus, &watched) < 0)
		return 1;
	for (size_t i = 0; i < src.n_events; i++) {
		on[i][0] = '\0';
		if (system)
			dryrun_event_cpus(&src.events[i], &watched, on[i],
					  sizeof(on[i]));
		shown += !system || on[i][0];
	}
	if (!shown) {
		cpulist_format(&watched, why, sizeof(why));
		log_error("-C %s: no event of %s counts on these CPUs",
			  why, src.name);
		return 1;
	}
	period = source_period(&src, so->period);
	if (json) {
		fprintf(out, "{\"source\":\"%s\",\"note\":", src.name);
		dryrun_json_str(out, src.note);
		fputs(",\"events\":[", out);
	} else {
		fprintf(out, "source %s: %s\n", src.name, src.note);
	}
	shown = 0;
	for (size_t i = 0; i < src.n_events; i++) {
		if (system && !on[i][0])
			continue;	/* its PMU covers none of them */
		if (json) {
			if (shown++)
				fputc(',', out);
			dryrun_event_json(out, &src, &src.events[i], period,
					  system ? on[i] : NULL);
		} else {
			dryrun_event_text(out, &src, &src.events[i], period,
					  system ? on[i] : NULL);
		}
	}
	if (json)
		fputs("]}\n", out);
	return 0;
}
