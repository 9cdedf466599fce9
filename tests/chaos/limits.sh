#!/bin/bash
# Limits: RLIMIT_NOFILE too low for a many-threaded target (memtop watches
# fewer threads and says so in the frame and the log, or fails naming
# RLIMIT_NOFILE and its value); RLIMIT_MEMLOCK low for an unprivileged user
# (smaller rings, so every thread that can still fits; past that, unwatched threads
# and a message naming RLIMIT_MEMLOCK); 300 threads; perf_event_paranoid 3
# for a non-root user (root only; the sysctl is put back on every way out:
# the EXIT trap, and a guard for SIGKILL).  What cannot run here is a
# "# SKIP" line.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/chaos-lib.sh"
need_perf
need_python

MT=(-b --json -e faults -d 0.3 -n 3)

# start_idle N [RUNAS...]: a churn target with N idle threads (plus its main
# thread) for 20 s, and no other thread or child process: one that came
# and went around the attach would change the counts below; sets $target.
start_idle() {
	local n=$1
	shift
	# Long enough for every run against it under a sanitizer on a busy
	# machine (the sweep below alone is 42 runs); killed by pid when done.
	"$@" "$MEMTOP_CHURN" --idle-threads "$n" --waves 1 --batch 0 \
		--fork-every 0 --duration 300 &
	target=$!
	cleanup_hooks+=("kill_own $target")
	# Wait until every thread exists; $total counts them all (a
	# sanitizer runtime may add its own).
	for ((i = 0; i < 100; i++)); do
		total=$(ls "/proc/$target/task" 2>/dev/null | wc -l)
		[ "$total" -ge $((n + 1)) ] && break
		sleep 0.05
	done
}

# watched FRAMES: "threads unwatched" of the first target, final frame.
watched() {
	python3 "$FRAMETOOL" get "$1" \
		'"%d %d" % (f["targets"][0]["threads"], f["targets"][0].get("unwatched", 0))'
}

# 1. RLIMIT_NOFILE 32, 64 threads: some watched, the rest counted.  (A
# sanitizer build's memtop has fewer descriptors to spare: fewer watched.)
start_idle 64
prlimit --nofile=32:32 "$MEMTOP" "${MT[@]}" -p $target -o "$TMP/nofile.jsonl" \
	--log "$TMP/nofile.log" 2>"$TMP/err"
status=$?
read -r w u < <(watched "$TMP/nofile.jsonl")
# The frame must count every unwatched thread, and the log say why once
# (not once per retry) with the frame's count.  The target's threads
# neither come nor go, so every scan finds the same count.  (Earlier the
# target also forked a child and ran a short-lived thread around the
# attach: each made a line of its own, and a FORK record read after a
# scan that had seen its thread counted that thread twice.)
if [ "$status" -eq 0 ] && [ "$u" -gt 0 ] && [ $((w + u)) -eq "$total" ] &&
   [ "$(grep -c 'not watched' "$TMP/nofile.log")" -eq 1 ] &&
   [ "$(grep -c "pid $target: $u thread(s) not watched.*RLIMIT_NOFILE (ulimit -n, now 32)" "$TMP/nofile.log")" -eq 1 ]; then
	ok "RLIMIT_NOFILE 32: $w threads watched, $u unwatched in the frame, one log line"
else
	fail "RLIMIT_NOFILE 32: exit $status, watched $w, unwatched $u; log: $(head -c 400 "$TMP/nofile.log")"
fi
sums_ok "$TMP/nofile.jsonl" || fail "RLIMIT_NOFILE 32: frame invariants"
# The text report says so too.
prlimit --nofile=32:32 "$MEMTOP" -b -e faults -d 0.3 -n 1 -p $target \
	>"$TMP/nofile.txt" 2>/dev/null
grep -q "unwatched threads" "$TMP/nofile.txt" ||
	fail "RLIMIT_NOFILE 32: the text report does not mention unwatched threads"

# 1b. RLIMIT_NOFILE 32, 200 threads born after the attach in one burst:
# their FORK records overflow the parent's one-page task ring and the
# channels use up every descriptor, so only a rescan of /proc/PID/task
# finds the rest, and it must still have a descriptor for that.  Every
# thread is watched or counted, and the log tells the first one left out
# at once and the burst's count once more, not a line per thread.
"$MEMTOP_CHURN" --idle-threads 200 --waves 1 --batch 0 --fork-every 0 \
	--start-delay 0.5 --duration 20 &
