#!/bin/bash
# memtop --demo watches the bundled workload: frames carry samples from the
# demo's threads, its skewed hot set is ranked (the hottest page clearly
# above the 10th), and the workload does not outlive memtop.
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python

# descendants PID: PID's children, their children, and so on.
descendants() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}

# Unset: memtop must find the workload beside itself, as a user runs it.
timeout 30 env -u MEMTOP_WORKLOAD "$MEMTOP" --demo -b --json -n 4 -d 0.5 -s total -k 20 >"$TMP/frames.jsonl" &
tpid=$!
cleanup_hooks+=("kill_own $tpid")
# The demo's workload, found among the descendants of the process this
# test started (timeout, then memtop), and known by pid and start time
# from then on, so that a process that later reuses the pid is not it.
wpid= wstart=
for ((i = 0; i < 200 && ${#wpid} == 0; i++)); do
	for c in $(descendants $tpid); do
		if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = memtop-workload ]; then
			wpid=$c
			wstart=$(stat_field "$c" 22)
		fi
	done
	[ -n "$wpid" ] || sleep 0.05
done
wait $tpid
status=$?
[ -n "$wpid" ] || fail "no memtop-workload among the processes memtop --demo started"
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
if [ -n "$wpid" ] && [ -n "$wstart" ] && [ "$(stat_field "$wpid" 22)" = "$wstart" ]; then
	fail "demo workload (pid $wpid) still running after memtop exited"
	kill "$wpid"
fi
finish
