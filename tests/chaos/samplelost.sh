#!/bin/bash
# Lost samples in the live collector: memtop follows a faulting workload
# (-e faults -c 1, one sample per page fault) and is stopped for 1.5 s
# meanwhile, so its 1 MiB sample ring overflows and the kernel writes a
# LOST record (and counts the event's own lost figure).  Every fault is
# then either a sample or counted in lost: samples + lost reaches the
# workload's own fault count (its hot-page faults) and stays within the
# process's minor faults (getrusage, which also counts the start-up
# faults before the exec).  A collector that ignored the losses would
# come short by thousands.  Rates stay under the kernel's sample-rate
# cap (about 32 faults a millisecond), so nothing is throttled; if the
# kernel throttles anyway the exact check is a '# SKIP' part.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/chaos-lib.sh"
need_perf
need_python

"$MEMTOP" -b --json -e faults -c 1 -d 0.25 -o "$TMP/frames.jsonl" -- \
	"$MEMTOP_WORKLOAD" --mode refault --hot 32 --pages 64 \
	--interval-ms 1 --duration 4 --quiet --report "$TMP/report.json" &
mpid=$!
cleanup_hooks+=("kill_own -CONT $mpid; kill_own $mpid")
sleep 1.2
kill -STOP $mpid
sleep 1.5
kill -CONT $mpid
wait $mpid
status=$?
[ "$status" -eq 0 ] || fail "memtop exited $status"
[ -s "$TMP/report.json" ] || fail "the workload wrote no report"

python3 "$FRAMETOOL" check "$TMP/frames.jsonl" || fail "frame invariants"
python3 - "$TMP/frames.jsonl" "$TMP/report.json" <<'PY'
import json, os, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
rep = json.load(open(sys.argv[2]))
cum = frames[-1]["cumulative"]
samples, lost, thr = cum["samples"], cum["lost"], cum["throttled"]
hot, minflt = rep["faults"], rep["rusage_minflt"]
print(f"samples {samples} lost {lost} throttled {thr}; workload hot-page "
      f"faults {hot}, minor faults {minflt}")
if thr:
    print(f"# SKIP the kernel throttled {thr} times: samples + lost "
          "cannot add up")
    sys.exit(0)
bad = []
# Two threads, a handful of task records: the task ring cannot overflow.
task_lost = frames[-1]["follow"]["lost_task_records"]
if task_lost:
    bad.append(f"{task_lost} lost task records: sample losses taken for "
               "task records?")
if lost == 0:
    bad.append("nothing lost while memtop was stopped: the ring did "
               "not overflow, the test proves nothing")
if samples + lost < hot:
    bad.append(f"samples + lost = {samples + lost} < the workload's "
               f"{hot} faults: lost samples not counted")
# The ring also carries the workload's MMAP2 records, whose losses count
# in lost too: a plain build maps nothing in its loop, but a sanitizer
# build's allocator maps memory all the time.
if os.environ.get("MEMTOP_SANITIZE", "none") != "none":
    print("# SKIP the upper bound: under a sanitizer the workload's own "
          "mappings share the ring and their lost MMAP2 records count in lost")
elif samples + lost > minflt + 64:
    bad.append(f"samples + lost = {samples + lost} > the process's "
               f"{minflt} minor faults (+64): losses counted twice")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || fail "lost samples"
finish
