#!/bin/bash
# -a -C 1: a workload pinned to CPU 1 is sampled, its hot pages exactly;
# one pinned to CPU 0 is not sampled at all, and CPU 0 counts nothing.
# -C without -a or -G, or naming a CPU the machine lacks: usage errors.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/../lib/system.sh"
need_system
need_python
command -v taskset >/dev/null || skip "taskset not installed"
[ "$(nproc)" -ge 2 ] || skip "one CPU online: -C 1 needs two"

start_memtop "$TMP/c.jsonl" -a -C 1 -d 0.3 -k 3000
wait_frames "$TMP/c.jsonl" 1 || fail "no first frame"
# The workloads without LeakSanitizer in a sanitizer build: its check at
# exit runs in a tracer process of its own that shares their memory.
W="env ASAN_OPTIONS=detect_leaks=0 $MEMTOP_WORKLOAD --mode refault --duration 0 --interval-ms 2 --quiet --pages 512"
# The CPU 0 workload is forked from this shell pinned to CPU 0, so not
# one of its faults happens elsewhere; the CPU 1 one pins itself (its
# faults before that may fall on CPU 0: its hot pages come after).
old=$(taskset -p $$ | awk '{ print $NF }')
cleanup_hooks+=("taskset -p $old $$ >/dev/null 2>&1")
taskset -p 1 $$ >/dev/null
$W --hot 16 --rounds 30 --report "$TMP/cpu0.json" &
w0=$!
taskset -p "$old" $$ >/dev/null
taskset -c 1 $W --hot 16 --rounds 30 --report "$TMP/cpu1.json" &
w1=$!
wait $w0 || fail "CPU 0 workload failed"
wait $w1 || fail "CPU 1 workload failed"
end_run "$TMP/c.jsonl" "-a -C 1"
exact_pages "$TMP/c.jsonl" "$TMP/cpu1.json" || fail "CPU 1 workload's pages"
check_rows "$TMP/c.jsonl" memtop-workload "$TMP/cpu1.json" || fail "CPU 1 workload's rows"
python3 - "$TMP/c.jsonl" "$TMP/cpu0.json" <<'PY' || fail "-C 1 frames"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
w0 = json.load(open(sys.argv[2]))["pid"]
pids = {t["pid"] for f in frames for t in f["threads"]}
assert w0 not in pids, f"CPU 0 workload {w0} sampled under -C 1"
cpu0 = sum(f["cpus"][0]["samples"] for f in frames)
assert cpu0 == 0, f"{cpu0} samples on CPU 0 under -C 1"
sc = frames[-1]["scope"]
assert sc["name"] == "CPU 1" and sc["cpus"] == "1", sc
print(f"ok: -C 1: CPU 0 and its workload {w0} never sampled")
PY

for args in "-C 1 -p $$" "-C 0 -b -- true"; do
	"$MEMTOP" $args >"$TMP/o" 2>"$TMP/e"
	st=$?
	[ "$st" -eq 2 ] && grep -q -- "-C needs -a or -G" "$TMP/e" ||
		fail "memtop $args: exit $st: $(cat "$TMP/e")"
done
"$MEMTOP" -b -a -C 4095 >"$TMP/o" 2>"$TMP/e"
st=$?
[ "$st" -eq 2 ] && grep -q "CPU 4095 does not exist" "$TMP/e" ||
	fail "-C 4095: exit $st: $(cat "$TMP/e")"
finish
