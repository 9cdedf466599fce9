/*
 * The exposition: a snapshot as Prometheus text format 0.0.4 or as
 * OpenMetrics 1.0.0.  Pure: any thread may render any snapshot (the HTTP
 * server's thread per scrape, the UI thread for --metrics-file).
 *
 * The two formats differ only in the family lines: OpenMetrics names a
 * counter family without its "_total" (the samples keep it), an info
 * family without "_info", writes # UNIT where the name ends in a unit,
 * and ends with "# EOF".  Families are a contract (man/memtop.1,
 * METRICS); a family without series is left out.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_int.h"

enum metrics_type { MT_COUNTER, MT_GAUGE, MT_INFO };

struct metrics_family {
	const char *name;	/* the samples' name */
	enum metrics_type type;
	const char *unit;	/* NULL: none */
	const char *help;	/* no backslash, quote or newline */
};

/* A growing output buffer; oom once an allocation failed. */
struct metrics_out {
	char *p;
	size_t len, cap;
	bool oom;
	bool om;		/* OpenMetrics */
	unsigned labels;	/* labels written in the current sample */
};

static bool
mo_room(struct metrics_out *o, size_t n)
{
	size_t cap;
	char *p;

	if (o->oom)
		return false;
	if (o->len + n + 1 <= o->cap)
		return true;
	cap = o->cap ? o->cap : 4096;
	while (cap < o->len + n + 1)
		cap *= 2;
	p = realloc(o->p, cap);
	if (!p) {
		o->oom = true;
		return false;
	}
	o->p = p;
	o->cap = cap;
	return true;
}

