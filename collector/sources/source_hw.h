/*
 * Helpers shared by the hardware sources (source_pebs.c, source_ibs.c):
 * building an event_spec from a sysfs event, proving a source opens, and
 * turning a failure into a --list-events status.  Main thread, at start.
 */
#ifndef MEMTOP_SOURCE_HW_H
#define MEMTOP_SOURCE_HW_H

#include <stddef.h>

#include "pmu.h"
#include "source.h"

/*
 * Appends an event built from <pmu>/events/<event> (NULL: from overrides
 * alone) to src, named `name`.  Fills type and config words only; the
 * caller sets sample_type, precise_ip and excludes.  Returns its index, or
 * -errno with "not supported by this CPU/kernel (...)" in why.
 */
int source_hw_add(struct source *src, const char *name, const char *pmu,
		  const char *event, const struct pmu_terms *overrides,
		  enum event_role role, int leader, char *why, size_t whylen);

/*
 * Opens every event of src on the calling thread (pid 0, cpu -1), leaders
 * first and members in their groups, as a channel would, then closes them.
 * 0, or -errno with the failing event's name in *failed.
 */
int source_hw_probe(const struct source *src, const char **failed);

/*
 * why = a --list-events status for a failed probe: "permission denied
 * (... fix ...)", or "not supported by this CPU/kernel (...)".  hint, when
 * not NULL, is added to permission failures (IBS's privilege rule).
 */
void source_hw_explain(int err, const char *event, const char *hint,
		       char *why, size_t whylen);

/* Appends printf-style text to src->note, truncating. */
void source_hw_note(struct source *src, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
