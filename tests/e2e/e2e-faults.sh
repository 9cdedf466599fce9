#!/bin/bash
# End to end on the live `faults` source: memtop launches the workload in
# refault mode and the final frame's per-page totals must equal the number
# of faults the workload made on each hot page, hot pages ranked first.
# The same workload under `perf record -e page-faults -d` must agree.
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python

ROUNDS=7
HOT=32

# run_variant NAME [ENV...]: memtop launches the workload; checks the frames.
# Variant "tracepoint" needs exceptions:page_fault_user (root + tracefs) and
# must see every fault as a store (the workload writes); "software" forces
# the software page-fault event, where every fault is "other".
run_variant() {
	local name=$1
	shift
	env "$@" "$MEMTOP" -b --json -e faults -c 1 -d 0.2 -s total -k 200 \
		-o "$TMP/$name.jsonl" -- \
		"$MEMTOP_WORKLOAD" --mode refault --rounds $ROUNDS --hot $HOT \
		--pages 1024 --threads 2 --interval-ms 5 --duration 0 --quiet \
		--print-hot "$TMP/hot.txt" --report "$TMP/$name-report.json"
	local status=$?
	[ "$status" -eq 0 ] || fail "$name: memtop exited $status (workload status expected: 0)"
	python3 "$FRAMETOOL" check "$TMP/$name.jsonl" || fail "$name: frame invariants"
	python3 - "$TMP/$name.jsonl" "$TMP/$name-report.json" "$ROUNDS" "$HOT" "$name" <<'PY' || fail "$name: per-page totals"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
report = json.load(open(sys.argv[2]))
rounds, hot, variant = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
final = frames[-1]
assert final["final"], "last frame not final"
pages = {int(p["addr"], 16): p for p in final["pages"]}
expected = {int(h["addr"], 16): h["faults"] for h in report["hot"]}
assert len(expected) == hot, f"report lists {len(expected)} hot pages"
bad = 0
for addr, n in expected.items():
    assert n == rounds, f"workload itself reports {n} faults on {addr:#x}"
    got = pages.get(addr, {}).get("total", 0)
    if got != n:
        print(f"page {addr:#x}: memtop {got}, workload {n}")
        bad += 1
assert bad == 0, f"{bad} hot pages disagree"
# The hot set is ranked first: pages come sorted by total, and a page that
# is not hot ranks above a hot page only with at least as many faults
# (a sanitizer build's allocator pages can); at most two such pages.
totals = [p["total"] for p in final["pages"]]
assert totals == sorted(totals, reverse=True), "pages not sorted by total"
last_hot = max(i for i, p in enumerate(final["pages"]) if int(p["addr"], 16) in expected)
intruders = [p for p in final["pages"][:last_hot] if int(p["addr"], 16) not in expected]
assert all(p["total"] >= rounds for p in intruders), intruders
assert len(intruders) <= 2, f"hot pages not ranked first: {intruders}"
# Threads of the launched command are caught from birth (inherit mode).
assert final["follow"]["mode"] == "inherit", final["follow"]
if variant == "tracepoint":
    assert final["has_kinds"] is True
    assert final["events"] == ["exceptions:page_fault_user"], final["events"]
else:
    assert final["has_kinds"] is False
    assert final["events"] == ["page-faults"], final["events"]
# Kinds per page, summed over the run: writes are stores, or "other".
kinds = {}
for f in frames:
    for p in f["pages"]:
        a = int(p["addr"], 16)
        if a in expected:
            k = kinds.setdefault(a, [0, 0, 0])
            k[0] += p["loads"]; k[1] += p["stores"]; k[2] += p["other"]
want = [0, rounds, 0] if variant == "tracepoint" else [0, 0, rounds]
wrong = {hex(a): k for a, k in kinds.items() if k != want}
assert len(kinds) == hot and not wrong, f"loads/stores/other per hot page, want {want}: {wrong}"
cum = final["cumulative"]
assert cum["samples"] >= rounds * hot, cum
assert final["targets"][0]["alive"] is False
print(f"ok: {variant}: {hot} hot pages x {rounds} faults match; cumulative {cum}")
PY
}

why=$(tracepoint_why)
if [ -z "$why" ]; then
	run_variant tracepoint
else
	skip_part_ci "tracepoint variant: $why"
fi
run_variant software MEMTOP_FAULTS_NO_TRACEPOINT=1

# Oracle: perf itself on the same workload.
if perf record -q -e page-faults -c 1 -d -o "$TMP/perf.data" -- \
	"$MEMTOP_WORKLOAD" --mode refault --rounds $ROUNDS --hot $HOT --pages 1024 \
	--threads 1 --interval-ms 5 --duration 0 --quiet \
	--print-hot "$TMP/hot2.txt" >/dev/null 2>"$TMP/perf-record.err"; then
	perf script -i "$TMP/perf.data" -F addr 2>/dev/null >"$TMP/addrs.txt"
	python3 - "$TMP/addrs.txt" "$TMP/hot2.txt" "$ROUNDS" <<'PY' || fail "perf oracle"
import sys, collections
cnt = collections.Counter(int(l.split()[0], 16) >> 12 for l in open(sys.argv[1]) if l.strip())
hot = [int(l, 16) >> 12 for l in open(sys.argv[2]) if l.strip()]
rounds = int(sys.argv[3])
bad = [h for h in hot if cnt[h] != rounds]
assert not bad, f"perf saw other counts on {len(bad)} pages: {[(hex(h<<12), cnt[h]) for h in bad[:5]]}"
print(f"ok: perf record agrees: {len(hot)} pages x {rounds}")
PY
else
	skip_part "perf oracle: perf record -e page-faults -d cannot run here: $(head -n 1 "$TMP/perf-record.err")"
fi
finish
