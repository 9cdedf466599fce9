#!/bin/bash
# Event selection against recorded sysfs trees of other machines
# (tests/fixtures/sysfs-pmu/<machine>, see tests/fixtures/README-sysfs-pmu.md):
# `memtop --dry-run --json -e pebs|ibs|auto` under MEMTOP_SYSFS_ROOT must
# give exactly the attrs in expected-<source>.json (written by hand from
# the kernel's event strings), or fail with one line on stderr containing
# expected-<source>.err and exit 1.  Each tree is judged as the kernel
# release in its kernel-release file.  Also: --list-events statuses,
# --ldlat and -c on fixtures, the CPUs of each hybrid PMU under -a and -C, the IBS kernel-version gates, and this
# machine's own answers.
. "$(dirname "$0")/../lib/lib.sh"
need_python

FIX="$MEMTOP_SRCDIR/tests/fixtures/sysfs-pmu"
COMPARE="$MEMTOP_SRCDIR/tests/e2e/dryrun-compare.py"
# Deterministic faults variant (the tracepoint one depends on privileges).
export MEMTOP_FAULTS_NO_TRACEPOINT=1

# run_tree MACHINE [RELEASE] -- ARGS: memtop under that tree; out/err/rc.
run_tree() {
	local m=$1 rel
	rel=$(cat "$FIX/$m/kernel-release")
	shift
	if [ "$1" != -- ]; then rel=$1; shift; fi
	shift
	MEMTOP_SYSFS_ROOT="$FIX/$m" MEMTOP_KERNEL_RELEASE="$rel" \
		timeout 10 "$MEMTOP" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
	rc=$?
}

# expect_fail WHAT PATTERN: rc 1, one stderr line containing PATTERN.
expect_fail() {
	local lines
	lines=$(wc -l <"$TMP/err")
	if [ "$rc" -ne 1 ] || [ "$lines" -ne 1 ] ||
	   ! grep -qF -- "$2" "$TMP/err"; then
		fail "$1: rc $rc, stderr ($lines lines): $(head -c 300 "$TMP/err"), want '$2'"
	else
		ok "$1: $(cat "$TMP/err")"
	fi
}

# expect_json WHAT EXPECTED.json
expect_json() {
	local diff
	if [ "$rc" -ne 0 ]; then
		fail "$1: rc $rc: $(head -c 300 "$TMP/err")"
	elif ! diff=$(python3 "$COMPARE" "$2" "$TMP/out"); then
		fail "$1: $diff"
	else
		ok "$1"
	fi
}

