/* Collector thread only.  See lathist.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base.h"
#include "lathist.h"

struct lathist {
	FILE *out;
	uint64_t base_ns;	/* bucket 0 starts here */
	uint64_t oldest_ns;	/* oldest sample before base_ns; 0 = none */
	uint64_t early;		/* samples before base_ns */
	uint64_t notime;
	uint64_t n;
	uint32_t bucket[LATHIST_BUCKETS];
};

struct lathist *
lathist_new(const char *path)
{
	struct lathist *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->out = fopen(path, "ae");
	if (!h->out) {
		int err = errno;

		free(h);
		errno = err;
		return NULL;
	}
	h->base_ns = base_now_ns();
	return h;
}

void
lathist_free(struct lathist *h)
{
	if (!h)
		return;
	fclose(h->out);
	free(h);
}

void
lathist_add(struct lathist *h, uint64_t time_ns)
{
	uint64_t k;

	if (time_ns == 0) {
		h->notime++;
		return;
	}
	h->n++;
	if (time_ns < h->base_ns) {
		if (h->early++ == 0 || time_ns < h->oldest_ns)
			h->oldest_ns = time_ns;
		return;
	}
	k = (time_ns - h->base_ns) >> LATHIST_SHIFT;
	h->bucket[k < LATHIST_BUCKETS ? k : LATHIST_BUCKETS - 1]++;
}

/* Whole milliseconds, rounded up, from `from` to publish_ns. */
static uint64_t
lathist_ms(uint64_t from, uint64_t publish_ns)
{
	return publish_ns > from ? (publish_ns - from + 999999) / 1000000 : 0;
}

void
lathist_publish(struct lathist *h, uint64_t seq, uint64_t publish_ns)
{
	fprintf(h->out, "seq %llu publish_ns %llu samples %llu notime %llu "
		"lat_ms", (unsigned long long)seq,
		(unsigned long long)publish_ns, (unsigned long long)h->n,
		(unsigned long long)h->notime);
	if (h->early)
		fprintf(h->out, " %llu:%llu",
			(unsigned long long)lathist_ms(h->oldest_ns,
						       publish_ns),
			(unsigned long long)h->early);
	for (size_t k = 0; k < LATHIST_BUCKETS; k++) {
		uint64_t start = h->base_ns + ((uint64_t)k << LATHIST_SHIFT);

		if (h->bucket[k])
			fprintf(h->out, " %llu:%u",
				(unsigned long long)lathist_ms(start,
							       publish_ns),
				h->bucket[k]);
	}
	fputc('\n', h->out);
	fflush(h->out);
	memset(h->bucket, 0, sizeof(h->bucket));
	h->base_ns = publish_ns;
	h->early = h->notime = h->n = 0;
	h->oldest_ns = 0;
}
