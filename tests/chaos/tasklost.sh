#!/bin/bash
# Lost task records: memtop follows a churning target with -p (per-thread
# channels, each with a one-page task ring for FORK, COMM and EXIT) and is
# stopped for a second meanwhile, so the main thread's task ring overflows
# with the FORK records of the threads it keeps creating.  Those losses
# are not samples: they must show in follow.lost_task_records, never in
# lost, and the rescan they bring forward must find the threads still
# alive (the idle ones) however many FORK records were lost.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/chaos-lib.sh"
need_perf
need_python

IDLE=4
# Idle threads start after the stop: their FORK records are among the
# lost ones.
"$MEMTOP_CHURN" --duration 4 --batch 8 --pages 1 --fork-every 0 \
	--idle-threads $IDLE --start-delay 1.5 --report "$TMP/churn.report" &
cpid=$!
cleanup_hooks+=("kill_own $cpid")
sleep 0.2
# -c 1000: a few samples only; and 8 MiB sample rings
# (MEMTOP_RING_PAGES), which also carry the MMAP2 records of every
# thread's stack the churn maps: they cannot overflow while memtop is
# stopped, so every lost record is a task record.
MEMTOP_RING_PAGES=2048 "$MEMTOP" -b --json -e faults -c 1000 -d 0.25 -p $cpid \
	-o "$TMP/frames.jsonl" &
mpid=$!
cleanup_hooks+=("kill_own -CONT $mpid; kill_own $mpid")
sleep 1.2
kill -STOP $mpid
sleep 1.2
kill -CONT $mpid
wait $mpid
status=$?
wait $cpid || fail "churn exited $?"
[ "$status" -eq 0 ] || fail "memtop exited $status"

python3 "$FRAMETOOL" check "$TMP/frames.jsonl" || fail "frame invariants"
python3 - "$TMP/frames.jsonl" "$IDLE" <<'PY' || fail "task record losses"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
idle = int(sys.argv[2])
last = frames[-1]
ok = True
tl = [f["follow"]["lost_task_records"] for f in frames]
if any(b < a for a, b in zip(tl, tl[1:])):
    print(f"lost_task_records not cumulative: {tl}")
    ok = False
if tl[-1] == 0:
    print("no task record lost while memtop was stopped")
    ok = False
lost = last["cumulative"]["lost"]
# The sample rings should not overflow (see above), but on a loaded
# machine the churn can outrun even 8 MiB while memtop is stopped: then
# lost counts those rings' records, fewer than the task records lost
# (counted as samples, every one of those would be in lost too).
if lost >= max(tl[-1], 1):
    print(f"cumulative lost {lost} >= {tl[-1]} task records lost: "
          "task records counted as samples?")
    ok = False
elif lost:
    print(f"note: {lost} records lost from the sample rings too "
          "(a loaded machine)")
# The idle threads live to the end: some frame after the losses must
# count them (main + idle threads at least).
after = [f for f in frames if f["follow"]["lost_task_records"] and
         not f["final"]]
most = max((t["threads"] for f in after for t in f["targets"]), default=0)
if most < idle + 1:
    print(f"after the losses at most {most} threads watched, "
          f"{idle + 1} expected")
    ok = False
print(f"{tl[-1]} task records lost, {lost} samples lost, up to {most} "
      f"threads watched after, {len(frames)} frames")
sys.exit(0 if ok else 1)
PY
finish
