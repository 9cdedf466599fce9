/*
 * Byte order of perf.data files: swapping attrs and kernel records between
 * the file's order and the host's, and a bounds-checked cursor that reads
 * integers in the file's order.  Pure functions; any thread.
 */
#ifndef MEMTOP_PERFDATA_SWAP_H
#define MEMTOP_PERFDATA_SWAP_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

/*
 * Swaps the first `size` bytes of an attr in place, field by field as
 * perf does (tools/perf/util/session.c perf_event__attr_swap), including
 * the bit-field word, whose bits are mirrored within each byte because
 * compilers allocate bit-fields from the other end on the other byte
 * order.  Its own inverse.
 */
void perfdata_swap_attr(void *attr, size_t size);

/* Swaps a perf_event_header (u32 type, u16 misc, u16 size) in place. */
void perfdata_swap_header(struct perf_event_header *hdr);

/*
 * Swaps the body of a kernel record in place; hdr is already in host
 * order.  l is the layout of the record's attr (for a SAMPLE's fields and
 * the sample_id_all trailer of the others), NULL when unknown: then the
 * body is swapped as u64 words, as perf does.  to_host says which way, so
 * that counts inside the record (callchain nr, raw size) are read in host
 * order.  0, or -EINVAL when a count runs past the record (the record is
 * then partly swapped and must not be decoded).  A RAW payload is left
 * alone: its fields are the tracepoint's, and whoever reads them swaps
 * them.  A user stack and AUX data are swapped as u64 words, as perf
 * swaps them (and reads them back: `perf script` unwinds a swapped
 * dwarf capture the same).
 */
int perfdata_swap_body(struct perf_event_header *hdr,
		       const struct record_layout *l, bool to_host);

/*
 * Reads integers in a file's byte order from [p, end).  A read past end
 * sets `bad`, returns 0 and leaves p alone, so a parser can read a whole
 * structure and check `bad` once.
 */
struct perfdata_cursor {
	const unsigned char *p;
	const unsigned char *end;
	bool swap;
	bool bad;
};

void perfdata_cursor_init(struct perfdata_cursor *c, const void *p,
			  size_t len, bool swap);
size_t perfdata_cursor_left(const struct perfdata_cursor *c);
uint64_t perfdata_get_u64(struct perfdata_cursor *c);
uint32_t perfdata_get_u32(struct perfdata_cursor *c);
/* n bytes in place (NULL and bad when short). */
const void *perfdata_get_bytes(struct perfdata_cursor *c, size_t n);
/*
 * perf's string: { u32 len; char s[len] } NUL-padded.  Copies at most
 * outlen - 1 bytes up to the first NUL into out, always terminated.
 */
void perfdata_get_string(struct perfdata_cursor *c, char *out,
			 size_t outlen);

static inline uint64_t
perfdata_bswap64_if(uint64_t v, bool swap)
{
	return swap ? __builtin_bswap64(v) : v;
}

static inline uint32_t
perfdata_bswap32_if(uint32_t v, bool swap)
{
	return swap ? __builtin_bswap32(v) : v;
}

#endif
