#!/bin/bash
# Names after exec(2) on the live `faults` source: tests/names/exec-test
# maps before.bin at a fixed address and faults some of it, then exec's
# itself (same pid, new address space) and maps after.bin inside where
# before.bin was.  Pages of after.bin must never be named after before.bin
# (the old image's region), and the last frame names each of them
# after.bin+0xOFF.  memtop drops a pid's names on its COMM record with
# PERF_RECORD_MISC_COMM_EXEC; without that the old region names the new
# pages until the next periodic re-read of /proc/PID/maps.
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python
: "${MEMTOP_EXEC_TEST:=$MEMTOP_BUILDDIR/tests/names/exec-test}"
[ -x "$MEMTOP_EXEC_TEST" ] || skip "exec-test not built ($MEMTOP_EXEC_TEST)"

"$MEMTOP" -b --json -e faults -d 0.2 -s total -k 500 -o "$TMP/exec.jsonl" \
	-- "$MEMTOP_EXEC_TEST" --dir "$TMP" --report "$TMP/report.json" \
	--linger-ms 2000
status=$?
[ "$status" -eq 0 ] || fail "memtop exited $status"
[ -s "$TMP/report.json" ] || fail "exec-test wrote no report"
python3 "$FRAMETOOL" check "$TMP/exec.jsonl" || fail "frame invariants"

python3 - "$TMP/exec.jsonl" "$TMP/report.json" <<'PY' || fail "names after exec"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
rep = json.load(open(sys.argv[2]))
lo = int(rep["addr"], 16)
hi = lo + rep["pages"] * 4096
def ours(f):
    return [p for p in f["pages"] if p["pid"] == rep["pid"]
            and lo <= int(p["addr"], 16) < hi]
seen = 0
for i, f in enumerate(frames):
    for p in ours(f):
        seen += 1
        r = p["region"] or ""
        assert not r.startswith(rep["before"]), \
            f"frame {i}: page {p['addr']} named {r!r}, the old image's region"
        assert r == "" or r.startswith(rep["after"] + "+0x"), \
            f"frame {i}: page {p['addr']} named {r!r}"
final = ours(frames[-1])
assert len(final) == rep["pages"], f"final frame: {len(final)} of {rep['pages']} pages"
for p in final:
    want = f"{rep['after']}+0x{int(p['addr'], 16) - lo:x}"
    assert p["region"] == want, f"final: page {p['addr']}: {p['region']!r}, want {want!r}"
print(f"ok: {seen} page listings after exec, none named after the old image; "
      f"final frame names all {len(final)} after.bin pages")
PY
finish
