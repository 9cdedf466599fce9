/* Main thread.  See dryrun.h. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "dryrun.h"
#include "source.h"

static const struct {
	enum source_choice choice;
	const char *name;
} dryrun_sources[] = {
	{ SOURCE_PEBS, "pebs" },
	{ SOURCE_IBS, "ibs" },
	{ SOURCE_FAULTS, "faults" },
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

int
dryrun_list_events(FILE *out)
{
	bool any = false;

	for (size_t i = 0; i < sizeof(dryrun_sources) /
				sizeof(dryrun_sources[0]); i++) {
		struct source src;
		char why[512];
		int ret = source_select(dryrun_sources[i].choice, &src, why,
					sizeof(why));

		if (ret == 0) {
			any = true;
			fprintf(out, "%-8s works: ", dryrun_sources[i].name);
			for (size_t e = 0; e < src.n_events; e++)
				fprintf(out, "%s%s", e ? ", " : "",
					src.events[e].name);
			fprintf(out, " (%s)\n", src.note);
		} else if (ret == -EACCES || ret == -EPERM) {
			fprintf(out, "%-8s permission denied (%s)\n",
				dryrun_sources[i].name, why);
		} else {
			fprintf(out, "%-8s %s\n", dryrun_sources[i].name, why);
		}
	}
	fprintf(out, "%-8s not supported yet (no Arm SPE decoder)\n", "spe");
	return any ? 0 : 1;
}

static void
dryrun_sample_type(FILE *out, uint64_t st, bool json)
{
	bool first = true;

	for (size_t i = 0; i < sizeof(dryrun_sample_bits) /
				sizeof(dryrun_sample_bits[0]); i++) {
		if (!(st & dryrun_sample_bits[i].bit))
			continue;
		fprintf(out, json ? "%s\"%s\"" : "%s%s", first ? "" :
			(json ? "," : "|"), dryrun_sample_bits[i].name);
		first = false;
	}
}

int
dryrun_print(const struct options *opt, FILE *out)
{
	struct source src;
	char why[512];
	uint64_t period;
	int ret = source_select(opt->source, &src, why, sizeof(why));

	if (ret < 0) {
		fprintf(stderr, "memtop: %s\n", why);
		return 1;
	}
	period = opt->period ? opt->period : src.default_period;
	if (opt->json)
		fprintf(out, "{\"source\":\"%s\",\"events\":[", src.name);
	else
		fprintf(out, "source %s: %s\n", src.name, src.note);
	for (size_t i = 0; i < src.n_events; i++) {
		const struct event_spec *ev = &src.events[i];
		const struct perf_event_attr *a = &ev->attr;
		const char *leader = ev->leader >= 0 ?
				     src.events[ev->leader].name : NULL;

		if (opt->json) {
			fprintf(out, "%s{\"name\":\"%s\",\"pmu\":\"%s\","
				"\"type\":%" PRIu32 ",\"config\":\"0x%" PRIx64
				"\",\"config1\":\"0x%" PRIx64 "\","
				"\"config2\":\"0x%" PRIx64 "\","
				"\"precise_ip\":%u,\"sample_type\":[",
				i ? "," : "", ev->name, ev->pmu, a->type,
				(uint64_t)a->config, (uint64_t)a->config1,
				(uint64_t)a->config2, a->precise_ip);
			dryrun_sample_type(out, a->sample_type, true);
			fprintf(out, "],\"sample_period\":%" PRIu64
				",\"exclude_kernel\":%s,\"leader\":",
				period, a->exclude_kernel ? "true" : "false");
			if (leader)
				fprintf(out, "\"%s\"", leader);
			else
				fputs("null", out);
			fprintf(out, ",\"role\":\"%s\"}", dryrun_role(ev->role));
			continue;
		}
		fprintf(out, "event %s pmu=%s type=%" PRIu32 " config=0x%"
			PRIx64 " config1=0x%" PRIx64 " config2=0x%" PRIx64
			" precise_ip=%u sample_period=%" PRIu64
			" exclude_kernel=%u leader=%s role=%s\n  sample_type=",
			ev->name, ev->pmu, a->type, (uint64_t)a->config,
			(uint64_t)a->config1, (uint64_t)a->config2,
			a->precise_ip, period, a->exclude_kernel,
			leader ? leader : "-", dryrun_role(ev->role));
		dryrun_sample_type(out, a->sample_type, false);
		fputc('\n', out);
	}
	if (opt->json)
		fputs("]}\n", out);
	return 0;
}
