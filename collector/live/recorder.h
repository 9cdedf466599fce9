/*
 * --record FILE: the collector's side of the perf.data writer.  The main
 * thread declares the source's events before the collector starts; the
 * collector thread then hands over every drained record with the channel
 * it came from.
 */
#ifndef MEMTOP_RECORDER_H
#define MEMTOP_RECORDER_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/types.h>

struct channel;
struct perfdata_writer;
struct source;

/*
 * Declares src's events, in src order (a channel's fds[i] is events[i]),
 * with the attr fields source_open_event() sets that a reader needs:
 * sample_id_all, the clock, the period; and ADDR for the faults
 * tracepoint (see recorder_record()).  Then the allocation events
 * (src->alloc, issue 18) as they were opened, the heap probes of
 * --heap-objects named by heapobjs_event_name(), so that replay names
 * objects from their records.  0 or -errno.
 */
int recorder_add_source(struct perfdata_writer *w, const struct source *src,
			uint64_t period);

/*
 * Lists ch's event ids with the writer (repeats are free), then writes
 * the record.  A sample of src's faults tracepoint, whose data address
 * the kernel gives in the RAW payload only, is written with that address
 * in ADDR too (recorder_add_source() declared it).  Write errors stay in
 * the writer and come back at close.  Collector thread.
 */
void recorder_record(struct perfdata_writer *w, const struct source *src,
		     const struct channel *ch,
		     const struct perf_event_header *hdr);

/* Every ring was read to its end: a FINISHED_ROUND, as perf record
 * writes after each pass over its rings.  Collector thread. */
void recorder_round(struct perfdata_writer *w);

/*
 * A record of ch's allocation ring (SAMPLE or LOST), written as the
 * kernel wrote it, its id listed under the allocation event that
 * recorder_add_source() declared after the source's.  Collector thread.
 */
void recorder_record_alloc(struct perfdata_writer *w,
			   const struct source *src, const struct channel *ch,
			   const struct perf_event_header *hdr);

/*
 * What process pid had before the attach, as perf synthesizes it: a
 * COMM per thread and an MMAP2 (with the file's build id) per region of
 * /proc/PID/maps, with ch's ids (recorder_synth.c).  Main thread, at
 * attach.
 */
void recorder_synthesize(struct perfdata_writer *w, const struct source *src,
			 const struct channel *ch, pid_t pid);
/* The same for every process of /proc (-a and -G, as perf record -a
 * does), kernel threads getting their COMM only.  Processes counted. */
int recorder_synthesize_all(struct perfdata_writer *w,
			    const struct source *src,
			    const struct channel *ch);

#endif