static void
mo_put(struct metrics_out *o, const char *s, size_t n)
{
	if (!mo_room(o, n))
		return;
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

static void
mo_str(struct metrics_out *o, const char *s)
{
	mo_put(o, s, strlen(s));
}

static void
mo_u64(struct metrics_out *o, uint64_t v)
{
	char buf[24];
	size_t i = sizeof(buf);

	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	mo_put(o, buf + i, sizeof(buf) - i);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
static size_t
mo_utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong, surrogate or beyond U+10FFFF. */
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return len;
}

/* A label value: \, " and newline escaped; bytes that are not UTF-8
 * (a comm cut inside a character) become U+FFFD, as in the JSON. */
static void
mo_label_value(struct metrics_out *o, const char *v)
{
	const unsigned char *s = (const unsigned char *)v;
	size_t n = strlen(v);

	while (n) {
		size_t len = mo_utf8_len(s, n);

		if (len == 0) {
			mo_str(o, "\xef\xbf\xbd");
			len = 1;
		} else if (*s == '\\') {
			mo_str(o, "\\\\");
		} else if (*s == '"') {
			mo_str(o, "\\\"");
		} else if (*s == '\n') {
			mo_str(o, "\\n");
		} else {
			mo_put(o, (const char *)s, len);
		}
		s += len;
		n -= len;
	}
}

/* The family's name in OpenMetrics: without the sample suffix. */
static void
mo_family_name(struct metrics_out *o, const struct metrics_family *fam)
{
	size_t n = strlen(fam->name);

	if (o->om && fam->type == MT_COUNTER)
		n -= strlen("_total");
	else if (o->om && fam->type == MT_INFO)
		n -= strlen("_info");
	mo_put(o, fam->name, n);
}

static void
mo_family(struct metrics_out *o, const struct metrics_family *fam)
{
	static const char *const types[] = {
		[MT_COUNTER] = "counter", [MT_GAUGE] = "gauge",
		[MT_INFO] = "info",
	};

	mo_str(o, "# HELP ");
	mo_family_name(o, fam);
	mo_str(o, " ");
	mo_str(o, fam->help);
	mo_str(o, "\n# TYPE ");
	mo_family_name(o, fam);
	mo_str(o, " ");
	/* Text 0.0.4 has no info type: a gauge of value 1, as
	 * client_golang writes build_info. */
	mo_str(o, !o->om && fam->type == MT_INFO ? "gauge" : types[fam->type]);
	mo_str(o, "\n");
	if (o->om && fam->unit) {
		mo_str(o, "# UNIT ");
		mo_family_name(o, fam);
		mo_str(o, " ");
		mo_str(o, fam->unit);
		mo_str(o, "\n");
	}
}

static void
mo_sample(struct metrics_out *o, const struct metrics_family *fam)
{
	mo_str(o, fam->name);
	o->labels = 0;
}

static void
mo_label(struct metrics_out *o, const char *key, const char *value)
{
	mo_str(o, o->labels++ ? "," : "{");
	mo_str(o, key);
	mo_str(o, "=\"");
	mo_label_value(o, value);
	mo_str(o, "\"");
}

/* A node, CPU or pid label: the number, or "unknown" when negative. */
static void
mo_label_id(struct metrics_out *o, const char *key, int64_t id)
{
	mo_str(o, o->labels++ ? "," : "{");
	mo_str(o, key);
	mo_str(o, "=\"");
	if (id < 0)
		mo_str(o, METRICS_UNKNOWN);
	else
		mo_u64(o, (uint64_t)id);
	mo_str(o, "\"");
}

static void
mo_value_text(struct metrics_out *o, const char *text)
{
	mo_str(o, o->labels ? "} " : " ");
	mo_str(o, text);
	mo_str(o, "\n");
}

static void
mo_value(struct metrics_out *o, uint64_t v)
{
	mo_str(o, o->labels ? "} " : " ");
	mo_u64(o, v);
	mo_str(o, "\n");
}

/* One series without labels, with its family lines. */
static void
mo_single(struct metrics_out *o, const struct metrics_family *fam,
	  uint64_t v)
{
	mo_family(o, fam);
	mo_sample(o, fam);
	mo_value(o, v);
}

static const struct metrics_family mf_build = {
	"memtop_build_info", MT_INFO, NULL,
	"memtop's version, its sampling source and the source's events; "
	"always 1." };
static const struct metrics_family mf_frames = {
	"memtop_frames_total", MT_COUNTER, NULL,
	"Frames the exporter has taken: one per refresh interval (-d)." };
static const struct metrics_family mf_samples = {
	"memtop_samples_total", MT_COUNTER, NULL,
	"Attributed samples (a data address and a known process) by access "
	"kind: load, store, or other when the source cannot tell." };
static const struct metrics_family mf_lost = {
	"memtop_lost_samples_total", MT_COUNTER, NULL,
	"Samples the kernel dropped (a full ring) or memtop skipped as "
	"malformed." };
static const struct metrics_family mf_throttled = {
	"memtop_throttled_samples_total", MT_COUNTER, NULL,
	"Times the kernel throttled sampling until the next tick." };
static const struct metrics_family mf_unattributed = {
	"memtop_unattributed_samples_total", MT_COUNTER, NULL,
	"Samples without a data address or a process." };
static const struct metrics_family mf_untracked = {
	"memtop_untracked_samples_total", MT_COUNTER, NULL,
	"Samples on pages that did not fit in the page table (--max-pages)." };
static const struct metrics_family mf_est = {
	"memtop_estimated_accesses_total", MT_COUNTER, NULL,
	"Samples times the sampling period in force when they were taken, "
	"by access kind: the accesses (page faults for the faults source) "
	"they stand for." };
static const struct metrics_family mf_node = {
	"memtop_node_samples_total", MT_COUNTER, NULL,
	"Samples by NUMA node: side=cpu issued by the node's CPUs, "
	"side=memory landing on the node's memory; node=unknown where the "
	"node is not known." };
static const struct metrics_family mf_local = {
	"memtop_node_local_samples_total", MT_COUNTER, NULL,
	"Samples issued by the node's CPUs to the node's own memory." };
static const struct metrics_family mf_remote = {
	"memtop_node_remote_samples_total", MT_COUNTER, NULL,
	"Samples issued by the node's CPUs to other nodes' memory." };
static const struct metrics_family mf_matrix = {
	"memtop_matrix_samples_total", MT_COUNTER, NULL,
	"Samples by the node of the issuing CPU and the node of the page; "
	"unknown where not known (samples of an unknown CPU node are not "
	"split by memory node)." };
static const struct metrics_family mf_cpu = {
	"memtop_cpu_samples_total", MT_COUNTER, NULL,
	"Samples by CPU and the CPU's node; cpu=unknown for samples whose "
	"CPU or its node is not known." };
static const struct metrics_family mf_proc = {
	"memtop_process_samples_total", MT_COUNTER, NULL,
	"Samples by process (the targets and their children), for the "
	"--metrics-top processes with most samples; pid=other counts the "
	"samples of the others." };
static const struct metrics_family mf_mig = {
	"memtop_page_migrations_total", MT_COUNTER, NULL,
	"Pages memtop was asked to move (--migrate-hot, the TUI's m and M) "
	"by result: moved, busy, denied, failed, skipped." };
static const struct metrics_family mf_cpusec = {
	"memtop_collector_cpu_seconds_total", MT_COUNTER, "seconds",
	"CPU time of memtop's collector thread: draining, decoding, "
	"aggregating, building frames." };
static const struct metrics_family mf_period = {
	"memtop_sampling_period", MT_GAUGE, NULL,
	"Sampling period in force: events per sample." };
static const struct metrics_family mf_imbalance = {
	"memtop_node_imbalance_ratio", MT_GAUGE, NULL,
	"The largest node's share of the latest interval's memory-side "
	"samples over its fair share 1/n: 1 even, n when all land on one "
	"node; absent when no sample had a known node." };
static const struct metrics_family mf_tracked = {
	"memtop_tracked_pages", MT_GAUGE, NULL,
	"Pages in memtop's page table." };

static void
mr_build(struct metrics_out *o, const struct metrics_snap *s)
{
	if (!s->have_frame)
		return;
	mo_family(o, &mf_build);
	mo_sample(o, &mf_build);
	mo_label(o, "version", s->version);
	mo_label(o, "source", s->source);
	mo_label(o, "events", s->events);
	mo_value(o, 1);
}

/* A family of one label with fixed values (kind, result). */
static void
mr_by_name(struct metrics_out *o, const struct metrics_family *fam,
	   const char *key, const char *const *names, const uint64_t *v,
	   size_t n)
{
	mo_family(o, fam);
	for (size_t i = 0; i < n; i++) {
		mo_sample(o, fam);
		mo_label(o, key, names[i]);
		mo_value(o, v[i]);
	}
}

static void
mr_counts(struct metrics_out *o, const struct metrics_snap *s)
{
	static const char *const kinds[] = { "load", "store", "other" };
	static const char *const results[] = {
		[METRICS_MIG_MOVED] = "moved", [METRICS_MIG_BUSY] = "busy",
		[METRICS_MIG_DENIED] = "denied",
		[METRICS_MIG_FAILED] = "failed",
		[METRICS_MIG_SKIPPED] = "skipped",
	};
	const uint64_t by_kind[] = {
		s->tot.loads, s->tot.stores, s->tot.other,
	};

	mo_single(o, &mf_frames, s->frames);
	mr_by_name(o, &mf_samples, "kind", kinds, by_kind, 3);
	mo_single(o, &mf_lost, s->tot.lost);
	mo_single(o, &mf_throttled, s->tot.throttled);
	mo_single(o, &mf_unattributed, s->tot.unattributed);
	mo_single(o, &mf_untracked, s->tot.untracked);
	mr_by_name(o, &mf_est, "kind", kinds, s->est, 3);
	mr_by_name(o, &mf_mig, "result", results, s->mig, METRICS_MIG__COUNT);
}

static void
mr_node_side(struct metrics_out *o, int64_t node, const char *side,
	     uint64_t v)
{
	mo_sample(o, &mf_node);
	mo_label_id(o, "node", node);
	mo_label(o, "side", side);
	mo_value(o, v);
}

static void
mr_nodes(struct metrics_out *o, const struct metrics_snap *s)
{
	if (!s->have_frame)
		return;
	mo_family(o, &mf_node);
	for (size_t i = 0; i < s->n_nodes; i++) {
		mr_node_side(o, s->nodes[i].node, "cpu", s->nodes[i].cpu);
		mr_node_side(o, s->nodes[i].node, "memory", s->nodes[i].mem);
	}
	mr_node_side(o, -1, "cpu", s->cpu_unknown);
	mr_node_side(o, -1, "memory", s->mem_unknown);
	for (int remote = 0; remote < 2 && s->n_nodes; remote++) {
		const struct metrics_family *fam = remote ? &mf_remote :
						   &mf_local;

		mo_family(o, fam);
		for (size_t i = 0; i < s->n_nodes; i++) {
			mo_sample(o, fam);
			mo_label_id(o, "node", s->nodes[i].node);
			mo_value(o, remote ? s->nodes[i].remote :
				 s->nodes[i].local);
		}
	}
}

static void
mr_matrix(struct metrics_out *o, const struct metrics_snap *s)
{
	size_t n = s->n_nodes;

	if (!s->have_frame)
		return;
	mo_family(o, &mf_matrix);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j <= n; j++) {
			mo_sample(o, &mf_matrix);
			mo_label_id(o, "cpu_node", s->nodes[i].node);
			mo_label_id(o, "mem_node", j < n ? s->nodes[j].node :
				    -1);
			mo_value(o, s->matrix[i * (n + 1) + j]);
		}
	}
	mo_sample(o, &mf_matrix);
	mo_label_id(o, "cpu_node", -1);
	mo_label_id(o, "mem_node", -1);
	mo_value(o, s->cpu_unknown);
}

