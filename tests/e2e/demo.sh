#!/bin/bash
# memtop --demo watches the bundled workload: frames carry samples from the
# demo's threads, its skewed hot set is ranked (the hottest page clearly
# above the 10th), and the workload does not outlive memtop.
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python

# Unset: memtop must find the workload beside itself, as a user runs it.
timeout 30 env -u MEMTOP_WORKLOAD "$MEMTOP" --demo -b --json -n 4 -d 0.5 -s total -k 20 >"$TMP/frames.jsonl"
status=$?
[ "$status" -eq 0 ] || fail "memtop --demo -b -n 4 exited $status"
[ "$(wc -l <"$TMP/frames.jsonl")" -eq 4 ] || fail "want 4 frames, got $(wc -l <"$TMP/frames.jsonl")"
python3 - "$TMP/frames.jsonl" <<'PY' || fail "demo frames"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
last = frames[-1]
assert last["targets"][0]["comm"] == "memtop-workload", last["targets"]
assert sum(f["totals"]["samples"] for f in frames) > 100, "too few samples"
pages = last["pages"]
assert len(pages) >= 10, len(pages)
assert pages[0]["total"] >= 2 * pages[9]["total"], \
    f"no skew: top {pages[0]['total']} vs 10th {pages[9]['total']}"
print(f"ok: demo: {sum(f['totals']['samples'] for f in frames)} samples, "
      f"top page {pages[0]['total']} vs 10th {pages[9]['total']}")
PY
sleep 0.2
if pgrep -f "memtop-workload --mode refault --threads 2 --hot 64" >/dev/null; then
	fail "demo workload still running after memtop exited"
	pkill -f "memtop-workload --mode refault --threads 2 --hot 64"
fi
finish
