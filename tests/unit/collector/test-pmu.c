#include "config.h"

/*
 * collector/sources/pmu.c: format and event-string grammar, lowest-bit-first
 * packing, overrides, and the sysfs readers against the recorded trees.
 * Vectors: the ABI document's own example (config1:1,6-10,44), AMD's
 * split event field (0x1d0 -> config[7:0] = 0xd0, config[35:32] = 0x1),
 * Intel/IBS strings from the kernel, and the no-PMU VM's msr and uprobe
 * entries recorded in tests/fixtures/sysfs-pmu/vm-no-pmu.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "pmu.h"
#include "testlib.h"

static void
test_format_parse(void)
{
	static const struct {
		const char *text;
		unsigned word;
		uint64_t mask;
		unsigned width;
	} good[] = {
		{ "config:0-7", 0, 0xff, 8 },
		{ "config:0-7,32-35", 0, UINT64_C(0xf000000ff), 12 },
		{ "config1:0-15", 1, 0xffff, 16 },
		{ "config2:0", 2, 1, 1 },
		{ "config3:5", 3, 0x20, 1 },
		{ "config1:1,6-10,44", 1,
		  UINT64_C(1) << 44 | 0x7c0 | 0x2, 7 },
		{ "config:0-63", 0, UINT64_MAX, 64 },	/* msr/format/event */
		{ "config:32-63", 0, UINT64_C(0xffffffff00000000), 32 },
		{ "config:19\n", 0, 1u << 19, 1 },	/* as read from sysfs */
		{ "config:63", 0, UINT64_C(1) << 63, 1 },
	};
	static const char *const bad[] = {
		"", "config", "config:", "configx:1", "config4:1", "config:64",
		"config:7-3", "config:0-7,5", "config:1,", "config:a",
		"config:1 junk", "config:-1", "config:1-", "config:0-64",
		"config1:1,,2", ":1", "config:99999999999",
	};

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		struct pmu_format f;

		if (!check_eq_i64(pmu_format_parse(good[i].text, &f), 0)) {
			fprintf(stderr, "  '%s'\n", good[i].text);
			continue;
		}
		check_eq_u64(f.word, good[i].word);
		check_eq_u64(f.mask, good[i].mask);
		check_eq_u64(f.width, good[i].width);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct pmu_format f;

		if (!check_eq_i64(pmu_format_parse(bad[i], &f), -EINVAL))
			fprintf(stderr, "  accepted '%s'\n", bad[i]);
	}
}

static uint64_t
pack1(const char *format, uint64_t value, int *ret)
{
	uint64_t words[PMU_N_WORDS] = { 0 };
	struct pmu_format f;

	*ret = pmu_format_parse(format, &f);
	if (*ret == 0)
		*ret = pmu_format_pack(&f, value, words);
	return words[0] | words[1] | words[2] | words[3];
}

