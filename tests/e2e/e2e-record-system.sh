#!/bin/bash
# --record under -a (issue 12, item 8): memtop watches the whole machine
# and records it while two workloads with known fault counts run.  `perf
# report` must read the file and count, process by process (--sort pid,
# -n), what memtop's frames counted: for each workload, the sum of its
# process rows' samples over every frame (perf script -F pid says which
# process each sample is; perf report's pid key is the thread); in all,
# the frames' cumulative samples plus the unattributed ones.  Whole-machine sampling on a loaded
# machine may lose samples (counted); the exact checks are then a
# '# SKIP' part, and perf report must still read the file.
# A process already running when memtop starts is named in the file as
# perf record -a names it: its COMM and the MMAP2 of its executable
# (oracle: its /proc/PID/exe).
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/../lib/system.sh"
need_system
need_python
command -v perf >/dev/null || skip "perf not installed (Debian package linux-perf)"

sleep 300 &
before=$!
cleanup_hooks+=("kill_own $before")
# Until the fork has exec'd sleep.
for _ in $(seq 100); do
	[ "$(cat "/proc/$before/comm" 2>/dev/null)" = sleep ] && break
	sleep 0.05
done
before_exe=$(readlink "/proc/$before/exe")
start_memtop "$TMP/a.jsonl" -a -d 0.3 -k 100 --record "$TMP/a.data"
wait_frames "$TMP/a.jsonl" 1 || fail "no first frame"
W="env ASAN_OPTIONS=detect_leaks=0 $MEMTOP_WORKLOAD --mode refault --duration 0 --interval-ms 2 --quiet --pages 256"
$W --hot 16 --rounds 20 --report "$TMP/w1.json" &
w1=$!
$W --hot 8 --rounds 30 --threads 2 --report "$TMP/w2.json" &
w2=$!
wait $w1 $w2 || fail "a workload failed"
end_run "$TMP/a.jsonl" "-a --record"

perf report -i "$TMP/a.data" --stdio -n --sort pid >"$TMP/report" \
	2>"$TMP/report.err" || fail "perf report failed: $(head -1 "$TMP/report.err")"
grep -qiE "incompatible|non matching|unsupported|corrupt" "$TMP/report.err" &&
	fail "perf report complains: $(head -2 "$TMP/report.err")"
# perf report's pid key is the thread; perf script says each sample's
# process.
perf script -i "$TMP/a.data" -F pid >"$TMP/script" 2>"$TMP/script.err" ||
	fail "perf script failed: $(head -1 "$TMP/script.err")"

python3 - "$TMP/a.jsonl" "$TMP/report" "$TMP/script" "$TMP/w1.json" "$TMP/w2.json" <<'PY'
import json, re, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
final = frames[-1]
lost = final["cumulative"]["lost"]
# perf report --sort pid -n: "  12.34%  1234  TID:comm", one line per
# thread (and per comm it had).
total = 0
for line in open(sys.argv[2]):
    m = re.match(r"\s+[0-9.]+%\s+(\d+)\s+\S", line)
    if m:
        total += int(m.group(1))
perf = {}
for line in open(sys.argv[3]):
    if line.strip():
        pid = int(line.split()[0])
        perf[pid] = perf.get(pid, 0) + 1
if sum(perf.values()) != total:
    print(f"FAIL: perf script {sum(perf.values())} samples, perf report {total}")
    sys.exit(1)
want_total = final["cumulative"]["samples"] + final["cumulative"]["unattributed"]
print(f"perf report: {total} samples in {len(perf)} processes; memtop: "
      f"{want_total} (samples + unattributed), lost {lost}")
if total == 0:
    print("FAIL: perf report read no samples")
    sys.exit(1)
if lost:
    print(f"# SKIP exact per-process counts: memtop lost {lost} samples (counted)")
    sys.exit(0)
bad = 0
if total != want_total:
    print(f"FAIL: perf report counts {total}, memtop {want_total}")
    bad += 1
rows = {}
for f in frames:
    for p in f["processes"]:
        rows[p["pid"]] = rows.get(p["pid"], 0) + p["samples"]
for path in sys.argv[4:]:
    pid = json.load(open(path))["pid"]
    got, want = perf.get(pid, 0), rows.get(pid, 0)
    if got != want or want == 0:
        print(f"FAIL: pid {pid}: perf report {got}, memtop's rows {want}")
        bad += 1
    else:
        print(f"ok: pid {pid}: perf report and memtop's rows both {got}")
# Every process perf names has the rows' count (rows are exact when
# nothing was untracked).
if final["cumulative"]["untracked"] == 0:
    diff = [p for p in perf if perf[p] != rows.get(p, 0)]
    # Unattributed samples are in the file but in no row.
    if len(diff) > 0 and final["cumulative"]["unattributed"] == 0:
        print(f"FAIL: {len(diff)} processes differ, e.g. {diff[:3]}")
        bad += 1
    else:
        print(f"ok: {len(perf) - len(diff)} of {len(perf)} processes agree "
              f"exactly")
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || fail "perf report and memtop's process rows disagree"

perf script -i "$TMP/a.data" --show-task-events --show-mmap-events \
	>"$TMP/events" 2>/dev/null || fail "perf script --show-task-events failed"
grep -qE "PERF_RECORD_COMM: sleep:$before/$before\$" "$TMP/events" ||
	fail "no COMM for pid $before, running before memtop started"
grep -E "PERF_RECORD_MMAP2 $before/$before: " "$TMP/events" |
	grep -qF " $before_exe" ||
	fail "no MMAP2 of $before_exe for pid $before, running before memtop started"
[ "$failures" -eq 0 ] && echo "ok: pid $before (started before memtop): COMM and MMAP2 of $before_exe"
kill_own "$before"
finish
