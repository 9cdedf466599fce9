#include "config.h"

/*
 * Byte swapping for perf.data.  See perfdata_swap.h.
 *
 * Records are swapped in a private, 8-byte aligned copy (the reader's or
 * the writer's scratch buffer), never in the file image.  Every access is
 * bounded by header.size; a count that does not fit stops the walk.
 */

#include <errno.h>
#include <string.h>

#include "base.h"
#include "perfdata_swap.h"

/*
 * Fixed structures are walked from a string of field widths, one
 * character a field, in order and without gaps: '2' = u16, '4' = u32,
 * '8' = u64, 'b' = the attr's bit-field word (8 bytes, bits mirrored).
 */

/* struct perf_event_attr up to config3 (PERF_ATTR_SIZE_VER8, 136 bytes). */
static const char perfdata_attr_fields[] =
	"44"		/* type, size */
	"8888"		/* config, sample_period/freq, sample_type,
			 * read_format */
	"b"		/* disabled ... bit-fields */
	"44"		/* wakeup_events/watermark, bp_type */
	"88"		/* bp_addr/config1, bp_len/config2 (VER1) */
	"8"		/* branch_sample_type (VER2) */
	"84"		/* sample_regs_user, sample_stack_user */
	"4"		/* clockid (VER3) */
	"8"		/* sample_regs_intr (VER4) */
	"422"		/* aux_watermark, sample_max_stack,
			 * __reserved_2 (VER5) */
	"44"		/* aux_sample_size, __reserved_3 (VER6) */
	"8"		/* sig_data (VER7) */
	"8";		/* config3 (VER8) */

static void
perfdata_swap16_at(unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	v = __builtin_bswap16(v);
	memcpy(p, &v, 2);
}

static void
perfdata_swap32_at(unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	v = __builtin_bswap32(v);
	memcpy(p, &v, 4);
}

static void
perfdata_swap64_at(unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
}

static unsigned char
perfdata_mirror_byte(unsigned char b)
{
	b = (unsigned char)((b & 0xf0) >> 4 | (b & 0x0f) << 4);
	b = (unsigned char)((b & 0xcc) >> 2 | (b & 0x33) << 2);
	return (unsigned char)((b & 0xaa) >> 1 | (b & 0x55) << 1);
}

void
perfdata_swap_header(struct perf_event_header *hdr)
{
	hdr->type = __builtin_bswap32(hdr->type);
	hdr->misc = __builtin_bswap16(hdr->misc);
	hdr->size = __builtin_bswap16(hdr->size);
}

struct perfdata_swapper {
	unsigned char *p;
	unsigned char *end;
	bool to_host;
	bool bad;
};

static size_t
perfdata_swapper_left(const struct perfdata_swapper *s)
{
	return (size_t)(s->end - s->p);
}

/* n u64 words; returns the last one in host order (for counts). */
static uint64_t
perfdata_swap_u64s(struct perfdata_swapper *s, uint64_t n)
{
	uint64_t v = 0;

	if (s->bad || n > perfdata_swapper_left(s) / 8) {
		s->bad = true;
		return 0;
	}
	for (uint64_t i = 0; i < n; i++) {
		memcpy(&v, s->p, 8);
		perfdata_swap64_at(s->p);
		if (s->to_host)		/* counts are read in host order */
			v = __builtin_bswap64(v);
		s->p += 8;
	}
	return v;
}

/* Two u32 in one u64 slot ({pid, tid}, {cpu, res}). */
static void
perfdata_swap_u32_pair(struct perfdata_swapper *s)
{
	if (s->bad || perfdata_swapper_left(s) < 8) {
		s->bad = true;
		return;
	}
	perfdata_swap32_at(s->p);
	perfdata_swap32_at(s->p + 4);
	s->p += 8;
}

static uint32_t
perfdata_swap_u32(struct perfdata_swapper *s)
{
	uint32_t v;

	if (s->bad || perfdata_swapper_left(s) < 4) {
		s->bad = true;
		return 0;
	}
	memcpy(&v, s->p, 4);
	perfdata_swap32_at(s->p);
	if (s->to_host)
		v = __builtin_bswap32(v);
	s->p += 4;
	return v;
}

static void
perfdata_skip(struct perfdata_swapper *s, uint64_t n)
{
	if (s->bad || n > perfdata_swapper_left(s)) {
		s->bad = true;
		return;
	}
	s->p += n;
}

/*
 * Fields by a width string (see perfdata_attr_fields).  The first field
 * that does not fit stops the walk and sets bad; what came before it is
 * swapped.
 */
static void
perfdata_swap_fields(struct perfdata_swapper *s, const char *widths)
{
	for (; *widths && !s->bad; widths++) {
		size_t w = *widths == 'b' ? 8 : (size_t)(*widths - '0');

		if (w > perfdata_swapper_left(s)) {
			s->bad = true;
			break;
		}
		switch (*widths) {
		case 'b':
			for (int b = 0; b < 8; b++)
				s->p[b] = perfdata_mirror_byte(s->p[b]);
			break;
		case '2':
			perfdata_swap16_at(s->p);
			break;
		case '4':
			perfdata_swap32_at(s->p);
			break;
		default:
			perfdata_swap64_at(s->p);
			break;
		}
		s->p += w;
	}
}