late=$!
cleanup_hooks+=("kill_own $late")
prlimit --nofile=32:32 "$MEMTOP" -b --json -e faults -d 0.3 -n 8 -p $late \
	-o "$TMP/nofile-late.jsonl" --log "$TMP/nofile-late.log" 2>"$TMP/err"
status=$?
total=$(ls "/proc/$late/task" | wc -l)
read -r w u < <(watched "$TMP/nofile-late.jsonl")
lines=$(grep -c "pid $late: .* not watched" "$TMP/nofile-late.log")
if [ "$status" -eq 0 ] && [ "$total" -ge 201 ] && [ "$u" -gt 0 ] &&
   [ $((w + u)) -eq "$total" ] && [ "$lines" -ge 1 ] && [ "$lines" -le 2 ] &&
   grep "pid $late: .* not watched" "$TMP/nofile-late.log" | tail -n 1 |
	grep -q "pid $late: $u thread(s) not watched.*RLIMIT_NOFILE"; then
	ok "RLIMIT_NOFILE 32, $total threads born after the attach: $w watched, $u counted, $lines log line(s)"
else
	fail "RLIMIT_NOFILE 32, threads born after the attach: exit $status, $total threads, watched $w, unwatched $u, $lines log lines: $(grep 'not watched' "$TMP/nofile-late.log" | tail -n 2 | cut -c 1-120)"
fi
kill $late 2>/dev/null
wait $late 2>/dev/null

# 2. RLIMIT_NOFILE from 4 to 24: exit 0, or exit 1 with one line naming
# RLIMIT_NOFILE and its value; never a crash or another message.
sweep_ok=0
# LeakSanitizer needs descriptors of its own at exit (ASan build).
asan_options=${ASAN_OPTIONS-}
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
for n in $(seq 4 24); do
	for mode in "-p $target" "-- true"; do
		# shellcheck disable=SC2086
		timeout 10 prlimit --nofile=$n:$n "$MEMTOP" -b -e faults -d 0.2 -n 1 \
			-o /dev/null $mode 2>"$TMP/err" </dev/null
		status=$?
		if [ "$status" -eq 0 ]; then
			sweep_ok=$((sweep_ok + 1))
		elif [ "$status" -ne 1 ] || [ "$(wc -l <"$TMP/err")" -ne 1 ] ||
		     ! grep -q "RLIMIT_NOFILE (ulimit -n, now $n)" "$TMP/err"; then
			fail "nofile $n ($mode): exit $status: $(cat "$TMP/err")"
		fi
	done
done
ok "RLIMIT_NOFILE 4..24: $sweep_ok runs worked, every failure named RLIMIT_NOFILE and its value"
export ASAN_OPTIONS=$asan_options
kill $target 2>/dev/null
wait $target 2>/dev/null

# 3. 300 threads, default limits: all watched.
start_idle 300
t0=$(now_ms)
"$MEMTOP" "${MT[@]}" -p $target -o "$TMP/300.jsonl" 2>"$TMP/err"
status=$?
read -r w u < <(watched "$TMP/300.jsonl")
if [ "$status" -eq 0 ] && [ "$w" -eq "$total" ] && [ "$u" -eq 0 ] &&
   sums_ok "$TMP/300.jsonl"; then
	ok "300 threads: all $total watched ($(($(now_ms) - t0)) ms for 3 frames)"
else
	fail "300 threads: exit $status, watched $w, unwatched $u: $(cat "$TMP/err")"
fi
kill $target 2>/dev/null
wait $target 2>/dev/null

# 4 and 5 need root to become an unprivileged user.
if [ "$(id -u)" -ne 0 ]; then
	skip_part "RLIMIT_MEMLOCK and perf_event_paranoid cases: not root (they run memtop as nobody)"
	finish
elif ! command -v setpriv >/dev/null; then
	skip_part "RLIMIT_MEMLOCK and perf_event_paranoid cases: setpriv not installed (util-linux)"
	finish
fi
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
chmod 777 "$TMP"

