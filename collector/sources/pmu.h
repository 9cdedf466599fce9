/*
 * PMUs as the kernel describes them in sysfs, below
 * $MEMTOP_SYSFS_ROOT/sys/bus/event_source/devices/<pmu>/:
 *
 *   type              decimal perf_event_attr.type (dynamic for most PMUs)
 *   format/<term>     where a term's bits go: "config:0-7,32-35"
 *   events/<name>     a named event as terms: "event=0xcd,umask=0x1,ldlat=3"
 *   caps/<cap>        max_precise, pmu_name, zen4_ibs_extensions ...
 *
 * memtop builds hardware events from these strings only (no CPU-model
 * tables), the way perf does (docs/kernel.md, "PMUs in sysfs").  The
 * parsing and packing functions are pure; the pmu_read_* / pmu_encode
 * ones read sysfs.
 * Any thread; no state.
 */
#ifndef MEMTOP_PMU_H
#define MEMTOP_PMU_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The attr words a format can name: config, config1, config2, config3. */
#define PMU_N_WORDS 4

struct pmu_format {
	unsigned word;		/* 0 = config, 1 = config1 ... */
	uint64_t mask;		/* the word's bits the term occupies */
	unsigned width;		/* bits in mask */
};

/*
 * Parses a format file: "<word>:<bits>[,<bits>]..." with bits "N" or
 * "N-M" (inclusive).  0, or -EINVAL on anything else (unknown word, bit
 * above 63, reversed or overlapping ranges, junk).
 */
int pmu_format_parse(const char *text, struct pmu_format *out);

/*
 * ORs value into words[f->word]: the target bits are visited from lowest to
 * highest and the k-th gets bit k of value (perf's pmu_format_value).
 * -ERANGE, words untouched, when value has bits beyond f->width.
 */
int pmu_format_pack(const struct pmu_format *f, uint64_t value,
		    uint64_t words[PMU_N_WORDS]);

#define PMU_TERM_NAME_MAX 32
#define PMU_MAX_TERMS 16

struct pmu_term {
	char name[PMU_TERM_NAME_MAX];
	uint64_t value;
	bool required;		/* "term=?": the user must supply it */
};

struct pmu_terms {
	struct pmu_term t[PMU_MAX_TERMS];
	size_t n;
};

/*
 * Parses an event string "term[=value][,term[=value]]...": a bare term is
 * 1, "term=?" is required, values are decimal or 0x hex (base-auto; kernel
 * strings mix both, e.g. "ldlat=3").  0 or -EINVAL.
 */
int pmu_terms_parse(const char *text, struct pmu_terms *out);
/* Sets name=value, replacing the term or appending it (user overrides go
 * after the event string, like perf's mem-loads,ldlat=30).  0, -EINVAL
 * for a bad name, -E2BIG when full. */
int pmu_terms_set(struct pmu_terms *t, const char *name, uint64_t value);

/* Looks up a term's format; 0, or -errno (-ENOENT: no such term). */
typedef int (*pmu_format_lookup_fn)(const char *term, struct pmu_format *f,
				    void *ctx);

/*
 * Packs every term into words (zeroed first).  The built-in terms config,
 * config1, config2 and config3 set a whole word when the PMU has no format
 * file of that name.  0, or -errno with a one-line reason in err.
 */
int pmu_terms_encode(const struct pmu_terms *t, pmu_format_lookup_fn lookup,
		     void *ctx, uint64_t words[PMU_N_WORDS], char *err,
		     size_t errlen);

/* Copies the words into attr's config..config2 (config3 needs a newer
 * attr; a non-zero config3 is -EOVERFLOW). */
int pmu_words_to_attr(const uint64_t words[PMU_N_WORDS],
		      struct perf_event_attr *attr);

/* ---- sysfs ---- */

#define PMU_NAME_MAX 64

/* True unless MEMTOP_SYSFS_ROOT points sysfs reads at a recorded tree, so
 * that the PMUs read are really this machine's and may be opened. */
bool pmu_sysfs_is_real(void);

bool pmu_exists(const char *pmu);
bool pmu_has_event(const char *pmu, const char *event);
bool pmu_has_format(const char *pmu, const char *term);
/* Reads caps/<cap> (or any relative path) of pmu; bytes or -errno. */
int pmu_read_file(const char *pmu, const char *rel, char *buf, size_t len);
/* attr.type from <pmu>/type.  0 or -errno. */
int pmu_read_type(const char *pmu, uint32_t *type);
/* caps/max_precise, or -1 when the PMU does not publish it. */
int pmu_max_precise(const char *pmu);

/*
 * Names of every PMU whose name equals `name` or starts with `prefix`
 * (either may be NULL), sorted by name; at most max.  Count or -errno.
 */
int pmu_list(const char *name, const char *prefix,
	     char (*names)[PMU_NAME_MAX], size_t max);

/*
 * Builds attr->type and config words from <pmu>/events/<event> (or, when
 * event is NULL, from `terms` alone), applying `overrides` after the event
 * string.  0, or -errno with a one-line reason in err.
 */
int pmu_encode(const char *pmu, const char *event,
	       const struct pmu_terms *overrides, struct perf_event_attr *attr,
	       char *err, size_t errlen);

#endif
