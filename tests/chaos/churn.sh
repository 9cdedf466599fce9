#!/bin/bash
# Thread and process churn: tests/chaos/churn creates and joins thousands
# of short-lived threads and forks children (all faulting fresh pages)
# while memtop watches it, once with -p and once as -- COMMAND.  memtop's
# descriptors are counted exactly at two quiescent points, where the churn
# holds (churn --hold) with only its main and idle threads alive, before
# the first wave and after the last, each once memtop's frames show just
# those threads: a descriptor left behind by a short thread or a child
# makes the second count differ.  Sampling memtop's /proc/PID/fd and
# VmRSS every 0.25 s bounds the descriptors in between and shows that
# RSS does not grow with the churn (judged only in builds without a
# sanitizer); every frame keeps its sums (frametool check); no sample
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

# memtop's descriptors and memory over time, past the first second
# (start-up: rings, tables).  Exact descriptor counts come from the
# quiescent points (quiet_fds); here the peak is bounded: a live thread
# holds one channel (three fds: its sample, task and allocation events),
# and symbol lookups open an ELF file for a moment.
steady = [s for s in samples if s[0] >= 1000]
if len(steady) < 8:
    bad(f"only {len(steady)} fd/RSS samples after the first second")
else:
    third = len(steady) // 3
    fds = [s[1] for s in steady]
    rss = [s[2] for s in steady]
    # A thread's channel closes once memtop has drained it after the
    # thread exited, so a batch that exited may still hold its channels
    # while the next one has opened theirs: two batches' worth (one
    # batch's allowance failed by one descriptor, 27..75 against 47, in a
    # clean-clone run on an idle 2-vCPU Intel guest).  A sanitized memtop
    # closes them later still (its drain is several times slower): a
    # wider peak.  The exact counts at the quiescent points still hold.
    swing = 3 * (idle + 2 * batch + 1) + 8
    if max(fds) > min(fds) + swing * (3 if sanitized else 1):
        bad(f"fd count swings too far: {min(fds)}..{max(fds)}")
    # The page table is capped (--max-pages): once full, the figures
    # stop growing.
    growth = max(rss[-third:]) - min(rss[:third])
    if growth > 8 * 1024 and not sanitized:
        bad(f"RSS grows by {growth} KiB ({min(rss[:third])} -> "
            f"{max(rss[-third:])})")
    print(f"{name}: fds {min(fds)}..{max(fds)}, RSS {min(rss)}..{max(rss)} "
          f"KiB over {len(steady)} samples")

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

# held NAME POINT: waits (60 s at most) until the churn of run NAME holds
# at POINT (before, after); prints the churn's pid from its hold file.
held() {
	local i pid
	for ((i = 0; i < 600; i++)); do
		pid=$(awk -v p="$2" '$2 == p { print $1 }' "$TMP/$1.hold" 2>/dev/null)
		[ -n "$pid" ] && { echo "$pid"; return 0; }
		sleep 0.1
	done
	return 1
}

# quiet_fds NAME MEMTOP_PID CHURN_PID POINT: memtop's descriptor count
# while the churn holds at POINT.  The state is known once two frames
# were written since the hold began and the latest shows the churn alone,
# alive, with its main and idle threads; the count is taken when five
# reads of /proc/MEMTOP_PID/fd 0.1 s apart agree (an ELF file a symbol
# lookup opens for a moment is not counted), and the descriptors are
# listed in $TMP/NAME.fd-POINT.
quiet_fds() {
	python3 - "$TMP/$1.jsonl" "$2" "$3" $((IDLE + 1)) "$TMP/$1.fd-$4" <<'PY'
import json, os, sys, time
frames, mpid, cpid, want, listing = sys.argv[1], *map(int, sys.argv[2:5]), sys.argv[5]
def complete():
    try:
        with open(frames) as f:
            return [l for l in f.read().split("\n")[:-1] if l]
    except FileNotFoundError:
        return []
start, state, reads = len(complete()), None, []
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    lines = complete()
    if len(lines) >= start + 2:
        state = [(t["pid"], t["threads"], t["alive"])
                 for t in json.loads(lines[-1])["targets"]]
        if state != [(cpid, want, True)]:
            reads = []
        else:
            fds = sorted(os.listdir(f"/proc/{mpid}/fd"), key=int)
            reads.append(len(fds))
            if len(reads) >= 5 and len(set(reads[-5:])) == 1:
                with open(listing, "w") as out:
                    for fd in fds:
                        try:
                            to = os.readlink(f"/proc/{mpid}/fd/{fd}")
                        except OSError:
                            to = "?"
                        out.write(f"{fd} {to}\n")
                print(reads[-1])
                sys.exit(0)
    time.sleep(0.1)
print(f"no quiescent point in 30 s: targets {state}, want "
      f"[({cpid}, {want}, True)], fd reads {reads[-10:]}", file=sys.stderr)
sys.exit(1)
PY
}

