#include "config.h"

/*
 * Time order for perf.data records: where held records wait, the binary
 * min-heap and the FIFO's growth and byte ring (perfdata_order_int.h).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata_order_int.h"

static void
order_swap(struct order_ent *a, struct order_ent *b)
{
	struct order_ent t = *a;

	*a = *b;
	*b = t;
}

/* rec into the heap: its pointer when it is stable (in the file image,
 * which outlives the order), else a copy. */
int
order_heap_push(struct perfdata_order *o, const struct order_ent *in,
	  const struct perfdata_record *rec)
{
	const struct perf_event_header *hdr = rec->hdr;
	struct order_ent *e;
	size_t i;

	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 1024;
		struct order_ent *h = realloc(o->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		o->heap = h;
		o->cap = cap;
	}
	e = &o->heap[o->n];
	*e = *in;
	if (rec->stable) {
		e->hdr = (struct perf_event_header *)(uintptr_t)hdr;
	} else {
		e->hdr = malloc(hdr->size);
		if (!e->hdr)
			return -ENOMEM;
		memcpy(e->hdr, hdr, hdr->size);
		e->owned = true;
	}
	for (i = o->n++; i > 0 && order_less(&o->heap[i],
					     &o->heap[(i - 1) / 2]);
	     i = (i - 1) / 2)
		order_swap(&o->heap[i], &o->heap[(i - 1) / 2]);
	return 0;
}

struct order_ent
order_heap_pop(struct perfdata_order *o)
{
	struct order_ent top = o->heap[0];
	size_t i = 0;

	o->heap[0] = o->heap[--o->n];
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < o->n && order_less(&o->heap[l], &o->heap[m]))
			m = l;
		if (l + 1 < o->n && order_less(&o->heap[l + 1], &o->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		order_swap(&o->heap[i], &o->heap[m]);
		i = m;
	}
	return top;
}

/* Where n bytes fit in the byte ring, SIZE_MAX when they do not.  The
 * bytes in use run from the first entry's to tail, maybe wrapping; tail
 * never reaches the first entry's bytes again (strictly below them). */
size_t
order_fifo_place(const struct order_fifo *f, size_t n)
{
	size_t head = f->byte_head;

	if (f->byte_n == 0)
		return n <= f->byte_cap ? 0 : SIZE_MAX;
	if (f->tail > head) {
		if (f->tail + n <= f->byte_cap)
			return f->tail;
		return n < head ? 0 : SIZE_MAX;
	}
	return f->tail + n < head ? f->tail : SIZE_MAX;
}

/* Twice the entries, copied in order to the start.  0 or -ENOMEM. */
int
order_fifo_grow_entries(struct order_fifo *f)
{
	size_t cap = f->ent_cap ? 2 * f->ent_cap : 1024;
	struct order_ent *ent = malloc(cap * sizeof(*ent));
	uint64_t *at = malloc(cap * sizeof(*at));
	struct order_run *run = malloc(cap * sizeof(*run));

	if (!ent || !at || !run) {
		free(ent);
		free(at);
		free(run);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->n; i++) {
		size_t k = (f->first + i) & (f->ent_cap - 1);

		ent[i] = f->ent[k];
		at[i] = f->at[k];
		run[i] = f->run[k];
	}
	free(f->ent);
	free(f->at);
	free(f->run);
	f->ent = ent;
	f->at = at;
	f->run = run;
	f->tail_run = f->n ? &run[f->n - 1] : NULL;
	f->ent_cap = cap;
	f->first = 0;
	return 0;
}

/* A byte ring with room for n more bytes, the records held copied in
 * order to its start.  0 or -ENOMEM. */
int
order_fifo_grow_bytes(struct order_fifo *f, size_t n)
{
	size_t cap = 2 * f->byte_cap + 2 * n + ((size_t)1 << 20), pos = 0;
	unsigned char *bytes = malloc(cap);

	if (!bytes)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++) {
		size_t k = (f->first + i) & (f->ent_cap - 1), len;

		if (f->at[k] == ORDER_STABLE)
			continue;
		len = ORDER_ALIGN(((const struct perf_event_header *)(void *)
				   (f->bytes + f->at[k]))->size);
		memcpy(bytes + pos, f->bytes + f->at[k], len);
		f->at[k] = pos;
		pos += len;
	}
	free(f->bytes);
	f->bytes = bytes;
	f->byte_cap = cap;
	f->byte_head = 0;
	f->tail = pos;
	return 0;
}