static void
test_format_pack(void)
{
	uint64_t words[PMU_N_WORDS] = { 0 };
	struct pmu_format ev, um;
	int ret;

	/* AMD event 0x1d0: low byte to config[7:0], next nibble [35:32]. */
	check_eq_u64(pack1("config:0-7,32-35", 0x1d0, &ret),
		     UINT64_C(0x1000000d0));
	check_eq_i64(ret, 0);
	check_eq_u64(pack1("config:0-7,32-35", 0xfff, &ret),
		     UINT64_C(0xf000000ff));
	pack1("config:0-7,32-35", 0x1000, &ret);
	check_eq_i64(ret, -ERANGE);

	/* The ABI example: bits 1, 6..10, 44 take value bits 0..6. */
	check_eq_u64(pack1("config1:1,6-10,44", 0x7f, &ret),
		     UINT64_C(1) << 44 | 0x7c0 | 0x2);
	check_eq_u64(pack1("config1:1,6-10,44", 0x41, &ret),
		     UINT64_C(1) << 44 | 0x2);
	check_eq_u64(pack1("config1:1,6-10,44", 0x2, &ret), 0x40);
	pack1("config1:1,6-10,44", 0x80, &ret);
	check_eq_i64(ret, -ERANGE);

	/* Intel ldlat is config1:0-15. */
	check_eq_u64(pack1("config1:0-15", 30, &ret), 30);
	pack1("config1:0-15", 65536, &ret);
	check_eq_i64(ret, -ERANGE);
	/* The VM vectors: msr event is all 64 bits, uprobe ref_ctr_offset
	 * the high half. */
	check_eq_u64(pack1("config:0-63", UINT64_MAX, &ret), UINT64_MAX);
	check_eq_u64(pack1("config:32-63", 0x10, &ret), UINT64_C(0x1000000000));
	check_eq_u64(pack1("config:0", 1, &ret), 1);

	/* Terms sharing a word are ORed; a refused value leaves words. */
	check_eq_i64(pmu_format_parse("config:0-7", &ev), 0);
	check_eq_i64(pmu_format_parse("config:8-15", &um), 0);
	check_eq_i64(pmu_format_pack(&ev, 0xcd, words), 0);
	check_eq_i64(pmu_format_pack(&um, 0x1, words), 0);
	check_eq_i64(pmu_format_pack(&um, 0x100, words), -ERANGE);
	check_eq_u64(words[0], 0x1cd);
}

