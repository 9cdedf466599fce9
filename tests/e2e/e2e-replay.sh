#!/bin/bash
# memtop -i against independent views of the same capture:
#  (a) `perf record -e page-faults -d` of the workload (file mode): the
#      final frame's per-page totals equal `perf script -F addr` counted
#      per 4 KiB page, page for page; the same for pipe mode (c), a
#      zstd-compressed capture, and the byte-swapped copy (d), which perf
#      itself must also read the same;
#  (f) a synthetic 4-node capture (perfdata-tool gen) shows 4 nodes, every
#      page on its node (PHYS_ADDR + MEM_TOPOLOGY) with its exact totals.
# The perf parts are skipped (a "# SKIP" line) when perf cannot record
# here; the synthetic part always runs.
. "$(dirname "$0")/../lib/lib.sh"
need_python
: "${MEMTOP_PERFDATA_TOOL:=$MEMTOP_BUILDDIR/tests/perfdata-tool}"
TOOL=$MEMTOP_PERFDATA_TOOL
CHECK="$MEMTOP_SRCDIR/tests/lib/perfdata-check.py"
[ -x "$TOOL" ] || skip "perfdata-tool not built ($TOOL)"

# replay NAME FILE: memtop -i FILE, frames checked, per-page totals vs
# perf script's addresses of FILE.
replay_vs_perf() {
	local name=$1 file=$2
	"$MEMTOP" -i "$file" -b --json -s total -k 100000 >"$TMP/$name.jsonl" \
		2>"$TMP/$name.err"
	local status=$?
	[ $status -eq 0 ] || { fail "$name: memtop -i exited $status: $(cat "$TMP/$name.err")"; return; }
	python3 "$FRAMETOOL" check "$TMP/$name.jsonl" >/dev/null || fail "$name: frame invariants"
	perf script -i "$file" -F addr >"$TMP/$name.addrs" 2>"$TMP/$name.perr" ||
		{ fail "$name: perf script failed: $(head -1 "$TMP/$name.perr")"; return; }
	python3 "$CHECK" addrs "$TMP/$name.jsonl" "$TMP/$name.addrs" &&
		ok "$name: memtop -i equals perf script page for page" ||
		fail "$name: per-page totals differ from perf script"
}

WL=("$MEMTOP_WORKLOAD" --mode refault --rounds 5 --hot 16 --threads 1
    --duration 0 --quiet --print-hot "$TMP/hot.txt" --report "$TMP/report.json")

if perf_faults_part "perf oracle parts (a, c, d, zstd)" "$TMP/file.data" \
	"${WL[@]}"; then
	replay_vs_perf file "$TMP/file.data"
	# The workload's own count: every hot page faulted once per round.
	python3 - "$TMP/file.jsonl" "$TMP/report.json" <<'PY' || fail "file: hot pages vs the workload's report"
import json, sys
f = [json.loads(l) for l in open(sys.argv[1])][-1]
hot = {int(h["addr"], 16): h["faults"] for h in json.load(open(sys.argv[2]))["hot"]}
got = {int(p["addr"], 16): p["total"] for p in f["pages"]}
bad = {hex(a): (got.get(a), n) for a, n in hot.items() if got.get(a) != n}
assert not bad, bad
assert f["source"] == "replay" and f["events"] == ["page-faults"], (f["source"], f["events"])
print(f"ok: file: {len(hot)} hot pages x 5 faults, source replay, events {f['events']}")
PY

	# (c) pipe mode, as perf writes it to a pipe.
	perf record -q -e page-faults -c 1 -d -o - -- "${WL[@]}" 2>/dev/null >"$TMP/pipe.data"
	replay_vs_perf pipe "$TMP/pipe.data"
	cat "$TMP/pipe.data" | "$MEMTOP" -i - -b --json -s total -k 100000 >"$TMP/stdin.jsonl" &&
		python3 "$CHECK" frames "$TMP/pipe.jsonl" "$TMP/stdin.jsonl" >/dev/null &&
		ok "pipe: -i - reads standard input" || fail "pipe: -i - differs"

	# zstd-compressed records (perf record -z).
	if perf record -q -z -e page-faults -c 1 -d -o "$TMP/zstd.data" -- "${WL[@]}" \
		>/dev/null 2>&1; then
		replay_vs_perf zstd "$TMP/zstd.data"
		grep -q '"source_note":"[^"]*zstd' "$TMP/zstd.jsonl" || fail "zstd: note does not say zstd"
	else
		skip_part "zstd part: this perf cannot compress (perf record -z fails)"
	fi

	# (d) the other byte order, written by memtop's writer; perf reads
	# it the same, so the swap is checked against perf's own.
	"$TOOL" swap "$TMP/file.data" "$TMP/swapped.data" || fail "swap: conversion failed"
	"$TOOL" dump "$TMP/swapped.data" | grep -qx "swapped 1" || fail "swap: not swapped"
	replay_vs_perf swapped "$TMP/swapped.data"
	python3 "$CHECK" frames "$TMP/file.jsonl" "$TMP/swapped.jsonl" >/dev/null &&
		ok "swapped: same frames as the original" || fail "swapped: frames differ"
