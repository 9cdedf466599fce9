#!/bin/bash
# -p follows threads born after the attach within a fixed ceiling that
# does not come from memtop (e2e-threads.sh takes its tolerance from
# memtop's own follow.gap_max_us):
#   birth     the workload's own clock: each worker's start_ns in its
#             --report (CLOCK_MONOTONIC at the thread's first instruction);
#   sampled   perf's reading of memtop's --record file: the time of the
#             thread's first sample (`perf script -F tid,time`; the events
#             use CLOCK_MONOTONIC, use_clockid).
# Each late worker faults about every millisecond from its first round, so
# its first sample follows the opening of its channel within that.  The
# ceiling, CEIL_MS (100 ms): the thread's FORK record must have opened its
# channel, not the /proc rescan memtop runs every second as a fallback
# (README "Threads": task records wake memtop at once; 0.45 to 0.6 ms on an
# idle VM; up to 34 ms seen here at load average 13 on 2 vCPUs).
# Three processes, their late threads born at different moments: with
# only the rescan, all three births would have to fall within 100 ms
# before a rescan (about 1 chance in 1000) for this test to pass.
# Also: every worker is sampled, every sample is of a watched process.
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python
PERF=$(command -v perf) || skip "perf not installed (perf reads the recording)"
CEIL_MS=${MEMTOP_BIRTH_CEIL_MS:-100}
# Sanitizer builds run memtop and the workload several times slower (up to
# 210 ms seen under ThreadSanitizer): half the rescan period there.
if [ -z "${MEMTOP_BIRTH_CEIL_MS:-}" ] &&
   ldd "$MEMTOP" 2>/dev/null | grep -Eq 'lib(t|a)san'; then
	CEIL_MS=500
	echo "# sanitizer build: ceiling $CEIL_MS ms"
fi

# In a sanitizer build the workload's LeakSanitizer check at exit runs in
# a tracer task of its own (a child process sharing its memory), which
# memtop rightly follows: the workload runs without it.
pids=()
for delay in 1.0 1.35 1.7; do
	ASAN_OPTIONS=detect_leaks=0 "$MEMTOP_WORKLOAD" --mode refault --threads 1 --late-threads 2 --late-delay $delay \
		--interval-ms 1 --hot 24 --pages 384 --duration 2.6 --quiet \
		--report "$TMP/report-$delay.json" &
	pids+=($!)
	cleanup_hooks+=("kill $! 2>/dev/null")
done
# The early workers run before the attach.
sleep 0.4
MEMTOP_FAULTS_NO_TRACEPOINT=1 timeout 30 "$MEMTOP" -e faults -c 1 -b --json -d 0.25 \
	-p "$(IFS=,; echo "${pids[*]}")" --record "$TMP/rec.data" -o "$TMP/frames.jsonl" \
	2>"$TMP/memtop.err"
status=$?
for p in "${pids[@]}"; do wait "$p" || fail "workload $p exited $?"; done
[ "$status" -eq 0 ] || fail "memtop exited $status: $(cat "$TMP/memtop.err")"
"$PERF" script -i "$TMP/rec.data" -F pid,tid,time >"$TMP/samples" 2>"$TMP/perf.err" ||
	fail "perf script failed: $(head -2 "$TMP/perf.err")"

python3 - "$TMP/samples" "$CEIL_MS" "$TMP"/report-*.json <<'PY' || fail "thread births"
import json, sys
samples_file, ceil_ms = sys.argv[1], float(sys.argv[2])
reports = [json.load(open(f)) for f in sys.argv[3:]]
first, pids = {}, set()
for line in open(samples_file):
    f = line.replace("/", " ").split()      # "PID/TID  SEC.USEC:"
    if len(f) < 3:
        continue
    pid, tid = int(f[0]), int(f[1])
    t = round(float(f[2].rstrip(":")) * 1e6)    # microseconds
    pids.add(pid)
    first.setdefault(tid, t)
bad, gaps = [], []
want_pids = {r["pid"] for r in reports}
if not pids <= want_pids:
    bad.append(f"samples of processes not watched: {pids - want_pids}")
for r in reports:
    for w in r["workers"]:
        if not w["started"]:
            bad.append(f"pid {r['pid']}: worker {w['index']} never started")
            continue
        if w["tid"] not in first:
            bad.append(f"pid {r['pid']}: thread {w['tid']} never sampled")
            continue
        if not w["late"]:
            continue
        gap_ms = (first[w["tid"]] - w["start_ns"] / 1000) / 1000
        gaps.append(gap_ms)
        if gap_ms > ceil_ms:
            bad.append(f"pid {r['pid']}: late thread {w['tid']} first sampled "
                       f"{gap_ms:.2f} ms after its start (ceiling {ceil_ms:g} ms)")
if len(gaps) != 6:
    bad.append(f"{len(gaps)} late threads measured, want 6")
for b in bad:
    print(b)
if gaps:
    print(f"late threads: first sample {min(gaps):.2f} to {max(gaps):.2f} ms after "
          f"their start (workload clock vs perf's sample time), ceiling {ceil_ms:g} ms")
sys.exit(1 if bad else 0)
PY
[ "$failures" -eq 0 ] && ok "threads born after the attach sampled within ${CEIL_MS} ms of their start"
finish