/*
 * The fields of `order` that st selects, in that order: {pid, tid} and
 * {cpu, res} are u32 pairs, the others u64.  A SAMPLE's fixed head and
 * tail and the sample_id_all trailer are all walked this way.
 */
static void
perfdata_swap_selected(struct perfdata_swapper *s, uint64_t st,
		       const uint64_t *order, size_t n)
{
	const uint64_t pairs = PERF_SAMPLE_TID | PERF_SAMPLE_CPU;

	for (size_t i = 0; i < n; i++) {
		if (!(st & order[i]))
			continue;
		if (order[i] & pairs)
			perfdata_swap_u32_pair(s);
		else
			perfdata_swap_u64s(s, 1);
	}
}

void
perfdata_swap_attr(void *attr, size_t size)
{
	struct perfdata_swapper s = {
		.p = attr,
		.end = (unsigned char *)attr + size,
	};

	perfdata_swap_fields(&s, perfdata_attr_fields);
}

/* PERF_SAMPLE_READ: every part is u64 words; nr leads a group. */
static void
perfdata_swap_read(struct perfdata_swapper *s, uint64_t rf)
{
	uint64_t times = 0, entry = 1, nr;

	times += !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED);
	times += !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	entry += !!(rf & PERF_FORMAT_ID);
	entry += !!(rf & PERF_FORMAT_LOST);
	if (!(rf & PERF_FORMAT_GROUP)) {
		perfdata_swap_u64s(s, times + entry);
		return;
	}
	nr = perfdata_swap_u64s(s, 1);
	perfdata_swap_u64s(s, times);
	if (nr > perfdata_swapper_left(s) / 8 / entry) {
		s->bad = true;
		return;
	}
	perfdata_swap_u64s(s, nr * entry);
}

/* u64 size (host order after the swap) then size bytes, swapped as u64
 * words as perf swaps a whole sample (STACK_USER, AUX: the kernel pads
 * both to 8 bytes; a tail past the last word is left alone).  Returns
 * size. */
static uint64_t
perfdata_swap_sized(struct perfdata_swapper *s)
{
	uint64_t size = perfdata_swap_u64s(s, 1);

	if (size > perfdata_swapper_left(s)) {
		s->bad = true;
		return size;
	}
	perfdata_swap_u64s(s, size / 8);
	perfdata_skip(s, size % 8);
	return size;
}

/* REGS_USER, REGS_INTR: u64 abi; abi ? popcount(mask) u64 registers. */
static void
perfdata_swap_regs(struct perfdata_swapper *s, uint64_t mask)
{
	if (perfdata_swap_u64s(s, 1) != 0)
		perfdata_swap_u64s(s, (uint64_t)__builtin_popcountll(mask));
}

/*
 * The fields between RAW and WEIGHT: BRANCH_STACK (nr, [hw_idx], nr x
 * {from, to, flags} as u64 words, [nr counters]), REGS_USER, STACK_USER
 * (size, the bytes, dyn_size).
 */
static void
perfdata_swap_middle(struct perfdata_swapper *s, const struct record_layout *l)
{
	const uint64_t st = l->sample_type;

	if (st & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t nr = perfdata_swap_u64s(s, 1);

		if (l->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			perfdata_swap_u64s(s, 1);
		if (nr > perfdata_swapper_left(s) / 24)
			s->bad = true;
		else
			perfdata_swap_u64s(s, 3 * nr);
		if (l->branch_sample_type & RECORD_BRANCH_COUNTERS)
			perfdata_swap_u64s(s, nr);
	}
	if (st & PERF_SAMPLE_REGS_USER)
		perfdata_swap_regs(s, l->sample_regs_user);
	if ((st & PERF_SAMPLE_STACK_USER) && perfdata_swap_sized(s))
		perfdata_swap_u64s(s, 1);
}

/* Field order as in record_parse_sample() (kernel perf_output_sample). */
static void
perfdata_swap_sample(struct perfdata_swapper *s, const struct record_layout *l)
{
	const uint64_t st = l->sample_type;
	static const uint64_t fixed[] = {
		PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID,
		PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD,
	};
	static const uint64_t weight[] = {
		PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT,
		PERF_SAMPLE_DATA_SRC, PERF_SAMPLE_TRANSACTION,
	};
	static const uint64_t tail[] = {
		PERF_SAMPLE_PHYS_ADDR, PERF_SAMPLE_CGROUP,
		PERF_SAMPLE_DATA_PAGE_SIZE, PERF_SAMPLE_CODE_PAGE_SIZE,
	};

	perfdata_swap_selected(s, st, fixed, ARRAY_SIZE(fixed));
	if (st & PERF_SAMPLE_READ)
		perfdata_swap_read(s, l->read_format);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = perfdata_swap_u64s(s, 1);

		if (nr > perfdata_swapper_left(s) / 8)
			s->bad = true;
		else
			perfdata_swap_u64s(s, nr);
	}
	if (st & PERF_SAMPLE_RAW) {
		/* u32 size then size bytes of tracepoint data, left alone:
		 * their layout is the tracepoint's. */
		uint32_t len = perfdata_swap_u32(s);

		perfdata_skip(s, len);
	}
	perfdata_swap_middle(s, l);
	perfdata_swap_selected(s, st, weight, ARRAY_SIZE(weight));
	if (st & PERF_SAMPLE_REGS_INTR)
		perfdata_swap_regs(s, l->sample_regs_intr);
	perfdata_swap_selected(s, st, tail, ARRAY_SIZE(tail));
	if (st & PERF_SAMPLE_AUX)
		perfdata_swap_sized(s);
}

