/*
 * The page table's counts: adding samples to an entry's fields and
 * reading them back, with the side map that carries a count past its
 * field's width (see pagetab_int.h for the entry's layout).  Collector
 * thread, like the rest of the table.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pagetab_int.h"

/* The side map of counts past their field. */
static struct pagetab_ovf *
pagetab_ovf_find(const struct pagetab *t, uint64_t key)
{
	size_t i;

	if (!t->ovf_cap)
		return NULL;
	for (i = pagetab_hash(key) & (t->ovf_cap - 1); t->ovf[i].key;
	     i = (i + 1) & (t->ovf_cap - 1))
		if (t->ovf[i].key == key)
			return &t->ovf[i];
	return NULL;
}

static struct pagetab_ovf *
pagetab_ovf_take(struct pagetab *t, uint64_t key)
{
	struct pagetab_ovf *o = pagetab_ovf_find(t, key);
	size_t i;

	if (o)
		return o;
	if ((t->ovf_count + 1) * 2 > t->ovf_cap) {
		size_t cap = t->ovf_cap ? t->ovf_cap * 2 : 16;
		struct pagetab_ovf *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t j = 0; j < t->ovf_cap; j++) {
			if (!t->ovf[j].key)
				continue;
			for (i = pagetab_hash(t->ovf[j].key) & (cap - 1);
			     n[i].key; i = (i + 1) & (cap - 1))
				;
			n[i] = t->ovf[j];
		}
		free(t->ovf);
		t->ovf = n;
		t->ovf_cap = cap;
	}
	for (i = pagetab_hash(key) & (t->ovf_cap - 1); t->ovf[i].key;
	     i = (i + 1) & (t->ovf_cap - 1))
		;
	o = &t->ovf[i];
	memset(o, 0, sizeof(*o));
	o->key = key;
	t->ovf_count++;
	return o;
}

/*
 * Adds n to a count whose field holds `field` (saturating at sat): below
 * sat the field is the count, at sat *wide is.  Returns the new field.
 * Without memory for the side map the field stops one short of sat, the
 * only case where a count falls behind.
 */
static uint64_t
pagetab_add_wide(struct pagetab *t, uint64_t key, uint64_t field,
		 uint64_t sat, size_t member, uint64_t n)
{
	struct pagetab_ovf *o = field == sat ? pagetab_ovf_find(t, key) :
					       NULL;
	uint64_t v = o ? *(uint64_t *)((unsigned char *)o + member) + n :
			 field + n;

	if (v < sat)
		return v;
	o = pagetab_ovf_take(t, key);
	if (!o)
		return sat - 1;
	*(uint64_t *)((unsigned char *)o + member) = v;
	return sat;
}


/* Whether the base in member of struct pagetab_ovf belongs to an
 * interval count (kinds, local, remote): all but total. */
static inline bool
pagetab_ovf_per_interval(size_t member)
{
	return member != offsetof(struct pagetab_ovf, total);
}

/*
 * The base of a carried count in the side map (member of struct
 * pagetab_ovf), 0 when there is none: the interval counts' bases count
 * only in the interval they were made in.
 */
static uint64_t
pagetab_carry_base(const struct pagetab *t, const struct pagetab_ovf *o,
		   size_t member)
{
	if (!o || (pagetab_ovf_per_interval(member) &&
		   o->ivl_epoch != t->epoch))
		return 0;
	return *(const uint64_t *)((const unsigned char *)o + member);
}

/* A carried count from its field and base (see pagetab.h). */
static inline uint64_t
pagetab_carry_value(uint64_t field, uint64_t half, uint64_t base)
{
	return field >= half && base ? base + field - half : field;
}

/*
 * Adds n to a carried count whose field holds `field` (maximum max, carry
 * from half); returns the new field.  The field keeps counting on its own
 * while it can, base or not; past max - 1 the whole count becomes the
 * base and the field restarts at half.  Without memory for the side map
 * the field stops at max - 1, the only case where a count falls behind.
 */
static uint64_t
pagetab_add_carry(struct pagetab *t, uint64_t key, uint64_t field,
		  uint64_t half, uint64_t max, size_t member, uint64_t n)
{
	struct pagetab_ovf *o;
	uint64_t v;

	if (n < max - field)
		return field + n;
	o = pagetab_ovf_take(t, key);
	if (!o)
		return max - 1;
	v = pagetab_carry_value(field, half, pagetab_carry_base(t, o, member)) +
	    n;
	if (pagetab_ovf_per_interval(member) && o->ivl_epoch != t->epoch) {
		/* Bases of an earlier interval: none counts any more. */
		o->local = o->remote = 0;
		o->kinds[0] = o->kinds[1] = o->kinds[2] = 0;
		o->ivl_epoch = t->epoch;
	}
	*(uint64_t *)((unsigned char *)o + member) = v;
	return half;
}

static void
pagetab_add_kind(struct pagetab *t, struct page_entry *e, unsigned kind,
		 uint64_t n)
{
	if (n)
		e->kinds[kind] = (uint16_t)pagetab_add_carry(t, e->key,
			e->kinds[kind], PAGETAB_KIND_HALF, PAGETAB_KIND_MAX,
			PAGETAB_OVF_KIND(kind), n);
}

static void
pagetab_add_total(struct pagetab *t, struct page_entry *e, uint64_t n)
{
	if (n)
		e->total = (uint16_t)pagetab_add_carry(t, e->key, e->total,
			PAGETAB_TOTAL_HALF, PAGETAB_TOTAL_MAX,
			offsetof(struct pagetab_ovf, total), n);
}