fi

# (f) topology from the file's features, not this machine's.
"$TOOL" gen "$TMP/numa4.data" --samples 50000 --nodes 4 --cpus 8 --pages 512 \
	--truth "$TMP/numa4.truth" || fail "gen failed"
"$MEMTOP" -i "$TMP/numa4.data" -b --json -s total -k 100000 -d 0.5 >"$TMP/numa4.jsonl" ||
	fail "numa4: memtop -i failed"
python3 "$FRAMETOOL" check "$TMP/numa4.jsonl" >/dev/null || fail "numa4: frame invariants"
python3 "$CHECK" truth "$TMP/numa4.jsonl" "$TMP/numa4.truth" 4 || fail "numa4: content"
python3 - "$TMP/numa4.jsonl" <<'PY' || fail "numa4: frames per recorded time"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
# 10 s recorded at -d 0.5: 20 interval frames, then the final one.
assert 20 <= len(frames) <= 22, len(frames)
cpus = [c["node"] for c in frames[-1]["cpus"]]
assert cpus == [0, 1, 2, 3, 0, 1, 2, 3], cpus
assert frames[-1]["events"] == ["cpu/mem-loads,ldlat=30/P", "cpu/mem-stores/P"]
# Targets: the sampled processes, named by their COMM records, 2 threads.
want = [{"pid": 1000, "comm": "synth-1000", "threads": 2, "alive": True},
        {"pid": 1001, "comm": "synth-1001", "threads": 2, "alive": True}]
assert frames[0]["targets"] == want, frames[0]["targets"]
assert all(abs(f["interval"] - 0.5) < 1e-6 for f in frames[:-2]), "interval"
print(f"ok: numa4: {len(frames)} frames of 0.5 s recorded time, cpus {cpus}")
PY
# The same capture in the other byte order gives the same frames.
"$TOOL" gen "$TMP/numa4s.data" --samples 50000 --nodes 4 --cpus 8 --pages 512 --swap
"$MEMTOP" -i "$TMP/numa4s.data" -b --json -s total -k 100000 -d 0.5 >"$TMP/numa4s.jsonl"
python3 "$CHECK" frames "$TMP/numa4.jsonl" "$TMP/numa4s.jsonl" >/dev/null &&
	ok "numa4 swapped: same frames" || fail "numa4 swapped: frames differ"
# Hostile timestamps: a jump of 11 days and the largest time there is end
# in a bounded number of frames, every sample still counted.
python3 - "$TMP/numa4.data" "$TMP/jump.data" <<'PY' || fail "jump: cannot patch"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
pos, end = 104, 104 + struct.unpack_from("<Q", b, 48)[0]
samples = []
while pos < end:
    typ, size = struct.unpack_from("<I", b, pos)[0], struct.unpack_from("<H", b, pos + 6)[0]
    if typ == 9:
        samples.append(pos)
    pos += size
t = struct.unpack_from("<Q", b, samples[100] + 32)[0]
struct.pack_into("<Q", b, samples[100] + 32, t + 10**15)
struct.pack_into("<Q", b, samples[-1] + 32, 2**64 - 1)
open(sys.argv[2], "wb").write(b)
PY
timeout 60 "$MEMTOP" -i "$TMP/jump.data" -b --json -k 1 -d 0.5 >"$TMP/jump.jsonl"
status=$?
frames=$(wc -l <"$TMP/jump.jsonl")
[ $status -eq 0 ] && [ "$frames" -lt 400 ] &&
	[ "$(python3 "$FRAMETOOL" get "$TMP/jump.jsonl" 'f["cumulative"]["samples"]')" = 50000 ] &&
	ok "jump: exit 0, $frames frames, 50000 samples" ||
	fail "jump: exit $status, $frames frames"

# -n stops a replay early, with exactly that many frames.
n=$("$MEMTOP" -i "$TMP/numa4.data" -b --json -n 3 -d 0.5 | wc -l)
[ "$n" -eq 3 ] && ok "-n 3: 3 frames" || fail "-n 3: $n frames"
finish