static void
test_terms(void)
{
	struct pmu_terms t;

	check_eq_i64(pmu_terms_parse("event=0xcd,umask=0x1,ldlat=3", &t), 0);
	check_eq_u64(t.n, 3);
	check_eq_str(t.t[0].name, "event");
	check_eq_u64(t.t[0].value, 0xcd);
	check_eq_str(t.t[2].name, "ldlat");
	check_eq_u64(t.t[2].value, 3);

	/* bare term = 1, "=?" required, decimal with a leading zero */
	check_eq_i64(pmu_terms_parse("event=0x3c,any,cmask=?,inv=010\n", &t),
		     0);
	check_eq_u64(t.n, 4);
	check_eq_u64(t.t[1].value, 1);
	check(!t.t[1].required);
	check(t.t[2].required);
	check_eq_u64(t.t[3].value, 10);
	check_eq_i64(pmu_terms_parse("event=0x00", &t), 0);
	check_eq_u64(t.t[0].value, 0);
	check_eq_i64(pmu_terms_parse("event=0XCD", &t), 0);
	check_eq_u64(t.t[0].value, 0xcd);

	static const char *const bad[] = {
		"", "event=", "=3", "event=0x", "event=zz", "a,,b", "a,",
		",a", "ev ent=1", "event=1=2", "event=-1", "event=1x",
		"event=18446744073709551616", "e=1,e=2,e=3,e=4,e=5,e=6,e=7,"
		"e=8,e=9,e=10,e=11,e=12,e=13,e=14,e=15,e=16,e=17",
		"a_very_long_term_name_beyond_32_chars=1",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (!check_eq_i64(pmu_terms_parse(bad[i], &t), -EINVAL))
			fprintf(stderr, "  accepted '%s'\n", bad[i]);

	/* overrides replace (and satisfy "=?") or append */
	check_eq_i64(pmu_terms_parse("event=0xcd,umask=?,ldlat=3", &t), 0);
	check_eq_i64(pmu_terms_set(&t, "ldlat", 30), 0);
	check_eq_i64(pmu_terms_set(&t, "umask", 1), 0);
	check_eq_i64(pmu_terms_set(&t, "cnt_ctl", 1), 0);
	check_eq_u64(t.n, 4);
	check_eq_u64(t.t[2].value, 30);
	check(!t.t[1].required);
	check_eq_str(t.t[3].name, "cnt_ctl");
	check_eq_i64(pmu_terms_set(&t, "bad name", 1), -EINVAL);
}

/* A PMU described by a table, for pmu_terms_encode without files. */
static const struct {
	const char *term, *format;
} fake_formats[] = {
	{ "event", "config:0-7" }, { "umask", "config:8-15" },
	{ "ldlat", "config1:0-15" }, { "cnt_ctl", "config:19" },
	{ "swfilt", "config2:0" }, { "amd_event", "config:0-7,32-35" },
	{ "retprobe", "config:0" }, { "ref_ctr_offset", "config:32-63" },
	{ "broken", "config:9-8" },
};

static int
fake_lookup(const char *term, struct pmu_format *f, void *ctx)
{
	(void)ctx;
	for (size_t i = 0; i < ARRAY_SIZE(fake_formats);
	     i++)
		if (strcmp(fake_formats[i].term, term) == 0)
			return pmu_format_parse(fake_formats[i].format, f) ?
			       -EBADMSG : 0;
	return -ENOENT;
}

static int
encode(const char *text, uint64_t *words, char *err, size_t errlen)
{
	struct pmu_terms t;

	err[0] = '\0';
	if (pmu_terms_parse(text, &t) < 0)
		return -1000;
	return pmu_terms_encode(&t, fake_lookup, NULL, words, err, errlen);
}

static void
test_encode(void)
{
	uint64_t w[PMU_N_WORDS];
	char err[200];

	check_eq_i64(encode("event=0xcd,umask=0x1,ldlat=30", w, err,
			    sizeof(err)), 0);
	check_eq_u64(w[0], 0x1cd);
	check_eq_u64(w[1], 0x1e);
	check_eq_i64(encode("event=0xcd,umask=0x2", w, err, sizeof(err)), 0);
	check_eq_u64(w[0], 0x2cd);		/* SPR mem-stores */
	check_eq_i64(encode("event=0xd0,umask=0x5,ldlat=3", w, err,
			    sizeof(err)), 0);
	check_eq_u64(w[0], 0x5d0);		/* cpu_atom mem-loads */
	check_eq_u64(w[1], 3);
	check_eq_i64(encode("amd_event=0x1d0,umask=0x2", w, err, sizeof(err)),
		     0);
	check_eq_u64(w[0], UINT64_C(0x1000002d0));
	check_eq_i64(encode("cnt_ctl=1,swfilt=1", w, err, sizeof(err)), 0);
	check_eq_u64(w[0], 0x80000);
	check_eq_u64(w[2], 1);
	check_eq_i64(encode("retprobe=1,ref_ctr_offset=0x10", w, err,
			    sizeof(err)), 0);
	check_eq_u64(w[0], UINT64_C(0x1000000001));
	/* built-in words when no format file has the name */
	check_eq_i64(encode("config=0x1234,config2=7", w, err, sizeof(err)),
		     0);
	check_eq_u64(w[0], 0x1234);
	check_eq_u64(w[2], 7);

	check_eq_i64(encode("event=0xcd,umask=?", w, err, sizeof(err)),
		     -EINVAL);
	check(strstr(err, "term 'umask' has no value") != NULL);
	check_eq_i64(encode("event=0xcd,nosuch=1", w, err, sizeof(err)),
		     -EINVAL);
	check(strstr(err, "term 'nosuch' has no format file") != NULL);
	check_eq_i64(encode("ldlat=65536", w, err, sizeof(err)), -ERANGE);
	check(strstr(err, "value too big for format (16 bits)") != NULL);
	check_eq_i64(encode("broken=1", w, err, sizeof(err)), -EBADMSG);
	check(err[0] != '\0');
}

/* The sysfs readers on the recorded trees. */
static bool
use_tree(const char *machine)
{
	const char *srcdir = getenv("MEMTOP_SRCDIR");
	char root[1024];

	if (!srcdir)
		return false;
	snprintf(root, sizeof(root), "%s/tests/fixtures/sysfs-pmu/%s", srcdir, machine);
	setenv("MEMTOP_SYSFS_ROOT", root, 1);
	return true;
}

static void
test_sysfs(void)
{
	struct pmu_terms ov = { .n = 0 };
	struct perf_event_attr attr;
	char names[8][PMU_NAME_MAX], err[256], buf[64];
	uint32_t type = 0;
	int n;

	if (!use_tree("vm-no-pmu")) {
		fprintf(stderr, "MEMTOP_SRCDIR unset: sysfs part skipped\n");
		return;
	}
	check(!pmu_sysfs_is_real());
	check_eq_i64(pmu_read_type("msr", &type), 0);
	check_eq_u64(type, 9);
	check_eq_i64(pmu_read_type("uprobe", &type), 0);
	check_eq_u64(type, 8);
	check(!pmu_exists("cpu"));
	check_eq_i64(pmu_read_type("cpu", &type), -ENOENT);
	check_eq_i64(pmu_read_type("../x", &type), -EINVAL);
	n = pmu_list(NULL, "", names, 8);
	check_eq_i64(n, 5);
	if (n == 5) {
		check_eq_str(names[0], "breakpoint");
		check_eq_str(names[4], "uprobe");
	}
	memset(&attr, 0xff, sizeof(attr));
	check_eq_i64(pmu_encode("msr", "tsc", NULL, &attr, err, sizeof(err)),
		     0);
	check_eq_u64(attr.type, 9);
	check_eq_u64(attr.config, 0);
	check_eq_u64(attr.config1, 0);
	pmu_terms_set(&ov, "retprobe", 1);
	pmu_terms_set(&ov, "ref_ctr_offset", 0x20);
	check_eq_i64(pmu_encode("uprobe", NULL, &ov, &attr, err, sizeof(err)),
		     0);
	check_eq_u64(attr.type, 8);
	check_eq_u64(attr.config, UINT64_C(0x2000000001));
	check_eq_i64(pmu_encode("msr", "nosuch", NULL, &attr, err,
				sizeof(err)), -ENOENT);
	check(strstr(err, "msr/events/nosuch") != NULL);

	use_tree("sapphire-rapids");
	check_eq_i64(pmu_max_precise("cpu"), 3);
	check_eq_i64(pmu_max_precise("msr"), -1);
	check(pmu_has_event("cpu", "mem-loads-aux"));
	check(!pmu_has_event("cpu", "mem-loads-aux2"));
	check(pmu_read_file("cpu", "caps/pmu_name", buf, sizeof(buf)) > 0);
	check_eq_str(buf, "sapphire_rapids");
	ov.n = 0;
	pmu_terms_set(&ov, "ldlat", 30);
	check_eq_i64(pmu_encode("cpu", "mem-loads", &ov, &attr, err,
				sizeof(err)), 0);
	check_eq_u64(attr.type, 4);
	check_eq_u64(attr.config, 0x1cd);
	check_eq_u64(attr.config1, 30);

	use_tree("alderlake-hybrid");
	n = pmu_list("cpu", "cpu_", names, 8);
	check_eq_i64(n, 2);
	if (n == 2) {
		check_eq_str(names[0], "cpu_atom");
		check_eq_str(names[1], "cpu_core");
	}
	use_tree("zen4");
	check(pmu_has_format("ibs_op", "swfilt"));
	check_eq_i64(pmu_encode("cpu", "cpu-cycles", NULL, &attr, err,
				sizeof(err)), 0);
	check_eq_u64(attr.config, 0x76);
	use_tree("zen3");
	check(!pmu_has_format("ibs_op", "swfilt"));
	unsetenv("MEMTOP_SYSFS_ROOT");
	check(pmu_sysfs_is_real());
}

int
main(void)
{
	test_format_parse();
	test_format_pack();
	test_terms();
	test_encode();
	test_sysfs();
	return test_result();
}
