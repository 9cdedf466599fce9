#!/bin/bash
# -p on a multi-threaded process: threads running before the attach and
# threads created after it are all sampled, per-thread sums equal the
# totals in every frame, every sample belongs to the target's pid, and the
# late threads' hot pages are counted completely but for what their birth
# gap (FORK record -> channel open) may have missed.
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python

ROUNDS=30
"$MEMTOP_WORKLOAD" --mode refault --threads 2 --late-threads 2 --late-delay 1.2 \
	--rounds $ROUNDS --interval-ms 50 --hot 16 --pages 256 --duration 0 --quiet \
	--print-hot "$TMP/hot.txt" --report "$TMP/report.json" &
wpid=$!
cleanup_hooks+=("kill_own $wpid")
# Let the first two workers run before memtop attaches.
sleep 0.4
timeout 30 "$MEMTOP" -b --json -e faults -d 0.25 -s total -k 300 -p $wpid \
	-o "$TMP/frames.jsonl"
status=$?
wait $wpid
wstatus=$?
[ "$status" -eq 0 ] || fail "memtop exited $status"
[ "$wstatus" -eq 0 ] || fail "workload exited $wstatus"

python3 "$FRAMETOOL" check "$TMP/frames.jsonl" || fail "frame invariants"
python3 - "$TMP/frames.jsonl" "$TMP/report.json" "$ROUNDS" "$wpid" <<'PY' || fail "thread coverage"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
report = json.load(open(sys.argv[2]))
rounds, wpid = int(sys.argv[3]), int(sys.argv[4])
interval_ms = 50
final = frames[-1]
tids = {t["tid"] for f in frames for t in f["threads"]}
pids = {t["pid"] for f in frames for t in f["threads"]} | \
       {p["pid"] for f in frames for p in f["pages"]}
# Child processes of the target are followed too (a sanitizer build's
# leak checker forks one at exit): every sampled pid must be the target or
# a target memtop reports.
targets = {t["pid"] for f in frames for t in f["targets"]}
assert wpid in pids and pids <= targets, \
    f"samples attributed to pids that are not targets: {pids - targets}"
workers = report["workers"]
wtids = {w["tid"] for w in workers}
assert len(wtids) == 4, workers
missing = wtids - tids
assert not missing, f"worker threads never sampled: {missing} (seen {tids})"
pages = {int(p["addr"], 16): p["total"] for p in final["pages"]}
late = {w["tid"] for w in workers if w.get("late")}
assert len(late) == 2, workers
fol = final.get("follow", {})
# Born after the attach, a late thread loses only what its birth gap (the
# time memtop measured from its FORK to its channel) covers: one round per
# started 50 ms interval of that gap, plus the first round.  A frame's
# /proc rescan may find a late thread before its FORK record is read (a
# window of about a millisecond each frame); that thread then has no
# measured gap, and may miss what one frame interval (250 ms) covers.
gap_us = fol.get("gap_max_us", 0)
if fol.get("threads", 0) < len(late):
    gap_us = max(gap_us, 250000)
may_miss = gap_us // (interval_ms * 1000) + 1
for h in report["hot"]:
    got = pages.get(int(h["addr"], 16), 0)
    assert got <= h["faults"], f"{h['addr']}: memtop {got} > workload {h['faults']}"
    if h["tid"] in late:
        assert got >= h["faults"] - may_miss, \
            f"late page {h['addr']}: {got} of {h['faults']}, gap {fol}"
    else:
        assert got >= 1, f"early page {h['addr']} never seen"
assert fol.get("mode") == "per-thread", fol
assert fol.get("threads", 0) >= 1, fol
print(f"ok: {len(tids)} threads sampled, late threads complete; birth gap "
      f"max {fol['gap_max_us']} us, mean {fol['gap_mean_us']} us over {fol['threads']} threads")
PY
finish
