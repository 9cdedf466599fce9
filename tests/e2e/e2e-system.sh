#!/bin/bash
# -a: every process through one channel per CPU.  Three workloads with
# known per-page fault counts, started after memtop, are counted exactly
# page by page under their own pids, each has process rows that add up
# and show its exit once; other processes' samples are there too, and
# every frame's sums (process rows included) hold; e2e-system-par does
# the same with MEMTOP_DRAIN_THREADS=2 (drain threads).  Then CPU hotplug, with the online
# list faked (MEMTOP_CPUS_ONLINE): the channels of a CPU that goes
# "offline" are closed and opened again when it is back, and each change
# is counted in the frame.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/../lib/system.sh"
need_system
need_python

start_memtop "$TMP/a.jsonl" -a -d 0.3 -k 4000
wait_frames "$TMP/a.jsonl" 1 || fail "no first frame"
# The workloads without LeakSanitizer in a sanitizer build: its check at
# exit runs in a tracer process of its own that shares their memory.
W="env ASAN_OPTIONS=detect_leaks=0 $MEMTOP_WORKLOAD --mode refault --duration 0 --interval-ms 2 --quiet --pages 512"
$W --hot 16 --rounds 32 --report "$TMP/w1.json" &
w1=$!
$W --hot 32 --rounds 27 --threads 2 --report "$TMP/w2.json" &
w2=$!
$W --hot 8 --rounds 40 --write-ratio 0 --report "$TMP/w3.json" &
w3=$!
wait $w1 $w2 $w3 || fail "a workload failed"
end_run "$TMP/a.jsonl" "-a"
# e2e-system-par runs all of this with the parallel drain forced on
# (MEMTOP_DRAIN_THREADS): its threads must have drained the rings.
if [ "${MEMTOP_DRAIN_THREADS:-0}" -ge 2 ]; then
	grep -q "drain threads: $MEMTOP_DRAIN_THREADS over" "$TMP/a.jsonl.log" ||
		fail "-a: no drain threads started (MEMTOP_DRAIN_THREADS=$MEMTOP_DRAIN_THREADS)"
	echo "ok: -a drained by $MEMTOP_DRAIN_THREADS drain threads"
	# Each frame's merge, shard by shard, with the rings drained by the
	# other threads meanwhile (collector/live/dpool.h).
	grep -Eq "drain threads: [1-9][0-9]* frames merged with the rings drained" \
		"$TMP/a.jsonl.log" ||
		fail "-a: no frame merged with the rings drained meanwhile"
fi
# A memtop that cannot keep up with the whole machine (a ThreadSanitizer
# build on a busy machine) loses samples, counted; the workloads' pages,
# rows and names cannot be judged then.
lost=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["cumulative"]["lost"])' "$TMP/a.jsonl")
if [ "${lost:-0}" -gt 0 ]; then
	skip_part "exact pages, process rows and workloads under -a: memtop lost $lost samples (counted in the frame)"
	python3 "$FRAMETOOL" check "$TMP/a.jsonl" || fail "-a: frame invariants"
else
exact_pages "$TMP/a.jsonl" "$TMP/w1.json" "$TMP/w2.json" "$TMP/w3.json" ||
	fail "per-page counts under -a"
check_rows "$TMP/a.jsonl" memtop-workload "$TMP"/w[123].json ||
	fail "process rows under -a"
python3 - "$TMP/a.jsonl" "$TMP"/w[123].json <<'PY' || fail "-a frames"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
wpids = {json.load(open(p))["pid"] for p in sys.argv[2:]}
final = frames[-1]
assert final["targets"] == [], final["targets"]
assert final["follow"]["mode"] == "system", final["follow"]
sc = final["scope"]
assert sc["name"] == "all CPUs" and sc["offline"] == "" and sc["hotplug"] == 0, sc
pids = {t["pid"] for f in frames for t in f["threads"]}
assert wpids <= pids, f"workloads not sampled: {wpids - pids}"
others = pids - wpids
assert others, "no other process sampled under -a"
print(f"ok: -a: {len(others)} other processes sampled besides the workloads")
PY
fi

