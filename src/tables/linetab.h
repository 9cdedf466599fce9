/*
 * Cache-line heat: for a few pages, samples per 1/64th of the page (one
 * 64-byte cache line at 4 KiB pages; size/64 bytes at 2 MiB and 1 GiB).
 * Collector thread only; needs samples with full data addresses (faults
 * and PEBS/IBS all give them).
 *
 * A fixed number of slots (LINETAB_SLOTS), each holding one page's 64
 * counters.  A page gets a slot at its first sample while free slots
 * remain; once they are all taken, only the pages named by
 * linetab_want() (the first pages of the last frame) get slots, taken
 * from pages not named.  A slot counts from the moment its page got it.
 */
#ifndef MEMTOP_LINETAB_H
#define MEMTOP_LINETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pagetab.h"

#define LINETAB_LINES	64
#define LINETAB_SLOTS	1024

struct linetab_key {
	int32_t pid;
	uint64_t page;
};

/*
 * Open addressing over slot numbers, four times the slots so probes stay
 * short; rebuilt whole when slots change owner (linetab_want).  An index
 * entry is (tag << 16 | slot + 1), 0 = empty; the tag is other bits of
 * the key's hash, so a probe reads a slot (144 bytes elsewhere) only when
 * the tag matches.
 *
 * Most samples are of pages without a slot once the slots are taken; the
 * filter answers those without a probe: one bit per hash value (other
 * bits again), set for every page with a slot, cleared only when the
 * index is rebuilt or reset.  A clear bit means "no slot" for sure; a set
 * bit (1/64 of pages without a slot at 1024 slots) goes on to the index.
 */
#define LINETAB_INDEX_BITS	12
#define LINETAB_INDEX		(1u << LINETAB_INDEX_BITS)
#define LINETAB_FILTER_BITS	16

struct linetab_slot {
	uint64_t page;
	int32_t pid;
	bool used;
	bool wanted;
	uint16_t lines[LINETAB_LINES];	/* low 16 bits; the rest in carry */
};

/*
 * A line's count past 16 bits: the counters hold its low 16 bits and this
 * the times they wrapped, so counts stay exact at half the bytes (a slot
 * is 144 bytes, 2.25 cache lines, instead of 272).  Only lines with 64 Ki
 * samples or more have one, so a short unsorted array does: a wrap (one
 * in 64 Ki samples of that line) searches it, a read scans it.
 */
struct linetab_carry {
	uint32_t at;		/* slot << 6 | line */
	uint32_t wraps;
};

struct linetab {
	struct linetab_slot slots[LINETAB_SLOTS];
	uint32_t index[LINETAB_INDEX];	/* tag << 16 | slot + 1; 0 = empty */
	uint64_t filter[(1u << LINETAB_FILTER_BITS) / 64];
	size_t n_used;
	unsigned page_shift;
	struct linetab_carry *carry;
	size_t n_carry, carry_cap;
	/* Out of memory for a carry once: lines that wrap from then on
	 * stay at 65535 (no allocation retried until the next reset; a
	 * carry freed by a slot changing owner is reused), the
	 * wraps they lost counted in saturated (not shown: it takes a
	 * failed allocation of a few hundred bytes). */
	bool carry_failed;
	uint64_t saturated;
};

/* The page table's mix of the page's key (pagetab_key_mix), which the
 * aggregation computes once a sample for all the side tables. */
static inline uint64_t
linetab_hash(int32_t pid, uint64_t page)
{
	return pagetab_key_mix(pagetab_key_of(pid, page));
}

/* Parts of the hash: the index position and the filter bit are its top
 * bits (index and filter are separate, so they may share bits); the tag
 * is the low half of its two halves' xor, so that keys sharing a
 * position still differ in their tags. */
static inline size_t
linetab_pos(uint64_t h)
{
	return (size_t)(h >> (64 - LINETAB_INDEX_BITS));
}

