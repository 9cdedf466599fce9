#!/bin/bash
# Names in replay (issue 13): `perf record -d` of names-test (a process
# that lives a few milliseconds), replayed with memtop -i, names every
# page as the live run does (the oracle is the program's own report,
# names-check.py).  Then the binary is "rebuilt" after the capture (its
# build id changed, nothing else): its memory keeps its regions, gets no
# symbol, and names.mismatched counts the file; with perf's build-id
# cache holding the original (perf buildid-cache -a), the symbols are
# back.  HOME is the test's own, so no build-id cache of the machine is
# read or written.
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python
PERF=$(command -v perf) || skip "perf not installed (the capture is perf's)"
: "${MEMTOP_NAMES_TEST:=$MEMTOP_BUILDDIR/tests/names/names-test}"
: "${MEMTOP_NAMES_LIB:=$MEMTOP_BUILDDIR/tests/names/libnames-lib.so}"
CHECK="$MEMTOP_SRCDIR/tests/names/names-check.py"
[ -x "$MEMTOP_NAMES_TEST" ] || skip "names-test not built ($MEMTOP_NAMES_TEST)"
export HOME="$TMP/home"
mkdir -p "$HOME" "$TMP/bin"
cp "$MEMTOP_NAMES_TEST" "$TMP/bin/names-test" || fail "copy"
cp "$MEMTOP_NAMES_TEST" "$TMP/orig-names-test" || fail "copy"
export LD_LIBRARY_PATH
LD_LIBRARY_PATH=$(dirname "$MEMTOP_NAMES_LIB")

"$PERF" record -q -N -d -e page-faults -c 1 -o "$TMP/cap.data" -- \
	"$TMP/bin/names-test" --report "$TMP/report.json" \
	--file "$TMP/data.bin" --linger-ms 0 --no-stack >/dev/null 2>&1 ||
	skip "perf record cannot run here"
[ -s "$TMP/report.json" ] || fail "names-test wrote no report"
"$PERF" buildid-list -i "$TMP/cap.data" 2>/dev/null |
	grep -q " $TMP/bin/names-test\$" ||
	skip_part "the capture lists no build id for names-test"

replay() {	# replay NAME: frames in $TMP/NAME.jsonl
	"$MEMTOP" -b --json -s total -k 500 -i "$TMP/cap.data" \
		-o "$TMP/$1.jsonl" || fail "$1: memtop -i exited $?"
	python3 "$FRAMETOOL" check "$TMP/$1.jsonl" || fail "$1: frame invariants"
}
mismatched() {
	tail -n 1 "$TMP/$1.jsonl" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["names"]["mismatched"])'
}

replay same
python3 "$CHECK" "$TMP/same.jsonl" "$TMP/report.json" || fail "replay: names"
[ "$(mismatched same)" = 0 ] || fail "replay: names.mismatched $(mismatched same), want 0"

# Rebuilt: one byte of the build id note differs.
python3 - "$TMP/bin/names-test" <<'PY' || fail "cannot change the build id"
import re, subprocess, sys
path = sys.argv[1]
out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
bid = bytes.fromhex(re.search(r"Build ID: ([0-9a-f]+)", out).group(1))
data = bytearray(open(path, "rb").read())
at = data.find(bid)
assert at > 0 and data.find(bid, at + 1) < 0
data[at] ^= 0xFF
open(path, "wb").write(data)
PY
replay rebuilt
python3 - "$TMP/rebuilt.jsonl" "$TMP/report.json" "$TMP/bin/names-test" <<'PY' ||
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
report = json.load(open(sys.argv[2]))
exe = sys.argv[3]
pages = {p["addr"]: p for f in frames for p in f["pages"] if p["pid"] == report["pid"]}
for w in report["pages"]:
    if not w["what"].startswith("exe"):
        continue
    p = pages[w["addr"]]
    assert (p["region"] or "").startswith(exe), p
    assert p["symbol"] is None, f"{w['what']}: symbol {p['symbol']!r} from a rebuilt file"
assert frames[-1]["names"]["mismatched"] >= 1, frames[-1]["names"]
print("ok: rebuilt binary: regions named, no symbol, mismatched",
      frames[-1]["names"]["mismatched"])
PY
	fail "rebuilt: names"

# perf's build-id cache holds the file the capture saw.
"$PERF" buildid-cache -a "$TMP/orig-names-test" >/dev/null 2>&1 ||
	fail "perf buildid-cache -a"
replay cached
python3 "$CHECK" "$TMP/cached.jsonl" "$TMP/report.json" ||
	fail "cached: names from ~/.debug/.build-id"
finish