# Hotplug, faked: CPU 1 "goes offline" and comes back.
if [ "$(nproc)" -ge 2 ]; then
	echo "0-1" >"$TMP/online"
	MEMTOP_CPUS_ONLINE=$TMP/online start_memtop "$TMP/h.jsonl" -a -d 0.3 -k 5
	wait_frames "$TMP/h.jsonl" 1 || fail "hotplug: no first frame"
	# Three frames with CPU 1 offline (the first may still count what
	# its channel held), then two with it back.
	echo "0" >"$TMP/online"
	wait_scope "$TMP/h.jsonl" 0 3 || fail "hotplug: CPU 1 not shown offline"
	echo "0-1" >"$TMP/online"
	sleep 1
	wait_frames "$TMP/h.jsonl" $(($(wc -l <"$TMP/h.jsonl") + 2)) ||
		fail "hotplug: no frames after CPU 1 came back"
	stop_memtop
	[ "$MT_STATUS" -eq 0 ] || fail "hotplug run exited $MT_STATUS"
	python3 "$FRAMETOOL" check "$TMP/h.jsonl" || fail "hotplug: frame invariants"
	python3 - "$TMP/h.jsonl" <<'PY' || fail "hotplug frames"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
seen = [(f["scope"]["cpus"], f["scope"]["offline"], f["scope"]["hotplug"]) for f in frames]
assert seen[0] == ("0-1", "", 0), seen[0]
assert ("0", "1", 1) in seen, f"CPU 1 never shown offline: {seen}"
i = seen.index(("0", "1", 1))
assert any(s == ("0-1", "", 2) for s in seen[i:]), f"CPU 1 never back: {seen}"
off = [f for f in frames if f["scope"]["cpus"] == "0"]
# While its channel is closed nothing is counted on CPU 1 (the frame in
# which it closed may have some).
assert any(f["cpus"][1]["samples"] == 0 for f in off[1:]), [f["cpus"] for f in off]
print(f"ok: hotplug: {len(frames)} frames, closed and reopened, counted")
PY
	grep -q "CPU 1 went offline" "$TMP/h.jsonl.log" || fail "hotplug not logged"
	grep -q "CPU 1 went online" "$TMP/h.jsonl.log" || fail "return not logged"
else
	skip_part "one CPU online: the hotplug part needs two"
fi

# Real hotplug only when asked: it takes a CPU from everything else
# running on the machine for a few seconds.
if [ "${MEMTOP_TEST_HOTPLUG:-0}" = 1 ] && [ -w /sys/devices/system/cpu/cpu1/online ]; then
	cleanup_hooks+=('echo 1 >/sys/devices/system/cpu/cpu1/online')
	start_memtop "$TMP/r.jsonl" -a -d 0.3 -k 5
	wait_frames "$TMP/r.jsonl" 1 || fail "real hotplug: no first frame"
	echo 0 >/sys/devices/system/cpu/cpu1/online
	sleep 2.5
	echo 1 >/sys/devices/system/cpu/cpu1/online
	sleep 2.5
	stop_memtop
	[ "$MT_STATUS" -eq 0 ] || fail "real hotplug run exited $MT_STATUS"
	python3 "$FRAMETOOL" check "$TMP/r.jsonl" || fail "real hotplug: invariants"
	python3 "$FRAMETOOL" get "$TMP/r.jsonl" \
		'[f["scope"]["hotplug"] for f in frames][-1]' | grep -qx 2 ||
		fail "real hotplug: not counted twice"
	grep -q "CPU 1 went offline" "$TMP/r.jsonl.log" || fail "real hotplug not logged"
else
	skip_part "real CPU hotplug takes a CPU from the whole machine: MEMTOP_TEST_HOTPLUG=1 runs it"
fi
finish
