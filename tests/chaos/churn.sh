#!/bin/bash
# Thread and process churn: tests/chaos/churn creates and joins thousands
# of short-lived threads and forks children (all faulting fresh pages)
# while memtop watches it, once with -p and once as -- COMMAND.  Sampling
# memtop's /proc/PID/fd and VmRSS every 0.25 s shows that neither grows
# with the churn (RSS judged only in builds without a sanitizer); every frame keeps its sums (frametool check); no sample
# is attributed to a pid that is not the target or one of its children;
# the targets table does not grow with the children; and with -- COMMAND
# (inherited channels, every thread from birth) every fault the churn made
# is a sample or counted as lost.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/chaos-lib.sh"
need_perf
need_python

DURATION=${CHAOS_CHURN_SECONDS:-8}
BATCH=8
IDLE=4
PAGES=4
MAX_PAGES=4000

# check_run NAME: the assertions shared by both modes, on $TMP/NAME.*.
check_run() {
	local name=$1
	python3 "$FRAMETOOL" check "$TMP/$name.jsonl" || fail "$name: frame invariants"
	final_ok "$TMP/$name.jsonl" || fail "$name: final frame"
	python3 - "$TMP/$name.jsonl" "$TMP/$name.report" "$TMP/$name.proc" \
		"$name" "$BATCH" "$IDLE" "$PAGES" "${MEMTOP_SANITIZE:-none}" \
		<<'PY' || fail "$name: churn figures"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
rep = json.load(open(sys.argv[2]))
samples = [tuple(map(int, l.split())) for l in open(sys.argv[3]) if l.strip()]
name, batch, idle, pages = sys.argv[4], *map(int, sys.argv[5:8])
sanitized = sys.argv[8] not in ("", "none")
ok = True
def bad(msg):
    global ok
    ok = False
    print(f"{name}: {msg}")

# Samples attributed only to the target and its children.
ours = {rep["pid"], *rep["children"]}
seen = {t["pid"] for f in frames for t in f["threads"]} | \
       {p["pid"] for f in frames for p in f["pages"]}
if not seen <= ours:
    bad(f"samples attributed to foreign pids {sorted(seen - ours)[:10]}")
tids = {t["tid"] for f in frames for t in f["threads"]}

# The targets table keeps the named target plus children alive (or not
# yet seen dead: liveness is rescanned every second) only: it follows the
# fork rate, not the number of forks so far.
most = max(len(f["targets"]) for f in frames)
rate = rep["forks"] / rep["seconds"]
if most > 2.5 * rate + 8 or most > rep["forks"] / 2:
    bad(f"{most} targets in one frame after {rep['forks']} forks "
        f"({rate:.0f}/s)")

# memtop's descriptors and memory over time: skip the first second
# (start-up: rings, tables), then no growth.
steady = [s for s in samples if s[0] >= 1000]
if len(steady) < 8:
    bad(f"only {len(steady)} fd/RSS samples after the first second")
else:
    third = len(steady) // 3
    fds = [s[1] for s in steady]
    rss = [s[2] for s in steady]
    fd_first, fd_last = max(fds[:third]), max(fds[-third:])
    # The floor is what stays open between short threads: a leak raises
    # it.  Above it, a live thread holds one channel (two fds: its sample
    # and task events), and symbol lookups open an ELF file for a moment.
    floor_first, floor_last = min(fds[:third]), min(fds[-third:])
    if floor_last > floor_first + 2 or \
            max(fds) > min(fds) + 2 * (idle + batch + 1) + 8:
        bad(f"fd count grows: floor {floor_first} -> {floor_last}, "
            f"range {min(fds)}..{max(fds)}")
    # The page table is capped (--max-pages): once full, the figures
    # stop growing.
    growth = max(rss[-third:]) - min(rss[:third])
    if growth > 8 * 1024 and not sanitized:
        bad(f"RSS grows by {growth} KiB ({min(rss[:third])} -> "
            f"{max(rss[-third:])})")
    print(f"{name}: fds {min(fds)}..{max(fds)} (floor {floor_first} in the "
          f"first third, {floor_last} in the last; max {fd_first}, "
          f"{fd_last}); RSS {min(rss)}..{max(rss)} KiB over {len(steady)} "
          f"samples")

cum = frames[-1]["cumulative"]
print(f"{name}: churn made {rep['threads']} threads and {rep['forks']} "
      f"children in {rep['seconds']} s; memtop: {cum['samples']} samples, "
      f"{cum['lost']} lost, {len(tids)} distinct tids, {len(frames)} "
      f"frames, at most {most} targets")
if name == "command":
    # Inherited channels see every thread from its first instruction:
    # each short thread's fresh pages are samples, or lost and counted.
    made = rep["threads"] * pages
    if cum["samples"] + cum["lost"] < made:
        bad(f"{cum['samples']} samples + {cum['lost']} lost < {made} "
            f"page faults made by short-lived threads")
sys.exit(0 if ok else 1)
PY
}

churn_args=(--duration "$DURATION" --batch $BATCH --fork-every 20
	--idle-threads $IDLE --pages $PAGES)

# 1. -p: memtop attaches to the running churn and follows it.
"$MEMTOP_CHURN" "${churn_args[@]}" --report "$TMP/pid.report" &
cpid=$!
cleanup_hooks+=("kill $cpid 2>/dev/null")
sleep 0.3
"$MEMTOP" -b --json -e faults -d 0.5 -k 20 --max-pages $MAX_PAGES \
	-p $cpid -o "$TMP/pid.jsonl" &
mpid=$!
watch_proc $mpid "$TMP/pid.proc"
wait $mpid
status=$?
wait $cpid || fail "-p: churn exited $?"
[ "$status" -eq 0 ] || fail "-p: memtop exited $status"
check_run pid

# 2. -- COMMAND: memtop launches the churn (inherited per-CPU channels).
"$MEMTOP" -b --json -e faults -d 0.5 -k 20 --max-pages $MAX_PAGES \
	-o "$TMP/command.jsonl" -- \
	"$MEMTOP_CHURN" "${churn_args[@]}" --report "$TMP/command.report" &
mpid=$!
watch_proc $mpid "$TMP/command.proc"
wait $mpid
status=$?
[ "$status" -eq 0 ] || fail "-- COMMAND: memtop exited $status (churn's status expected: 0)"
check_run command
finish
