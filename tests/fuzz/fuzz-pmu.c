#include "config.h"

/*
 * Fuzz target for the sysfs grammar (collector/sources/pmu.c) and the data_src
 * texts (src/model/datasrc.c): format files and event strings come from sysfs,
 * which memtop reads from MEMTOP_SYSFS_ROOT trees too, and data_src from
 * the kernel.
 *
 * Input: the bytes up to the first NUL are tried as a format file and as
 * an event string; the event string's terms are packed against a table of
 * formats, among them the input itself when it parses as a format; the
 * first 8 bytes are also a data_src value.  Invariants are checked with
 * __builtin_trap(): a parsed format has width == popcount(mask); packing
 * never sets a bit outside the formats' masks and never accepts a value
 * wider than its field; texts stay NUL-terminated within their buffer.
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target; otherwise
 * tests/fuzz/fuzzmain.c replays the files given, then a fixed pseudo-random set
 * of inputs built from the grammar's own tokens.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "datasrc.h"
#include "fuzzmain.h"
#include "pmu.h"

struct fuzz_ctx {
	struct pmu_format own;	/* the input as a format, if it parses */
	bool own_ok;
};

static const char *const fuzz_formats[][2] = {
	{ "event", "config:0-7" },
	{ "umask", "config:8-15" },
	{ "ldlat", "config1:0-15" },
	{ "amd", "config:0-7,32-35" },
	{ "doc", "config1:1,6-10,44" },
	{ "all", "config:0-63" },
	{ "swfilt", "config2:0" },
};

static int
fuzz_lookup(const char *term, struct pmu_format *f, void *ctx)
{
	struct fuzz_ctx *c = ctx;

	if (strcmp(term, "own") == 0) {
		if (!c->own_ok)
			return -ENOENT;
		*f = c->own;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(fuzz_formats);
	     i++)
		if (strcmp(term, fuzz_formats[i][0]) == 0)
			return pmu_format_parse(fuzz_formats[i][1], f) ?
			       -EBADMSG : 0;
	return -ENOENT;
}

static void
fuzz_check_text(const char *buf, size_t len, size_t n)
{
	if (n >= len || strlen(buf) != n)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t words[PMU_N_WORDS], allowed[PMU_N_WORDS] = { 0 }, v = 0;
	struct fuzz_ctx ctx = { .own_ok = false };
	struct pmu_terms terms;
	char text[512], err[160], small[9];
	size_t len = strnlen((const char *)data, size);

	if (len >= sizeof(text))
		len = sizeof(text) - 1;
	memcpy(text, data, len);
	text[len] = '\0';

	if (pmu_format_parse(text, &ctx.own) == 0) {
		if (ctx.own.word >= PMU_N_WORDS ||
		    (unsigned)__builtin_popcountll(ctx.own.mask) !=
		    ctx.own.width || ctx.own.width == 0)
			__builtin_trap();
		ctx.own_ok = true;
		allowed[ctx.own.word] |= ctx.own.mask;
	}
	for (size_t i = 0; i < ARRAY_SIZE(fuzz_formats);
	     i++) {
		struct pmu_format f;

		if (pmu_format_parse(fuzz_formats[i][1], &f) != 0)
			__builtin_trap();
		allowed[f.word] |= f.mask;
	}
	if (pmu_terms_parse(text, &terms) == 0) {
		bool builtin = false;

		if (terms.n == 0 || terms.n > PMU_MAX_TERMS)
			__builtin_trap();
		for (size_t i = 0; i < terms.n; i++)
			builtin |= strncmp(terms.t[i].name, "config", 6) == 0;
		if (pmu_terms_encode(&terms, fuzz_lookup, &ctx, words, err,
				     sizeof(err)) == 0 && !builtin) {
			for (unsigned w = 0; w < PMU_N_WORDS; w++)
				if (words[w] & ~allowed[w])
					__builtin_trap();
		}
		/* Overrides go in or report a full list, nothing else. */
		if (pmu_terms_set(&terms, "ldlat", 30) != 0 &&
		    terms.n != PMU_MAX_TERMS)
			__builtin_trap();
	}

	memcpy(&v, data, size < 8 ? size : 8);
	fuzz_check_text(text, sizeof(text),
			datasrc_level_text(v, text, sizeof(text)));
	fuzz_check_text(small, sizeof(small),
			datasrc_level_text(v, small, sizeof(small)));
	fuzz_check_text(text, sizeof(text),
			datasrc_snoop_text(v, text, sizeof(text)));
	fuzz_check_text(small, sizeof(small),
			datasrc_tlb_text(v, small, sizeof(small)));
	if ((unsigned)datasrc_level(v) >= DATASRC_LVL__COUNT ||
	    datasrc_is_remote(v) < -1 || datasrc_is_remote(v) > 1)
		__builtin_trap();
	return 0;
}

static const char *const fuzz_tokens[] = {
	"config", "config1", "config2", "config3", "config9", ":", "-",
	",", "=", "?", "0", "7", "15", "32", "63", "64", "0x", "0xcd",
	"ff", "event", "umask", "ldlat", "own", "amd", "doc", "all",
	"swfilt", " ", "\n", "99999999999999999999", "-1", "x",
};

/*
 * Up to 12 of the grammar's tokens, now and then one byte of junk, and the
 * terminating NUL as part of the input.
 */
static size_t
fuzz_pmu_generate(uint64_t *x, uint8_t *buf, size_t cap)
{
	size_t n_tokens = ARRAY_SIZE(fuzz_tokens);
	size_t len = 0, n = 1 + (fuzz_next(x) >> 40) % 12;

	for (size_t k = 0; k < n; k++) {
		const char *t = fuzz_tokens[(fuzz_next(x) >> 8) % n_tokens];

		if (len + strlen(t) + 1 >= cap)
			break;
		memcpy(buf + len, t, strlen(t));
		len += strlen(t);
	}
	if ((*x & 15) == 0 && len > 0)
		buf[(*x >> 20) % len] = (uint8_t)(*x >> 32);
	buf[len] = '\0';
	return len + 1;
}

const struct fuzz_target fuzz_target = {
	.name = "fuzz-pmu",
	.generate = fuzz_pmu_generate,
	.seed = 0x9e3779b97f4a7c15,
	.n_random = 200000,
	.random_max = 256,
};
