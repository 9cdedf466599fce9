/* Main thread, at start.  See source_hw.h. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "source_hw.h"
#include "textbuf.h"

int
source_hw_add(struct source *src, const char *name, const char *pmu,
	      const char *event, const struct pmu_terms *overrides,
	      enum event_role role, int leader, char *why, size_t whylen)
{
	struct event_spec *ev;
	char err[256];
	int ret;

	if (src->n_events == SOURCE_MAX_EVENTS) {
		snprintf(why, whylen, "not supported by this build (more "
			 "than %d events)", SOURCE_MAX_EVENTS);
		return -E2BIG;
	}
	ev = &src->events[src->n_events];
	memset(ev, 0, sizeof(*ev));
	ret = pmu_encode(pmu, event, overrides, &ev->attr, err, sizeof(err));
	if (ret < 0) {
		snprintf(why, whylen, "not supported by this CPU/kernel (%s)",
			 err);
		return ret;
	}
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	snprintf(ev->pmu, sizeof(ev->pmu), "%s", pmu);
	ev->role = role;
	ev->leader = leader;
	ev->tp_addr_off = ev->tp_ip_off = ev->tp_error_off = -1;
	/* Hybrid core PMUs say which CPUs they cover; others have none. */
	if (pmu_read_file(pmu, "cpus", ev->cpus, sizeof(ev->cpus)) < 0)
		ev->cpus[0] = '\0';
	ev->cpus[strcspn(ev->cpus, "\n")] = '\0';
	return (int)src->n_events++;
}

int
source_hw_probe(const struct source *src, const char **failed)
{
	int fds[SOURCE_MAX_EVENTS];
	size_t n = 0;
	int ret = 0;

	*failed = NULL;
	for (; n < src->n_events; n++) {
		const struct event_spec *ev = &src->events[n];
		struct open_params p = {
			.pid = 0, .cpu = -1, .group_fd = -1,
			.period = src->default_period,
		};

		/* A leader always comes before its members (index order). */
		if (ev->leader >= 0 && (size_t)ev->leader < n)
			p.group_fd = fds[ev->leader];
		fds[n] = source_open_event(ev, &p);
		if (fds[n] < 0) {
			ret = fds[n];
			*failed = ev->name;
			break;
		}
	}
	while (n-- > 0)
		close(fds[n]);
	return ret;
}

void
source_hw_explain(int err, const char *event, const char *hint, char *why,
		  size_t whylen)
{
	char what[96], text[400];

	snprintf(what, sizeof(what), "perf_event_open(%s)", event);
	switch (err) {
	case EACCES:
	case EPERM:
		source_explain_error(err, what, (int)getpid(), text,
				     sizeof(text));
		snprintf(why, whylen, "permission denied (%s%s%s)", text,
			 hint ? "; " : "", hint ? hint : "");
		return;
	case ENODATA:
		snprintf(text, sizeof(text), "%s: %s: the kernel wants "
			 "mem-loads-aux as the group leader but this PMU "
			 "does not publish it", what, strerror(err));
		break;
	case EINVAL:
		snprintf(text, sizeof(text), "%s: %s: the kernel refused "
			 "these attributes (a period below the PMU's "
			 "minimum is rejected, not rounded: try a larger -c)",
			 what, strerror(err));
		break;
	case EOPNOTSUPP:
		snprintf(text, sizeof(text), "%s: %s (precise_ip above "
			 "caps/max_precise, or no PEBS/IBS here)", what,
			 strerror(err));
		break;
	default:
		snprintf(text, sizeof(text), "%s: %s", what, strerror(err));
		break;
	}
	snprintf(why, whylen, "not supported by this CPU/kernel (%s)", text);
}

void
source_hw_note(struct source *src, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	textbuf_vappendf(src->note, sizeof(src->note), fmt, ap);
	va_end(ap);
}

int
source_spe_status(char *why, size_t whylen)
{
	char names[1][PMU_NAME_MAX];
	int n = pmu_list(NULL, "arm_spe_", names, 1);

	if (n > 0) {
		snprintf(why, whylen, "not supported yet (%s is present, but "
			 "Arm SPE delivers samples as AUX-area packets that "
			 "need a decoder memtop does not have yet)", names[0]);
		return -EOPNOTSUPP;
	}
	snprintf(why, whylen, "not supported by this CPU/kernel (no "
		 "arm_spe_* PMU)");
	return -ENODEV;
}