static inline uint32_t
linetab_tag(uint64_t h)
{
	return (uint32_t)(h ^ (h >> 32)) << 16;
}

static inline uint32_t
linetab_filter_bit(uint64_t h)
{
	return (uint32_t)(h >> (64 - LINETAB_FILTER_BITS));
}

static inline bool
linetab_filter_has(const struct linetab *t, uint64_t h)
{
	uint32_t b = linetab_filter_bit(h);

	return t->filter[b / 64] >> (b % 64) & 1;
}

static inline void
linetab_filter_set(struct linetab *t, uint64_t h)
{
	uint32_t b = linetab_filter_bit(h);

	t->filter[b / 64] |= UINT64_C(1) << (b % 64);
}

/* The counter of addr within its page: its 1/64th. */
static inline size_t
linetab_line(const struct linetab *t, uint64_t addr)
{
	return (addr & ((1ull << t->page_shift) - 1)) >> (t->page_shift - 6);
}

/* NULL on ENOMEM. */
struct linetab *linetab_new(unsigned page_shift);
void linetab_free(struct linetab *t);		/* NULL-safe */

/* h: linetab_hash(pid, addr >> page_shift). */
void linetab_add_slow(struct linetab *t, int32_t pid, uint64_t addr,
		      uint64_t h);
/* s's counter of `line` wrapped to 0: one more 64 Ki in the carry. */
void linetab_carry(struct linetab *t, struct linetab_slot *s, size_t line);

/* One sample on `line` of s. */
static inline void
linetab_count_line(struct linetab *t, struct linetab_slot *s, size_t line)
{
	if (__builtin_expect(++s->lines[line] == 0, 0))
		linetab_carry(t, s, line);
}

/* One sample at addr, which lies in page (pid, page) (page: addr >>
 * page_shift), whose hash is h (linetab_hash). */
static inline void
linetab_add_key(struct linetab *t, int32_t pid, uint64_t page,
		uint64_t addr, uint64_t h)
{
	uint32_t v;

	/* All slots taken and none of them this page's: nothing to do. */
	if (t->n_used == LINETAB_SLOTS && !linetab_filter_has(t, h))
		return;
	/* The page's slot at its index position (most pages with a slot:
	 * the index is at most a quarter full): no call. */
	v = t->index[linetab_pos(h)];
	if (v && (v & 0xffff0000u) == linetab_tag(h)) {
		struct linetab_slot *s = &t->slots[(v & 0xffff) - 1];

		if (s->page == page && s->pid == pid) {
			linetab_count_line(t, s, linetab_line(t, addr));
			return;
		}
	}
	linetab_add_slow(t, pid, addr, h);
}

/* One sample at addr, which lies in page (pid, addr >> page_shift). */
static inline void
linetab_add(struct linetab *t, int32_t pid, uint64_t addr)
{
	uint64_t page = addr >> t->page_shift;

	linetab_add_key(t, pid, page, addr, linetab_hash(pid, page));
}

/* Adds src's pages (those dst has or has a free slot for) to dst's, as
 * if dst had taken their samples.  Same page size only. */
void linetab_merge(struct linetab *dst, const struct linetab *src);
/* Copies the page's counters (carries added; a count past 32 bits
 * keeps its low 32) into out[LINETAB_LINES]; false when the page has no
 * slot. */
bool linetab_get(const struct linetab *t, int32_t pid, uint64_t page,
		 uint32_t *out);

/* Makes sure each of keys[0..n) has a slot (n <= LINETAB_SLOTS / 2),
 * taking them from pages not in keys when needed. */
void linetab_want(struct linetab *t, const struct linetab_key *keys,
		  size_t n);

/* Forgets every page; a new page_shift for the counters that follow. */
void linetab_reset(struct linetab *t, unsigned page_shift);

/* Pages with a slot now. */
size_t linetab_count(const struct linetab *t);
/* Bytes the table holds (slots, index, filter, carries). */
size_t linetab_bytes(const struct linetab *t);

#endif
