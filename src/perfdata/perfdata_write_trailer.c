/*
 * What the perf.data writer puts after the data when it closes (see the
 * layout in perfdata_write.c): the feature index and bodies, the attrs
 * with their ids, and the header that points at them.  The thread that
 * owns the writer.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base.h"
#include "perfdata_featw.h"
#include "perfdata_format.h"
#include "perfdata_swap.h"
#include "perfdata_write.h"
#include "perfdata_write_int.h"
#include "record.h"

/* EVENT_DESC: u32 nr; u32 attr_size; { attr; u32 nr_ids; name; ids }. */
static void
perfdata_w_event_desc(struct perfdata_writer *w, struct perfdata_bytes *b)
{
	perfdata_put_u32(b, (uint32_t)w->n_events);
	perfdata_put_u32(b, PERFDATA_ATTR_SIZE_MAX_WRITE);
	for (size_t i = 0; i < w->n_events; i++) {
		const struct perfdata_wevent *ev = &w->events[i];
		unsigned char attr[PERFDATA_ATTR_SIZE_MAX_WRITE];

		memcpy(attr, ev->attr, sizeof(attr));
		if (b->swap)
			perfdata_swap_attr(attr, sizeof(attr));
		perfdata_put_bytes(b, attr, sizeof(attr));
		perfdata_put_u32(b, (uint32_t)ev->n_ids);
		perfdata_put_string(b, ev->name);
		for (size_t k = 0; k < ev->n_ids; k++)
			perfdata_put_u64(b, ev->ids[k]);
	}
}

static bool
perfdata_w_dynamic_types(const struct perfdata_writer *w)
{
	for (size_t i = 0; i < w->n_events; i++) {
		const struct perf_event_attr *a = (const void *)w->events[i].attr;

		if (a->type >= PERF_TYPE_MAX)
			return true;
	}
	return false;
}

/* TRACING_DATA when an event is a tracepoint: perf cannot read its
 * samples without the format.  Left out when tracefs is not readable. */
static bool
perfdata_w_tracing(struct perfdata_writer *w, struct perfdata_bytes *body)
{
	const char *names[PERFDATA_MAX_WEVENTS];
	size_t n = 0;

	for (size_t i = 0; i < w->n_events; i++) {
		const struct perf_event_attr *a = (const void *)w->events[i].attr;

		if (a->type == PERF_TYPE_TRACEPOINT)
			names[n++] = w->events[i].name;
	}
	return n && perfdata_featw_tracing(body, names, n) == 0;
}

/* CMDLINE: u32 count, then each argument as a perf string. */
static bool
perfdata_w_cmdline(struct perfdata_bytes *body)
{
	char buf[4096];
	uint32_t n = 0;
	ssize_t len;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';	/* a cut last argument ends here */
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1)
		n++;
	perfdata_put_u32(body, n);
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1)
		perfdata_put_string(body, buf + i);
	return true;
}

/*
 * One feature body into `body` (file order); false when the feature has
 * nothing to say and is left out.
 */
static bool
perfdata_w_feature(struct perfdata_writer *w, unsigned bit,
		   struct perfdata_bytes *body)
{
	struct perfdata_pmu_map *pmus = NULL;
	struct utsname un;
	char version[64];
	int n;

	switch (bit) {
	case PERFDATA_FEAT_TRACING_DATA:
		return perfdata_w_tracing(w, body);
	case PERFDATA_FEAT_BUILD_ID:
		perfdata_featw_build_ids(body, w->build_ids, w->n_build_ids);
		return body->len > 0;
	case PERFDATA_FEAT_HOSTNAME:
	case PERFDATA_FEAT_OSRELEASE:
	case PERFDATA_FEAT_ARCH:
		if (uname(&un) < 0)
			memset(&un, 0, sizeof(un));
		perfdata_put_string(body, bit == PERFDATA_FEAT_HOSTNAME ?
				    un.nodename : bit == PERFDATA_FEAT_ARCH ?
				    un.machine : un.release);
		return true;
	case PERFDATA_FEAT_VERSION:
		snprintf(version, sizeof(version), "memtop %s",
			 MEMTOP_VERSION);
		perfdata_put_string(body, version);
		return true;
	case PERFDATA_FEAT_NRCPUS:
		if (!w->opts.topo)
			return false;
		perfdata_featw_nrcpus(body, w->opts.topo);
		return true;
	case PERFDATA_FEAT_CMDLINE:
		return w->opts.cmdline && perfdata_w_cmdline(body);
	case PERFDATA_FEAT_EVENT_DESC:
		perfdata_w_event_desc(w, body);
		return true;
	case PERFDATA_FEAT_NUMA_TOPOLOGY:
		if (!w->opts.topo)
			return false;
		perfdata_featw_numa(body, w->opts.topo);
		return true;
	case PERFDATA_FEAT_PMU_MAPPINGS:
		if (w->n_pmus) {
			perfdata_featw_pmus(body, w->pmus, w->n_pmus);
			return true;
		}
		if (!w->opts.sysfs_features || !perfdata_w_dynamic_types(w))
			return false;
		n = perfdata_featw_pmus_sysfs(&pmus);
		if (n > 0)
			perfdata_featw_pmus(body, pmus, (size_t)n);
		free(pmus);
		return n > 0;
	case PERFDATA_FEAT_MEM_TOPOLOGY:
		if (!w->n_blocks && w->opts.sysfs_features)
			perfdata_featw_mem_sysfs(&w->block_size,
						 &w->block_node, &w->n_blocks);
		return perfdata_featw_mem(body, w->block_size, w->block_node,
					  w->n_blocks);
	default:
		return false;
	}
}

