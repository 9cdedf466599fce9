#!/bin/bash
# -G: a workload in a fresh cgroup (made under the hierarchy memtop uses,
# found in /proc/mounts: the cgroup v1 perf_event mount if there is one,
# else the cgroup2 mount) and one outside it, both started after memtop:
# only the inside one is sampled, and its hot pages exactly.  The cgroup
# is removed on every way out.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/../lib/system.sh"
need_system
need_python
[ "$(id -u)" -eq 0 ] || skip "making a cgroup needs root"

MNT=$(awk '$3 == "cgroup" && $4 ~ /(^|,)perf_event(,|$)/ { print $2; exit }' /proc/mounts)
[ -n "$MNT" ] || MNT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$MNT" ] || skip "no cgroup2 mount and no cgroup v1 perf_event mount"
NAME=memtop-test-$$
CG=$MNT/$NAME
mkdir "$CG" || skip "cannot make a cgroup under $MNT"
# Processes still inside (a failed run) are ours: end them, then rmdir.
cleanup_hooks+=('kill_own $(cat "$CG/cgroup.procs" 2>/dev/null); sleep 0.2; rmdir "$CG"')

start_memtop "$TMP/g.jsonl" -G "$NAME" -d 0.3 -k 500
wait_frames "$TMP/g.jsonl" 1 || fail "no first frame"
# The workloads without LeakSanitizer in a sanitizer build: its check at
# exit runs in a tracer process of its own that shares their memory.
W="env ASAN_OPTIONS=detect_leaks=0 $MEMTOP_WORKLOAD --mode refault --duration 0 --interval-ms 2 --quiet --pages 512"
sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG" \
	$W --hot 24 --rounds 15 --threads 2 --interval-ms 40 \
	--report "$TMP/in.json" &
win=$!
$W --hot 24 --rounds 15 --report "$TMP/out.json" &
wout=$!
wait $win || fail "inside workload failed"
wait $wout || fail "outside workload failed"
end_run "$TMP/g.jsonl" "-G"
exact_pages "$TMP/g.jsonl" "$TMP/in.json" || fail "inside workload's pages"
check_rows "$TMP/g.jsonl" memtop-workload "$TMP/in.json" || fail "inside workload's rows"
python3 - "$TMP/g.jsonl" "$TMP/in.json" "$TMP/out.json" "/$NAME" <<'PY' || fail "-G frames"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
inside = json.load(open(sys.argv[2]))["pid"]
outside = json.load(open(sys.argv[3]))["pid"]
pids = {t["pid"] for f in frames for t in f["threads"]} | \
       {p["pid"] for f in frames for p in f["pages"]}
assert pids == {inside}, f"sampled {pids}; only {inside} is in the cgroup (outside: {outside})"
sc = frames[-1]["scope"]
assert sc["name"] == "cgroup " + sys.argv[4], sc
# Its row names its cgroup, read from /proc at the first frame after its
# first sample (it runs for several frames: 15 rounds 40 ms apart).
cgs = {p["cgroup"] for f in frames for p in f["processes"] if p["pid"] == inside}
assert cgs <= {sys.argv[4], None} and sys.argv[4] in cgs, f"cgroup column {cgs}"
print(f"ok: -G: only the inside workload ({inside}) sampled, not {outside}")
PY

# A cgroup that does not exist: one line, exit 1; overlapping ones: 2.
"$MEMTOP" -b -G "$NAME-nosuch" >"$TMP/o" 2>"$TMP/e"
st=$?
[ "$st" -eq 1 ] || fail "missing cgroup: exit $st, expected 1"
[ "$(wc -l <"$TMP/e")" -eq 1 ] && grep -q "no such cgroup" "$TMP/e" ||
	fail "missing cgroup: $(cat "$TMP/e")"
mkdir "$CG/sub" && cleanup_hooks+=('rmdir "$CG/sub" 2>/dev/null')
"$MEMTOP" -b -G "$NAME,$NAME/sub" >"$TMP/o" 2>"$TMP/e"
st=$?
[ "$st" -eq 2 ] || fail "overlapping cgroups: exit $st, expected 2"
grep -q "overlap" "$TMP/e" || fail "overlapping cgroups: $(cat "$TMP/e")"
rmdir "$CG/sub"
finish