# quiet_points NAME MEMTOP_PID: counts memtop's descriptors at the churn's
# two holds, lets it go on after each (SIGUSR1 to the churn's pid, which
# must be our churn: $cpid, or memtop's child), and asserts the counts
# are equal.
quiet_points() {
	local name=$1 mpid=$2 point pid n before=
	for point in before after; do
		pid=$(held "$name" $point) ||
			{ fail "$name: the churn never held $point"; return; }
		if [ "$pid" != "${cpid:-}" ] &&
		   [ "$(ppid_of "$pid")" != "$mpid" ]; then
			fail "$name: hold file names pid $pid, not our churn"
			return
		fi
		n=$(quiet_fds "$name" "$mpid" "$pid" $point) ||
			fail "$name: descriptors $point the churn"
		# Released even when the count failed: the churn goes on to
		# its next hold, and its end.
		kill -USR1 "$pid"
		if [ $point = before ]; then
			before=$n
		elif [ -z "$n" ] || [ -z "$before" ]; then
			:
		elif [ "$n" -eq "$before" ]; then
			ok "$name: memtop holds $n descriptors before and after the churn"
		else
			fail "$name: memtop holds $before descriptors before the churn, $n after"
			diff "$TMP/$name.fd-before" "$TMP/$name.fd-after"
		fi
	done
}

churn_args=(--duration "$DURATION" --batch $BATCH --fork-every 20
	--idle-threads $IDLE --pages $PAGES)

# 1. -p: memtop attaches to the running churn (held before its first
# wave) and follows it.
"$MEMTOP_CHURN" "${churn_args[@]}" --report "$TMP/pid.report" \
	--hold "$TMP/pid.hold" &
cpid=$!
cleanup_hooks+=("kill_own $cpid")
held pid before >/dev/null || fail "-p: the churn did not start"
"$MEMTOP" -b --json -e faults -d 0.5 -k 20 --max-pages $MAX_PAGES \
	-p $cpid -o "$TMP/pid.jsonl" &
mpid=$!
cleanup_hooks+=("kill_own $mpid")
watch_proc $mpid "$TMP/pid.proc" &
watcher=$!
quiet_points pid $mpid
wait $mpid
status=$?
wait $watcher
wait $cpid || fail "-p: churn exited $?"
[ "$status" -eq 0 ] || fail "-p: memtop exited $status"
check_run pid

# 2. -- COMMAND: memtop launches the churn (inherited per-CPU channels).
cpid=
"$MEMTOP" -b --json -e faults -d 0.5 -k 20 --max-pages $MAX_PAGES \
	-o "$TMP/command.jsonl" -- \
	"$MEMTOP_CHURN" "${churn_args[@]}" --report "$TMP/command.report" \
	--hold "$TMP/command.hold" &
mpid=$!
cleanup_hooks+=("kill_own $mpid")
watch_proc $mpid "$TMP/command.proc" &
watcher=$!
quiet_points command $mpid
wait $mpid
status=$?
wait $watcher
[ "$status" -eq 0 ] || fail "-- COMMAND: memtop exited $status (churn's status expected: 0)"
check_run command
finish
