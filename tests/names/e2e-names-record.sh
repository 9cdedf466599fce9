#!/bin/bash
# What `memtop --record` writes names memory for perf as memtop names it
# (issue 13): MMAP2 (with build ids), COMM and task records, BUILD_ID,
# DATA_SRC and the user-mode data address, so that perf report
# --mem-mode --sort=dso_daddr,symbol_daddr and perf script, reading
# memtop's file with their own code, agree with memtop's frames:
#   - per page: perf script -F pid,addr lists exactly the samples memtop
#     counted on each page of names-test (every fault sampled, -c 1);
#   - per name: the pages names-test reports with a data symbol have that
#     symbol in perf's report, in the same file, with the page's count;
#     its file mappings (shared, private, and one unmapped at once) are
#     perf's dso for their pages.
# perf itself calls .bss and the heap "anon": those are checked against
# names-test's own report only (names-check.py).  Then -p of a running
# names-test: the records synthesized at attach name its memory too.
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python
PERF=$(command -v perf) || skip "perf not installed (the oracle is perf)"
: "${MEMTOP_NAMES_TEST:=$MEMTOP_BUILDDIR/tests/names/names-test}"
CHECK="$MEMTOP_SRCDIR/tests/names/names-check.py"
[ -x "$MEMTOP_NAMES_TEST" ] || skip "names-test not built ($MEMTOP_NAMES_TEST)"
export HOME="$TMP/home"	# perf's build-id cache: the test's own
mkdir -p "$HOME"

# agree NAME PID: perf's view of $TMP/NAME.data against $TMP/NAME.jsonl
agree() {
	local name=$1 pid=$2
	# event: the allocation events' samples (issue 18) are told apart.
	"$PERF" script -i "$TMP/$name.data" -F pid,event,addr >"$TMP/$name.addr" \
		2>"$TMP/$name.perr" ||
		{ fail "$name: perf script: $(head -2 "$TMP/$name.perr")"; return; }
	"$PERF" report -i "$TMP/$name.data" --mem-mode -n --stdio \
		--sort=dso_daddr,symbol_daddr --percent-limit 0 \
		>"$TMP/$name.rep" 2>"$TMP/$name.perr" ||
		{ fail "$name: perf report --mem-mode: $(head -2 "$TMP/$name.perr")"; return; }
	python3 - "$TMP/$name.addr" "$TMP/$name.rep" "$TMP/$name.jsonl" \
		"$TMP/$name-report.json" "$pid" <<'PY' || fail "$name: perf and memtop disagree"
import json, os, sys
from collections import Counter
addr_file, rep_file, frames_file, report_file, pid = sys.argv[1:6]
pid = int(pid)
frames = [json.loads(l) for l in open(frames_file)]
final = frames[-1]
report = json.load(open(report_file))
perf = Counter()
for line in open(addr_file):
    f = line.split()
    if len(f) == 3 and 'sys_exit' not in f[1] and int(f[0]) == pid:
        perf[int(f[2], 16) & ~0xfff] += 1
rows = Counter()
for line in open(rep_file):
    f = line.split()
    if len(f) >= 5 and f[0].endswith("%") and f[3] == "[.]":
        rows[(f[2], f[4])] += int(f[1])
pages = {int(p["addr"], 16): p for p in final["pages"] if p["pid"] == pid}
bad = []
if final["cumulative"]["lost"]:
    print(f"# SKIP per-page counts: {final['cumulative']['lost']} samples lost")
else:
    for a in set(perf) | set(pages):
        got = pages[a]["total"] if a in pages else 0
        if perf[a] != got:
            bad.append(f"page {a:#x}: perf lists {perf[a]}, memtop counted {got}")
def base(region):
    return os.path.basename(region.split(" [bss]")[0].rsplit("+0x", 1)[0])
for w in report["pages"]:
    p = pages.get(int(w["addr"], 16))
    if p is None:
        bad.append(f"{w['what']}: page {w['addr']} not in memtop's frame")
        continue
    if w["what"] in ("exe-data", "lib-data"):
        key = (base(p["region"]), p["symbol"])
        if rows[key] != p["total"]:
            bad.append(f"{w['what']}: perf's {key} has {rows[key]} samples, memtop's page {p['total']}")
    elif w["what"] in ("file", "private", "gone"):
        dsos = {d for (d, s) in rows if s == "0x%016x" % int(w["addr"], 16)}
        if dsos != {base(p["region"])}:
            bad.append(f"{w['what']}: perf's dso {dsos}, memtop's region {p['region']}")
for b in bad:
    print("mismatch:", b)
print(f"ok: {len(pages)} pages agree with perf script; names agree with perf report")
sys.exit(1 if bad else 0)
PY
}

"$MEMTOP" -e faults -c 1 --record "$TMP/short.data" -b --json -s total \
	-k 100000 -d 0.5 -o "$TMP/short.jsonl" -- "$MEMTOP_NAMES_TEST" \
	--report "$TMP/short-report.json" --file "$TMP/short-data.bin" \
	--linger-ms 0 --no-stack || fail "memtop --record exited $?"
# The BUILD_ID feature is there (bit 2 of the header's feature bitmap,
# at byte 72 of perf_file_header), and perf lists names-test's build id
# as readelf reads it from the file.
python3 - "$TMP/short.data" <<'PY' || fail "no BUILD_ID feature in memtop's file"
import sys
head = open(sys.argv[1], "rb").read(104)
assert head[:8] == b"PERFILE2" and head[72] & 4, "feature bit 2 (BUILD_ID) not set"
PY
want=$(readelf -n "$MEMTOP_NAMES_TEST" | sed -n 's/.*Build ID: //p')
"$PERF" buildid-list -i "$TMP/short.data" 2>/dev/null |
	grep -q "^$want $MEMTOP_NAMES_TEST\$" ||
	fail "perf buildid-list: no $want for names-test"
python3 "$CHECK" "$TMP/short.jsonl" "$TMP/short-report.json" || fail "short: names"
agree short "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$TMP/short-report.json")"

# -p: memory mapped before the attach is named from synthesized records.
"$MEMTOP_NAMES_TEST" --report "$TMP/attach-report.json" \
	--file "$TMP/attach-data.bin" --linger-ms 3000 --no-stack &
tpid=$!
sleep 0.5
"$MEMTOP" -e faults -c 1 --record "$TMP/attach.data" -b --json -s total \
	-k 100000 -d 0.5 -n 2 -o "$TMP/attach.jsonl" -p "$tpid" ||
	fail "memtop -p --record exited $?"
kill_own "$tpid"
"$PERF" script -i "$TMP/attach.data" --show-mmap-events 2>/dev/null |
	grep -q "PERF_RECORD_MMAP2 $tpid/$tpid: .*$MEMTOP_NAMES_TEST" ||
	fail "attach: no MMAP2 of names-test synthesized"
"$PERF" script -i "$TMP/attach.data" --show-task-events 2>/dev/null |
	grep -q "PERF_RECORD_COMM: names-test:$tpid/$tpid" ||
	fail "attach: no COMM of names-test synthesized"
finish