/* The sample_id_all trailer: the last 8 * popcount(fields) bytes. */
static void
perfdata_swap_trailer(struct perf_event_header *hdr,
		      const struct record_layout *l, bool to_host,
		      size_t *trailer_len)
{
	const uint64_t st = l->sample_type;
	static const uint64_t order[] = {
		PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER,
	};
	struct perfdata_swapper s;
	size_t n = 0;

	*trailer_len = 0;
	if (!l->sample_id_all)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		n += !!(st & order[i]);
	if (8 * n > hdr->size - sizeof(*hdr))
		return;
	s.p = (unsigned char *)hdr + hdr->size - 8 * n;
	s.end = (unsigned char *)hdr + hdr->size;
	s.to_host = to_host;
	s.bad = false;
	perfdata_swap_selected(&s, st, order, ARRAY_SIZE(order));
	*trailer_len = 8 * n;
}

/*
 * Fixed bodies of the kernel records memtop reads, as width strings (see
 * perfdata_attr_fields); the rest up to the trailer (names) is bytes.
 */
static const char *
perfdata_body_fields(uint32_t type, uint16_t misc)
{
	switch (type) {
	case PERF_RECORD_MMAP:
		return "44888";
	case PERF_RECORD_MMAP2:
		/* With MISC_MMAP_BUILD_ID the maj..ino_generation slot holds
		 * build-id bytes. */
		if (misc & (1 << 14))
			return "44888";
		return "448884488";
	case PERF_RECORD_LOST:
		return "88";
	case PERF_RECORD_COMM:
		return "44";
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		return "44448";
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		return "888";
	case PERF_RECORD_LOST_SAMPLES:
		return "8";
	default:
		return NULL;
	}
}

int
perfdata_swap_body(struct perf_event_header *hdr,
		   const struct record_layout *l, bool to_host)
{
	struct perfdata_swapper s = {
		.p = (unsigned char *)hdr + sizeof(*hdr),
		.end = (unsigned char *)hdr + hdr->size,
		.to_host = to_host,
	};
	const char *fields;
	size_t trailer = 0;

	if (hdr->size < sizeof(*hdr))
		return -EINVAL;
	if (hdr->type == PERF_RECORD_SAMPLE) {
		if (!l)
			perfdata_swap_u64s(&s, perfdata_swapper_left(&s) / 8);
		else
			perfdata_swap_sample(&s, l);
		return s.bad ? -EINVAL : 0;
	}
	if (l)
		perfdata_swap_trailer(hdr, l, to_host, &trailer);
	s.end -= trailer;
	fields = perfdata_body_fields(hdr->type, hdr->misc);
	if (!fields) {
		perfdata_swap_u64s(&s, perfdata_swapper_left(&s) / 8);
		return 0;
	}
	perfdata_swap_fields(&s, fields);
	return s.bad ? -EINVAL : 0;
}

void
perfdata_cursor_init(struct perfdata_cursor *c, const void *p, size_t len,
		     bool swap)
{
	c->p = p;
	c->end = c->p + len;
	c->swap = swap;
	c->bad = false;
}

size_t
perfdata_cursor_left(const struct perfdata_cursor *c)
{
	return (size_t)(c->end - c->p);
}

const void *
perfdata_get_bytes(struct perfdata_cursor *c, size_t n)
{
	const void *p = c->p;

	if (c->bad || n > perfdata_cursor_left(c)) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	return p;
}

uint64_t
perfdata_get_u64(struct perfdata_cursor *c)
{
	const void *p = perfdata_get_bytes(c, 8);
	uint64_t v;

	if (!p)
		return 0;
	memcpy(&v, p, 8);
	return perfdata_bswap64_if(v, c->swap);
}

uint32_t
perfdata_get_u32(struct perfdata_cursor *c)
{
	const void *p = perfdata_get_bytes(c, 4);
	uint32_t v;

	if (!p)
		return 0;
	memcpy(&v, p, 4);
	return perfdata_bswap32_if(v, c->swap);
}

void
perfdata_get_string(struct perfdata_cursor *c, char *out, size_t outlen)
{
	uint32_t len = perfdata_get_u32(c);
	const char *s = perfdata_get_bytes(c, len);
	size_t n = 0;

	if (outlen == 0)
		return;
	while (s && n < len && n + 1 < outlen && s[n] != '\0')
		n++;
	if (s)
		memcpy(out, s, n);
	out[n] = '\0';
}
