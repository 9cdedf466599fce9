/* Collector thread only.  See ingest.h. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "aggr.h"
#include "channel.h"
#include "ingest.h"
#include "lathist.h"
#include "record.h"
#include "source.h"

void
ingest_init(struct ingest *in, struct aggr *a)
{
	memset(in, 0, sizeof(*in));
	in->aggr = a;
}

int
ingest_sample(struct ingest *in, const struct channel *ch,
	      const struct perf_event_header *hdr, uint64_t period)
{
	struct aggr *a = in->aggr;
	const struct event_spec *ev;
	struct record_layout layout;
	struct record_sample rs;
	struct sample s;
	uint64_t id;
	int ret;

	ev = ch->src->n_events == 1 ? &ch->src->events[0] : NULL;
	if (!ev && record_identifier(hdr, &id) == 0)
		ev = channel_event_by_id(ch, id);
	if (!ev)
		goto out_bad;
	source_layout(ev, &layout);
	if (record_parse_sample(&layout, hdr, &rs) < 0)
		goto out_bad;
	ret = source_decode(ch->src, ev, &rs, period, &s);
	if (ret > 0) {
		if (in->lat)
			lathist_add(in->lat, s.time);
		aggr_add(a, &s);
		in->stats.samples++;
		return 1;
	}
	if (ret == 0) {
		aggr_count_unattributed(a, 1);
		in->stats.unattributed++;
		return 0;
	}
	in->stats.ignored++;
	return -1;

out_bad:
	aggr_count_lost(a, 1);
	in->stats.bad++;
	return -EINVAL;
}