static const unsigned perfdata_w_features[] = {
	PERFDATA_FEAT_TRACING_DATA, PERFDATA_FEAT_BUILD_ID,
	PERFDATA_FEAT_HOSTNAME, PERFDATA_FEAT_OSRELEASE,
	PERFDATA_FEAT_VERSION, PERFDATA_FEAT_ARCH, PERFDATA_FEAT_NRCPUS,
	PERFDATA_FEAT_CMDLINE, PERFDATA_FEAT_EVENT_DESC, PERFDATA_FEAT_NUMA_TOPOLOGY,
	PERFDATA_FEAT_PMU_MAPPINGS, PERFDATA_FEAT_MEM_TOPOLOGY,
};

#define PERFDATA_W_N_FEATURES \
	ARRAY_SIZE(perfdata_w_features)

/*
 * Everything after the data section, as one buffer: feature index and
 * bodies, attrs, ids.  Fills the header's sections and feature bits.
 */
int
perfdata_w_trailer(struct perfdata_writer *w, struct perfdata_bytes *out,
		   struct perfdata_file_header *h)
{
	struct perfdata_bytes bodies[PERFDATA_W_N_FEATURES];
	bool have[PERFDATA_W_N_FEATURES];
	uint64_t base = h->data.offset + h->data.size, off;
	size_t n_feat = 0;
	int ret = 0;

	memset(bodies, 0, sizeof(bodies));
	for (size_t i = 0; i < PERFDATA_W_N_FEATURES; i++) {
		bodies[i].swap = w->opts.swap;
		have[i] = perfdata_w_feature(w, perfdata_w_features[i],
					     &bodies[i]);
		n_feat += have[i];
		if (have[i])
			h->features[perfdata_w_features[i] / 64] |=
				UINT64_C(1) << (perfdata_w_features[i] % 64);
	}
	/* Index (ascending bits: the table is in bit order), bodies. */
	off = base + 16 * n_feat;
	for (size_t i = 0; i < PERFDATA_W_N_FEATURES; i++) {
		if (!have[i])
			continue;
		perfdata_put_u64(out, off);
		perfdata_put_u64(out, bodies[i].len);
		off += bodies[i].len;
	}
	for (size_t i = 0; i < PERFDATA_W_N_FEATURES; i++) {
		if (have[i])
			perfdata_put_bytes(out, bodies[i].p, bodies[i].len);
		ret |= bodies[i].oom;
		perfdata_bytes_fini(&bodies[i]);
	}

	/* attrs, then each event's ids after all of them. */
	h->attr_size = PERFDATA_ATTR_SIZE_MAX_WRITE + 16;
	h->attrs.offset = base + out->len;
	h->attrs.size = h->attr_size * w->n_events;
	off = h->attrs.offset + h->attrs.size;
	for (size_t i = 0; i < w->n_events; i++) {
		unsigned char attr[PERFDATA_ATTR_SIZE_MAX_WRITE];

		memcpy(attr, w->events[i].attr, sizeof(attr));
		if (w->opts.swap)
			perfdata_swap_attr(attr, sizeof(attr));
		perfdata_put_bytes(out, attr, sizeof(attr));
		perfdata_put_u64(out, off);
		perfdata_put_u64(out, 8 * (uint64_t)w->events[i].n_ids);
		off += 8 * (uint64_t)w->events[i].n_ids;
	}
	for (size_t i = 0; i < w->n_events; i++)
		for (size_t k = 0; k < w->events[i].n_ids; k++)
			perfdata_put_u64(out, w->events[i].ids[k]);
	return ret || out->oom ? -ENOMEM : 0;
}

void
perfdata_w_header_bytes(const struct perfdata_file_header *h, bool swap,
			unsigned char out[PERFDATA_HEADER_SIZE])
{
	struct perfdata_bytes b = { .swap = swap };

	perfdata_put_bytes(&b, "PERFILE2", 8);
	perfdata_put_u64(&b, PERFDATA_HEADER_SIZE);
	perfdata_put_u64(&b, h->attr_size);
	perfdata_put_u64(&b, h->attrs.offset);
	perfdata_put_u64(&b, h->attrs.size);
	perfdata_put_u64(&b, h->data.offset);
	perfdata_put_u64(&b, h->data.size);
	perfdata_put_u64(&b, 0);
	perfdata_put_u64(&b, 0);
	for (int i = 0; i < 4; i++)
		perfdata_put_u64(&b, h->features[i]);
	if (b.oom || b.len != PERFDATA_HEADER_SIZE) {
		memset(out, 0, PERFDATA_HEADER_SIZE);
	} else {
		memcpy(out, b.p, PERFDATA_HEADER_SIZE);
		/* The magic is bytes, and its swapped form is the signal. */
		if (swap)
			for (int i = 0; i < 8; i++)
				out[i] = (unsigned char)"2ELIFREP"[i];
	}
	perfdata_bytes_fini(&b);
}