void
pagetab_count_slow(struct pagetab *t, struct page_entry *e, unsigned kind,
		   uint64_t n)
{
	if (kind > SAMPLE_OTHER)
		kind = SAMPLE_OTHER;
	pagetab_add_kind(t, e, kind, n);
	pagetab_add_total(t, e, n);
}

static void
pagetab_add_locality_n(struct pagetab *t, struct page_entry *e,
		       uint64_t local, uint64_t remote)
{
	uint64_t n[2] = { remote, local };

	if (!(t->ext & PAGETAB_EXT_LOCALITY))
		return;
	for (int k = 0; k < 2; k++) {
		unsigned shift = pagetab_loc_shift(k);
		uint32_t v;

		if (!n[k])
			continue;
		v = (uint32_t)pagetab_add_carry(t, e->key,
			pagetab_entry_loc(e, k), PAGETAB_LOC_HALF,
			PAGETAB_LOC_MAX, k ? offsetof(struct pagetab_ovf, local) :
			offsetof(struct pagetab_ovf, remote), n[k]);
		e->ivl = (e->ivl & ~(PAGETAB_LOC_MAX << shift)) | v << shift;
	}
}

void
pagetab_add_locality(struct pagetab *t, struct page_entry *e, bool local)
{
	pagetab_add_locality_n(t, e, local, !local);
}

static void
pagetab_add_weight_n(struct pagetab *t, struct page_entry *e, uint64_t sum,
		     uint64_t n)
{
	struct pagetab_weight *w;

	if (!t->weight_off)
		return;
	w = (struct pagetab_weight *)((unsigned char *)e + t->weight_off);
	if (sum)
		w->sum = (uint32_t)pagetab_add_wide(t, e->key, w->sum,
			PAGETAB_WEIGHT_SAT,
			offsetof(struct pagetab_ovf, weight_sum), sum);
	if (n)
		w->n = (uint32_t)pagetab_add_wide(t, e->key, w->n,
			PAGETAB_WEIGHT_SAT,
			offsetof(struct pagetab_ovf, weight_n), n);
}

void
pagetab_add_weight(struct pagetab *t, struct page_entry *e, uint64_t weight)
{
	pagetab_add_weight_n(t, e, weight, 1);
}

void
pagetab_add_counts(struct pagetab *t, struct page_entry *e,
		   const struct page_counts *c)
{
	pagetab_add_kind(t, e, SAMPLE_LOAD, c->loads);
	pagetab_add_kind(t, e, SAMPLE_STORE, c->stores);
	pagetab_add_kind(t, e, SAMPLE_OTHER, c->other);
	pagetab_add_total(t, e, c->total);
	pagetab_add_locality_n(t, e, c->local, c->remote);
	pagetab_add_weight_n(t, e, c->weight_sum, c->weight_n);
}

void
pagetab_read(const struct pagetab *t, const struct page_entry *e,
	     struct page_counts *out)
{
	bool current = pagetab_current(e, t->epoch);
	const struct pagetab_weight *w = t->weight_off ? (const void *)
		((const unsigned char *)e + t->weight_off) : NULL;
	const struct pagetab_ovf *o = NULL;
	uint64_t kinds[3];

	memset(out, 0, sizeof(*out));
	if (e->total >= PAGETAB_TOTAL_HALF ||
	    (current && (e->kinds[0] >= PAGETAB_KIND_HALF ||
			 e->kinds[1] >= PAGETAB_KIND_HALF ||
			 e->kinds[2] >= PAGETAB_KIND_HALF ||
			 pagetab_entry_loc(e, true) >= PAGETAB_LOC_HALF ||
			 pagetab_entry_loc(e, false) >= PAGETAB_LOC_HALF)) ||
	    (w && (w->sum == PAGETAB_WEIGHT_SAT ||
		   w->n == PAGETAB_WEIGHT_SAT)))
		o = pagetab_ovf_find(t, e->key);
	for (int k = 0; k < 3; k++)
		kinds[k] = current ? pagetab_carry_value(e->kinds[k],
			PAGETAB_KIND_HALF,
			pagetab_carry_base(t, o, PAGETAB_OVF_KIND(k))) : 0;
	out->loads = kinds[SAMPLE_LOAD];
	out->stores = kinds[SAMPLE_STORE];
	out->other = kinds[SAMPLE_OTHER];
	out->total = pagetab_carry_value(e->total, PAGETAB_TOTAL_HALF,
		pagetab_carry_base(t, o, offsetof(struct pagetab_ovf, total)));
	if ((t->ext & PAGETAB_EXT_LOCALITY) && current) {
		out->local = pagetab_carry_value(pagetab_entry_loc(e, true),
			PAGETAB_LOC_HALF,
			pagetab_carry_base(t, o,
				offsetof(struct pagetab_ovf, local)));
		out->remote = pagetab_carry_value(pagetab_entry_loc(e, false),
			PAGETAB_LOC_HALF,
			pagetab_carry_base(t, o,
				offsetof(struct pagetab_ovf, remote)));
	}
	if (w) {
		out->weight_sum = w->sum == PAGETAB_WEIGHT_SAT && o ?
				  o->weight_sum : w->sum;
		out->weight_n = w->n == PAGETAB_WEIGHT_SAT && o ?
				o->weight_n : w->n;
	}
}

uint64_t
pagetab_interval_samples(const struct pagetab *t, const struct page_entry *e)
{
	struct page_counts c;

	pagetab_read(t, e, &c);
	return c.loads + c.stores + c.other;
}
