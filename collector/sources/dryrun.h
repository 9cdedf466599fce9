/* --list-events and --dry-run: what memtop would open, without sampling.
 * Main thread. */
#ifndef MEMTOP_DRYRUN_H
#define MEMTOP_DRYRUN_H

#include <stdbool.h>
#include <stdio.h>

struct cpulist;
struct source_opts;

/* Each source with a status found by really opening it.  Exit status. */
int dryrun_list_events(FILE *out);
/* The events and perf_event_attr fields of the chosen source (text, or
 * JSON with --json).  With system (-a, -G), the CPUs each event would be
 * opened on: cpus (-C; NULL: the online CPUs) that its PMU covers, an
 * event covering none of them left out.  Exit status: 0, or 1 when no
 * source opens or no event counts on those CPUs. */
int dryrun_print(const struct source_opts *so, bool json, bool system,
		 const struct cpulist *cpus, FILE *out);

#endif