static void
mr_cpus(struct metrics_out *o, const struct metrics_snap *s)
{
	if (!s->have_frame)
		return;
	mo_family(o, &mf_cpu);
	for (size_t i = 0; i < s->n_cpus; i++) {
		mo_sample(o, &mf_cpu);
		mo_label_id(o, "cpu", s->cpus[i].cpu);
		mo_label_id(o, "node", s->cpus[i].node);
		mo_value(o, s->cpus[i].samples);
	}
	mo_sample(o, &mf_cpu);
	mo_label_id(o, "cpu", -1);
	mo_label_id(o, "node", -1);
	mo_value(o, s->cpu_series_unknown);
}

static void
mr_procs(struct metrics_out *o, const struct metrics_snap *s)
{
	if (!s->have_frame)
		return;
	mo_family(o, &mf_proc);
	for (size_t i = 0; i < s->n_procs; i++) {
		mo_sample(o, &mf_proc);
		mo_label_id(o, "pid", s->procs[i].pid);
		mo_label(o, "comm", s->procs[i].comm);
		mo_value(o, s->procs[i].samples);
	}
	mo_sample(o, &mf_proc);
	mo_label(o, "pid", "other");
	mo_value(o, s->procs_other);
}

/* The collector's CPU time and the latest frame's gauges. */
static void
mr_gauges(struct metrics_out *o, const struct metrics_snap *s)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%llu.%09llu",
		 (unsigned long long)(s->collector_ns / 1000000000u),
		 (unsigned long long)(s->collector_ns % 1000000000u));
	mo_family(o, &mf_cpusec);
	mo_sample(o, &mf_cpusec);
	mo_value_text(o, buf);
	if (!s->have_frame)
		return;
	mo_single(o, &mf_period, s->period);
	if (s->imbalance >= 0) {
		snprintf(buf, sizeof(buf), "%.17g", s->imbalance);
		mo_family(o, &mf_imbalance);
		mo_sample(o, &mf_imbalance);
		mo_value_text(o, buf);
	}
	mo_single(o, &mf_tracked, s->tracked);
}

char *
metrics_render(const struct metrics_snap *s, enum metrics_format fmt,
	       size_t *len)
{
	struct metrics_out o = { .om = fmt == METRICS_OPENMETRICS };

	/* Room for the common case at once: about 60 bytes a series. */
	mo_room(&o, 8192 + 64 * (s->n_cpus + s->n_procs +
				 s->n_nodes * (s->n_nodes + 6)));
	mr_build(&o, s);
	mr_counts(&o, s);
	mr_nodes(&o, s);
	mr_matrix(&o, s);
	mr_cpus(&o, s);
	mr_procs(&o, s);
	mr_gauges(&o, s);
	if (o.om)
		mo_str(&o, "# EOF\n");
	if (o.oom) {
		free(o.p);
		return NULL;
	}
	*len = o.len;
	return o.p;
}

const char *
metrics_content_type(enum metrics_format fmt)
{
	return fmt == METRICS_OPENMETRICS ?
	       "application/openmetrics-text; version=1.0.0; charset=utf-8" :
	       "text/plain; version=0.0.4; charset=utf-8";
}
