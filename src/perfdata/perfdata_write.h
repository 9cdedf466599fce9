/*
 * perf.data writer (file mode, version 2) for `memtop --record FILE`:
 * kernel records are appended as they are drained; attrs, ids and the
 * features (NUMA_TOPOLOGY, MEM_TOPOLOGY, NRCPUS, EVENT_DESC, host strings,
 * PMU_MAPPINGS when an event has a dynamic type) are written at close,
 * and the header is rewritten then with the final sizes.
 *
 * Set up on the main thread, fed by the collector thread, closed on the
 * main thread after the collector is joined: one thread at a time.
 *
 * `perf script` and `perf report` (6.1) read the result: attrs are at
 * most 128 bytes, IDENTIFIER is in every sample_type so several events
 * can be told apart, and every id a record carries is listed.
 */
#ifndef MEMTOP_PERFDATA_WRITE_H
#define MEMTOP_PERFDATA_WRITE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perfdata_writer;
struct topo;

struct perfdata_writer_opts {
	bool force;		/* replace an existing file */
	bool swap;		/* write the other byte order (tests) */
	/* NUMA_TOPOLOGY and NRCPUS from this; NULL = neither.  Must
	 * outlive perfdata_writer_close(). */
	const struct topo *topo;
	/* MEM_TOPOLOGY (and PMU_MAPPINGS for dynamic types) from sysfs
	 * unless set explicitly below. */
	bool sysfs_features;
	/* CMDLINE: this process's command line (/proc/self/cmdline), as
	 * perf record writes its own; a replay reads memtop's options
	 * back from it (--heap-objects=SIZE). */
	bool cmdline;
};

struct perfdata_writer_stats {
	uint64_t records;	/* written */
	uint64_t samples;	/* SAMPLE records written */
	uint64_t skipped;	/* record types not written */
	uint64_t bytes;		/* data section so far */
};

/*
 * Creates path: -EEXIST when it exists and !force.  0 or -errno with a
 * one-line reason.
 */
int perfdata_writer_open(struct perfdata_writer **out, const char *path,
			 const struct perfdata_writer_opts *o, char *err,
			 size_t errlen);

/*
 * Declares an event, in the order records will name them: attr as it was
 * opened (only the first 128 bytes are written) and its perf name.  Its
 * index, or -errno.
 */
int perfdata_writer_add_event(struct perfdata_writer *w,
			      const struct perf_event_attr *attr,
			      const char *name);
/* Lists an id (PERF_EVENT_IOC_ID) under event idx; repeats are ignored.
 * 0, -EINVAL (no such event) or -ENOMEM. */
int perfdata_writer_add_id(struct perfdata_writer *w, size_t idx,
			   uint64_t id);

/* Explicit features (tests, synthetic files): block -> node map of
 * memory blocks, and PMU type names.  Copied. */
int perfdata_writer_set_mem_topology(struct perfdata_writer *w,
				     uint64_t block_size,
				     const int16_t *block_node,
				     size_t n_blocks);
int perfdata_writer_add_pmu(struct perfdata_writer *w, uint32_t type,
			    const char *name);

/*
 * Lists path's build id in the BUILD_ID feature (once per path; MMAP2
 * records that carry one are listed by perfdata_writer_write itself);
 * size 0 notes a file that has none, so it is not asked again.
 * perfdata_writer_has_build_id: whether path is listed.
 */
void perfdata_writer_add_build_id(struct perfdata_writer *w, int32_t pid,
				  const char *path, const uint8_t *id,
				  size_t size);
bool perfdata_writer_has_build_id(const struct perfdata_writer *w,
				  const char *path);

/*
 * Appends one kernel record (host order, as the ring gave it).  SAMPLE,
 * COMM, FORK, EXIT, LOST, LOST_SAMPLES, THROTTLE, UNTHROTTLE, MMAP and
 * MMAP2 are written, other types are counted in `skipped`.  0, or the
 * first write error (-errno), after which nothing more is written.
 */
int perfdata_writer_write(struct perfdata_writer *w,
			  const struct perf_event_header *hdr);

/*
 * Ends a round (PERF_RECORD_FINISHED_ROUND, as perf record writes after
 * each pass over all its rings): every ring was read to its end since
 * the last round.  Nothing when no record came since.  0 or the write
 * error.
 */
int perfdata_writer_round(struct perfdata_writer *w);

/*
 * Flushes the data, writes features, attrs and ids, rewrites the header
 * and closes the file.  0 or -errno with a one-line reason.  The writer
 * must still be freed.
 */
int perfdata_writer_close(struct perfdata_writer *w, char *err,
			  size_t errlen);
/* NULL-safe.  A writer that was never closed removes its file: without
 * the header written at close no reader would accept it. */
void perfdata_writer_free(struct perfdata_writer *w);

const struct perfdata_writer_stats *perfdata_writer_stats(
	const struct perfdata_writer *w);

#endif