machines=0
for dir in "$FIX"/*/; do
	m=$(basename "$dir")
	machines=$((machines + 1))
	for src in pebs ibs auto; do
		run_tree "$m" -- --dry-run --json -e "$src"
		if [ -f "$dir/expected-$src.json" ]; then
			expect_json "$m -e $src" "$dir/expected-$src.json"
		elif [ -f "$dir/expected-$src.err" ]; then
			expect_fail "$m -e $src" "$(cat "$dir/expected-$src.err")"
		else
			fail "$m: no expected-$src.json or .err"
		fi
	done
done
[ "$machines" -ge 8 ] || fail "only $machines fixture trees"

# --- -c and --ldlat shape the attrs --------------------------------------
field() { # field EVENT_INDEX KEY: from $TMP/out
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"][int(sys.argv[2])][sys.argv[3]])' \
		"$TMP/out" "$1" "$2"
}
check_field() { # WHAT INDEX KEY WANT
	local got
	got=$(field "$2" "$3" 2>&1)
	if [ "$rc" -eq 0 ] && [ "$got" = "$4" ]; then ok "$1: $3 = $got"
	else fail "$1: rc $rc, $3 = '$got', want '$4' ($(head -c 200 "$TMP/err"))"; fi
}
run_tree sapphire-rapids -- --dry-run --json -e pebs --ldlat 50
check_field "spr --ldlat 50" 1 config1 0x32
run_tree alderlake-hybrid -- --dry-run --json -e pebs --ldlat 65535
check_field "adl --ldlat 65535 on cpu_atom" 3 config1 0xffff
run_tree sapphire-rapids -- --dry-run --json -e pebs -c 100
check_field "spr -c 100 is not rounded" 1 sample_period 100
run_tree zen4 -- --dry-run --json -e ibs -c 100
check_field "zen4 -c 100 rounded up to 0x90" 0 sample_period 144
grep -q 'period 100 adjusted to 144' "$TMP/out" &&
	ok "the note says the period was adjusted" ||
	fail "no adjustment note: $(cat "$TMP/out")"
run_tree zen3 -- --dry-run --json -e ibs -c 0x10009
check_field "zen3 -c 0x10009 rounded down" 0 sample_period 65536
run_tree zen3 -- --dry-run --json -e ibs -c 0x10000
check_field "zen3 -c 0x10000 kept" 0 sample_period 65536
grep -q adjusted "$TMP/out" && fail "note claims an adjustment" ||
	ok "no adjustment note for a valid period"

# --- hybrid parts under -a / -C: each PMU's events on its own CPUs --------
# The tree's cpu_core/cpus and cpu_atom/cpus are an i9-12900K's (0-15 and
# 16-23); a per-CPU channel opens an event only where its PMU counts.
cpus_of() { # "name=cpus ..." of $TMP/out, in order
	python3 -c 'import json,sys; print(" ".join(e["name"] + "=" + e.get("cpus", "?") for e in json.load(open(sys.argv[1]))["events"]))' "$TMP/out"
}
expect_cpus() { # WHAT WANT
	local got
	got=$(cpus_of 2>&1)
	if [ "$rc" -eq 0 ] && [ "$got" = "$2" ]; then ok "$1: $got"
	else fail "$1: rc $rc, got '$got', want '$2' ($(head -c 200 "$TMP/err"))"; fi
}
run_tree alderlake-hybrid -- --dry-run --json -a -e pebs
expect_cpus "adl -a" "cpu_core/mem-loads-aux=0-15 cpu_core/mem-loads=0-15 cpu_core/mem-stores=0-15 cpu_atom/mem-loads=16-23 cpu_atom/mem-stores=16-23"
run_tree alderlake-hybrid -- --dry-run --json -a -C 0-3 -e pebs
expect_cpus "adl -a -C 0-3: P-cores only" "cpu_core/mem-loads-aux=0-3 cpu_core/mem-loads=0-3 cpu_core/mem-stores=0-3"
run_tree alderlake-hybrid -- --dry-run --json -a -C 14-17 -e pebs
expect_cpus "adl -a -C 14-17: both" "cpu_core/mem-loads-aux=14-15 cpu_core/mem-loads=14-15 cpu_core/mem-stores=14-15 cpu_atom/mem-loads=16-17 cpu_atom/mem-stores=16-17"
run_tree alderlake-hybrid -- --dry-run --json -a -C 30 -e pebs
expect_fail "adl -a -C 30" "no event of pebs counts on these CPUs"
run_tree sapphire-rapids -- --dry-run --json -a -C 2 -e pebs
expect_cpus "spr -a -C 2 (one core PMU, no cpus file)" "mem-loads-aux=2 mem-loads=2 mem-stores=2"
run_tree alderlake-hybrid -- --dry-run -a -e pebs
grep -q '^  cpus=16-23$' "$TMP/out" && ok "text output lists the CPUs" ||
	fail "no cpus line in the text: $(head -c 300 "$TMP/out")"

# --- kernel-version gates -------------------------------------------------
run_tree zen3 6.0.19 -- --dry-run --json -e ibs
expect_fail "zen3 on 6.0" "IBS samples carry data addresses from 6.1 on"
run_tree zen3 6.1.0-18-amd64 -- --dry-run --json -e ibs
expect_fail "zen3 on 6.1" "per-thread IBS events need 6.2"
run_tree zen3 6.1.0 -- --dry-run --json -e auto
check_field "zen3 on 6.1: auto falls back to faults" 0 name page-faults
grep -q 'ibs: not supported by this CPU/kernel (kernel 6.1.0' "$TMP/out" &&
	ok "auto note says why ibs was not used" ||
	fail "auto note lacks the ibs reason: $(cat "$TMP/out")"
run_tree icelake-sp 5.11.0 -- --dry-run --json -e pebs
check_field "icelake on 5.11 uses WEIGHT" 0 sample_type \
	"['IP', 'TID', 'ADDR', 'CPU', 'PERIOD', 'WEIGHT', 'DATA_SRC', 'IDENTIFIER']"

# --- --list-events from trees ---------------------------------------------
list_has() { # WHAT PATTERN (extended regex, one line of the listing)
	if grep -Eq -- "$2" "$TMP/out"; then ok "$1"
	else fail "$1: /$2/ not in: $(cat "$TMP/out")"; fi
}
run_tree sapphire-rapids -- --list-events
list_has "spr lists pebs" '^pebs +would open: cpu/mem-loads-aux \(type 4\), cpu/mem-loads \(type 4\), cpu/mem-stores \(type 4\)'
list_has "spr lists ibs" '^ibs +not supported by this CPU/kernel \(no ibs_op PMU'
list_has "spr lists faults" '^faults +works: software/page-faults'
run_tree neoverse-n1-spe -- --list-events
list_has "arm lists spe" '^spe +not supported yet \(arm_spe_0 is present, but Arm SPE delivers samples as AUX-area packets'
run_tree zen3 -- --list-events
list_has "zen3 lists ibs" '^ibs +would open: ibs_op/ibs_op \(type 11\).*needs CAP_PERFMON or perf_event_paranoid <= 1'
run_tree zen4 -- --list-events
list_has "zen4 lists ibs" '^ibs +would open: ibs_op/ibs_op \(type 11\)'
grep -q CAP_PERFMON "$TMP/out" && fail "zen4 (swfilt) should need no privilege" ||
	ok "zen4 with swfilt needs no privilege"

# --- bad trees: one line, no crash ----------------------------------------
BAD="$TMP/bad/sys/bus/event_source/devices"
mkdir -p "$BAD/cpu/format" "$BAD/cpu/events"
echo 4 >"$BAD/cpu/type"
echo 'config:0-7' >"$BAD/cpu/format/event"
echo 'config:8-15' >"$BAD/cpu/format/umask"
echo 'event=0xcd,umask=0x1,ldlat=3' >"$BAD/cpu/events/mem-loads"
MEMTOP_SYSFS_ROOT="$TMP/bad" timeout 10 "$MEMTOP" --dry-run -e pebs \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
expect_fail "mem-loads without a ldlat format" "term 'ldlat' has no format file"
echo 'config1:0-3' >"$BAD/cpu/format/ldlat"
MEMTOP_SYSFS_ROOT="$TMP/bad" timeout 10 "$MEMTOP" --dry-run -e pebs \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
expect_fail "ldlat 30 in a 4-bit field" "ldlat=30: value too big for format (4 bits)"
echo 'event=0xcd,umask=?' >"$BAD/cpu/events/mem-loads"
MEMTOP_SYSFS_ROOT="$TMP/bad" timeout 10 "$MEMTOP" --dry-run -e pebs \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
expect_fail "a required term" "term 'umask' has no value"
echo 'event=0xcd,,umask' >"$BAD/cpu/events/mem-loads"
MEMTOP_SYSFS_ROOT="$TMP/bad" timeout 10 "$MEMTOP" --dry-run -e pebs \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
expect_fail "junk event string" "cannot parse"

# --- this machine ---------------------------------------------------------
unset MEMTOP_SYSFS_ROOT MEMTOP_KERNEL_RELEASE
if [ -e /sys/bus/event_source/devices/cpu ] ||
   [ -e /sys/bus/event_source/devices/ibs_op ]; then
	skip_part "no-PMU checks on this machine: it has a hardware PMU (the fixtures above cover it)"
else
	timeout 10 "$MEMTOP" --list-events >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 0 ] && ok "--list-events exits 0 here" ||
		fail "--list-events: rc $rc"
	list_has "pebs unavailable here" '^pebs +not supported by this CPU/kernel \(no Intel core PMU'
	list_has "ibs unavailable here" '^ibs +not supported by this CPU/kernel \(no ibs_op PMU'
	list_has "spe unavailable here" '^spe +not supported by this CPU/kernel \(no arm_spe'
	list_has "faults works here" '^faults +works: '
	timeout 10 "$MEMTOP" --dry-run --json >"$TMP/out" 2>"$TMP/err"
	rc=$?
	check_field "auto picks faults here" 0 name page-faults
	timeout 10 "$MEMTOP" -b -n 1 -e pebs -- true >"$TMP/out" 2>"$TMP/err"
	rc=$?
	expect_fail "-e pebs here" "pebs: not supported by this CPU/kernel"
	timeout 10 "$MEMTOP" -b -n 1 -e ibs -- true >"$TMP/out" 2>"$TMP/err"
	rc=$?
	expect_fail "-e ibs here" "ibs: not supported by this CPU/kernel"
fi
finish
