#!/bin/bash
# A followed child's comm after its exec (issue 13): `perf stat -- PROG`
# forks a child named perf-exec that execs PROG, and `sh -c 'PROG & wait'`
# a child that execs at once.  The child's targets[].comm must be PROG's
# name (names-test) in the last frame, whichever came first, its exec or
# memtop's channel for it.  Oracle: the program's own pid (its report).
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python
: "${MEMTOP_NAMES_TEST:=$MEMTOP_BUILDDIR/tests/names/names-test}"
[ -x "$MEMTOP_NAMES_TEST" ] || skip "names-test not built ($MEMTOP_NAMES_TEST)"

# check NAME: the child's comm in the last frame that lists it
check() {
	python3 - "$TMP/$1.jsonl" "$TMP/$1-report.json" "$1" <<'PY' || fail "$1: comm after exec"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
pid = json.load(open(sys.argv[2]))["pid"]
seen = [t for f in frames for t in f["targets"] if t["pid"] == pid]
assert seen, f"pid {pid} never a target"
assert seen[-1]["comm"] == "names-test", f"comm {seen[-1]['comm']!r}"
print(f"ok: {sys.argv[3]}: the child is names-test ({len(seen)} frames)")
PY
}

if command -v perf >/dev/null; then
	"$MEMTOP" -b --json -e faults -d 0.3 -o "$TMP/stat.jsonl" -- \
		perf stat -e page-faults -- "$MEMTOP_NAMES_TEST" \
		--report "$TMP/stat-report.json" --file "$TMP/stat.bin" \
		--linger-ms 1500 --no-stack >/dev/null 2>&1 ||
		fail "perf stat: memtop exited $?"
	check stat
else
	skip_part "perf not installed: the perf stat case"
fi
"$MEMTOP" -b --json -e faults -d 0.3 -o "$TMP/sh.jsonl" -- sh -c \
	'"$0" --report "$1" --file "$2" --linger-ms 1500 --no-stack & wait' \
	"$MEMTOP_NAMES_TEST" "$TMP/sh-report.json" "$TMP/sh.bin" ||
	fail "sh: memtop exited $?"
check sh
finish