# 4. RLIMIT_MEMLOCK 64 KiB as an unprivileged user (2 CPUs x 516 KiB +
# 64 KiB = 274 pages here; a thread takes a 1+2-page sample ring and a
# 2-page task ring at least): 40 threads all fit in smaller rings; 300 do
# not, and the rest are unwatched with the reason.
for n in 40 300; do
	start_idle $n "${NOBODY[@]}"
	"${NOBODY[@]}" prlimit --memlock=65536:65536 "$MEMTOP" "${MT[@]}" \
		-p $target -o "$TMP/memlock$n.jsonl" --log "$TMP/memlock$n.log" \
		2>"$TMP/err"
	status=$?
	read -r w u < <(watched "$TMP/memlock$n.jsonl")
	if [ "$status" -ne 0 ] || [ $((w + u)) -ne "$total" ]; then
		fail "memlock, $n threads: exit $status, watched $w, unwatched $u: $(cat "$TMP/err")"
	elif ! grep -q "rings of [0-9]* pages instead of" "$TMP/memlock$n.log"; then
		fail "memlock, $n threads: rings not made smaller: $(cat "$TMP/memlock$n.log")"
	elif [ "$n" -eq 40 ] && [ "$u" -ne 0 ]; then
		fail "memlock, 40 threads: $u unwatched although 2-page rings fit"
	elif [ "$u" -gt 0 ] && ! grep -q "not watched.*RLIMIT_MEMLOCK (ulimit -l, now 64 KiB)" "$TMP/memlock$n.log"; then
		fail "memlock, $n threads: $u unwatched without naming RLIMIT_MEMLOCK"
	else
		ok "memlock 64 KiB, $n threads: $w watched, $u unwatched; $(grep -o 'rings of.*instead of [0-9]*' "$TMP/memlock$n.log")"
	fi
	kill $target 2>/dev/null
	wait $target 2>/dev/null
done

# 5. perf_event_paranoid 3 for a non-root user.  Mainline kernels treat 3
# like 2 (own processes allowed); distribution kernels with the level-3
# patch refuse, and memtop must then name the sysctl and CAP_PERFMON.
# The machine's setting is put back on every way out: by this script at
# the end, by the EXIT trap (lib.sh: exit, failure, HUP, INT, TERM), and
# for SIGKILL (meson's timeout sends one 0.5 s after its SIGTERM), by a
# guard in a session of its own that waits for this test's end (the end
# of a pipe only this test and its children hold) and restores the old
# value if the setting still reads 3.
PARANOID=/proc/sys/kernel/perf_event_paranoid
old=$(cat "$PARANOID")
paranoid_changed=0
restore_paranoid() {
	[ "$paranoid_changed" -eq 1 ] || return 0
	echo "$old" >"$PARANOID" && paranoid_changed=0
}
# First among the cleanup hooks: before the slower ones.
cleanup_hooks=(restore_paranoid "${cleanup_hooks[@]}")
exec {guard}> >(exec setsid bash -c 'cat >/dev/null
	[ "$(cat "$1")" = 3 ] && echo "$2" >"$1"' guard "$PARANOID" "$old" \
	>/dev/null 2>&1)
paranoid_changed=1
if ! echo 3 >"$PARANOID" 2>/dev/null; then
	paranoid_changed=0
	exec {guard}>&-
	skip_part "perf_event_paranoid case: cannot write $PARANOID (read-only /proc/sys?)"
	finish
fi
"${NOBODY[@]}" "$MEMTOP" -b -e faults -d 0.2 -n 1 -o /dev/null -- true 2>"$TMP/err"
status=$?
if [ "$status" -eq 0 ]; then
	ok "paranoid 3, own process: works (this kernel treats 3 like 2)"
elif [ "$status" -eq 1 ] && grep -q "perf_event_paranoid is 3, set it to 2" "$TMP/err" &&
     grep -q CAP_PERFMON "$TMP/err"; then
	ok "paranoid 3, own process: $(cat "$TMP/err")"
else
	fail "paranoid 3, own process: exit $status: $(cat "$TMP/err")"
fi
# Another user's process is refused whatever the kernel: the message
# must give a fix that works (the sysctl, or CAP_PERFMON).
"${NOBODY[@]}" "$MEMTOP" -b -e faults -d 0.2 -n 1 -p 1 2>"$TMP/err" >/dev/null
status=$?
if [ "$status" -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
   grep -q "perf_event_paranoid" "$TMP/err" && grep -q CAP_PERFMON "$TMP/err"; then
	ok "paranoid 3, pid 1: $(cat "$TMP/err")"
else
	fail "paranoid 3, pid 1: exit $status: $(cat "$TMP/err")"
fi
restore_paranoid
exec {guard}>&-
[ "$(cat "$PARANOID")" = "$old" ] ||
	fail "kernel.perf_event_paranoid not restored to $old"
finish
