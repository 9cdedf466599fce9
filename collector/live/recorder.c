/* Collector thread (setup: main thread).  See recorder.h. */
#include "config.h"

#include <time.h>

#include "channel.h"
#include "perfdata_write.h"
#include "recorder.h"
#include "source.h"

int
recorder_add_source(struct perfdata_writer *w, const struct source *src,
		    uint64_t period)
{
	for (size_t i = 0; i < src->n_events; i++) {
		struct perf_event_attr attr = src->events[i].attr;
		int ret;

		/* As source_open_event() opens it; perf reads sample_id_all
		 * to find the trailer of every non-sample record. */
		attr.size = sizeof(attr);
		attr.sample_period = period;
		attr.freq = 0;
		attr.sample_id_all = 1;
		attr.task = i == 0;
		attr.comm = i == 0;
		attr.use_clockid = 1;
		attr.clockid = CLOCK_MONOTONIC;
		ret = perfdata_writer_add_event(w, &attr,
						src->events[i].name);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void
recorder_record(struct perfdata_writer *w, const struct channel *ch,
		const struct perf_event_header *hdr)
{
	const struct channel_events *ev = channel_events(ch);
	uint64_t task_id;

	for (size_t i = 0; i < ev->n; i++)
		perfdata_writer_add_id(w, i, ev->ids[i]);
	/* The task ring's dummy event shares the first event's sample_type,
	 * so its records read as that event's. */
	if (channel_task_id(ch, &task_id))
		perfdata_writer_add_id(w, 0, task_id);
	perfdata_writer_write(w, hdr);
}
