# Helpers for the whole-machine tests (-a, -G, -C): memtop in the
# background, waits for its frames, and the per-page check against the
# workloads' own reports.  Source after lib.sh.

# need_system: these views need root or CAP_PERFMON, or paranoid <= 0.
need_system() {
	local p
	p=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
	if [ "$(id -u)" -ne 0 ] && [ "$p" -gt 0 ]; then
		skip "perf_event_paranoid=$p and not root (-a needs CAP_PERFMON or paranoid <= 0)"
	fi
}

# start_memtop OUT ARGS...: memtop -b --json in the background, writing
# OUT (JSON Lines) and OUT.log; sets MT to its pid.
start_memtop() {
	local out=$1
	shift
	# Rings of 4 MiB a CPU: a whole machine's faults (a sanitizer build
	# drains slowly) must not overflow them, or counts cannot be exact.
	MEMTOP_RING_PAGES=${MEMTOP_RING_PAGES:-1024} \
	"$MEMTOP" -b --json -e faults -c 1 -s total --log "$out.log" \
		-o "$out" "$@" &
	MT=$!
	cleanup_hooks+=("kill_own $MT")
}

# wait_frames FILE N [SECONDS]: until FILE holds N lines.
wait_frames() {
	local file=$1 n=$2 limit=${3:-15} i
	for ((i = 0; i < limit * 10; i++)); do
		[ -f "$file" ] && [ "$(wc -l <"$file")" -ge "$n" ] && return 0
		sleep 0.1
	done
	echo "only $(wc -l <"$file" 2>/dev/null) frame(s) in $file after ${limit}s"
	return 1
}

# wait_scope FILE CPUS N [LIMIT]: waits (up to LIMIT s, 20) until N
# frames of FILE name CPUS as their scope's online CPUs; a slow
# (sanitized) memtop on a busy machine makes frames late.
wait_scope() {
	local file=$1 cpus=$2 n=$3 limit=${4:-20} i
	for ((i = 0; i < limit * 5; i++)); do
		python3 - "$file" "$cpus" "$n" <<'PY' && return 0
import json, sys
n = 0
for line in open(sys.argv[1]):
    try:
        n += json.loads(line)["scope"]["cpus"] == sys.argv[2]
    except ValueError:
        pass	# a line still being written
sys.exit(0 if n >= int(sys.argv[3]) else 1)
PY
		sleep 0.2
	done
	echo "fewer than $n frame(s) with CPUs $cpus in $file after ${limit}s"
	return 1
}

# stop_memtop: SIGINT, then its exit status in MT_STATUS.
stop_memtop() {
	kill_own -INT "$MT"
	wait "$MT"
	MT_STATUS=$?
}

# end_run FRAMES WHAT: once the workloads are done, two more frames (their
# last faults reach one), then the final frame; memtop must exit 0 and
# every frame's sums hold.
end_run() {
	local n
	n=$(wc -l <"$1")
	wait_frames "$1" $((n + 2)) || fail "$2: frames stopped"
	stop_memtop
	[ "$MT_STATUS" -eq 0 ] || fail "$2: memtop exited $MT_STATUS"
	python3 "$FRAMETOOL" check "$1" || fail "$2: frame invariants"
}

# check_exact FRAMES REPORT...: every hot page of every workload report
# has exactly its faults as its total in the final frame, under the
# workload's pid.
check_exact() {
	python3 - "$@" <<'PY'
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
final = frames[-1]
pages = {(p["pid"], int(p["addr"], 16)): p for p in final["pages"]}
bad = total = 0
for path in sys.argv[2:]:
    rep = json.load(open(path))
    for h in rep["hot"]:
        total += 1
        got = pages.get((rep["pid"], int(h["addr"], 16)), {}).get("total", 0)
        if got != h["faults"]:
            bad += 1
            if bad <= 5:
                print(f"pid {rep['pid']} page {h['addr']}: memtop {got}, workload {h['faults']}")
if bad and final["cumulative"]["lost"]:
    # Every loss is counted, but a page's count cannot be exact then.
    print(f"memtop lost {final['cumulative']['lost']} samples (counted)")
    sys.exit(77)
if bad:
    mine = {json.load(open(p))["pid"] for p in sys.argv[2:]}
    shown = [p for p in final["pages"] if p["pid"] in mine]
    lowest = min((p["total"] for p in final["pages"]), default=0)
    print(f"final frame: {len(final['pages'])} pages, lowest total "
          f"{lowest}, "
          f"{len(shown)} of the workloads'; seq {final['seq']}, "
          f"cumulative {final['cumulative']}")
    # The list cut at -k with pages all hotter than every workload page,
    # and none of the workloads' shown (one shown would be over-counted):
    # the machine's other processes (a busy CI host) outran them, and
    # the frame rightly shows theirs; exactness cannot be judged.
    most = max(h["faults"] for p in sys.argv[2:]
               for h in json.load(open(p))["hot"])
    if (len(final["pages"]) < final["tracked_pages"] and lowest > most and
            not shown):
        print(f"every shown page is hotter than the workloads' ({most} faults)")
        sys.exit(78)
assert bad == 0, f"{bad} of {total} hot pages disagree"
print(f"ok: {total} hot pages of {len(sys.argv) - 2} workload(s) exact")
PY
}

# exact_pages FRAMES REPORT...: check_exact, where a run that lost
# samples (counted, so exactness cannot be judged), or whose page list
# other processes filled with hotter pages, is a '# SKIP' part.
exact_pages() {
	check_exact "$@"
	case $? in
	0) return 0 ;;
	77) skip_part "exact per-page counts: memtop lost samples in this run (counted in the frame)" ;;
	78) skip_part "exact per-page counts: the machine's other processes filled the page list (-k) with hotter pages" ;;
	*) return 1 ;;
	esac
}

# check_rows FRAMES COMM REPORT...: each workload has process rows named
# COMM whose samples add up to the last row's total, covering its hot
# faults; its last row says it exited, and no row comes after it. A run
# that lost samples (counted; a lost record names no process) and so
# shows a workload without rows, or fewer samples than its hot faults,
# is a '# SKIP' part: the rows cannot be judged then.
check_rows() {
	python3 - "$@" <<'PY'
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
comm = sys.argv[2]
lost = frames[-1]["cumulative"]["lost"]
def unjudged(why):
    print(f"{why}; memtop lost {lost} samples (counted)")
    sys.exit(77)
for path in sys.argv[3:]:
    rep = json.load(open(path))
    pid = rep["pid"]
    rows = [p for f in frames for p in f["processes"] if p["pid"] == pid]
    if not rows and lost:
        unjudged(f"no process row for {pid}")
    assert rows, f"no process row for {pid}"
    names = {p["comm"] for p in rows}
    seqs = [f["seq"] for f in frames if any(p["pid"] == pid for p in f["processes"])]
    assert names == {comm}, f"{pid}: named {names}, not {comm}: {list(zip(seqs, rows))}"
    assert [p["alive"] for p in rows].count(False) == 1 and not rows[-1]["alive"], \
        f"{pid}: alive flags {[p['alive'] for p in rows]}"
    total = sum(p["samples"] for p in rows)
    assert total == rows[-1]["total"], f"{pid}: rows add to {total}, total {rows[-1]['total']}"
    hot = sum(h["faults"] for h in rep["hot"])
    if total < hot and lost:
        unjudged(f"{pid}: {total} samples < {hot} hot faults")
    assert total >= hot, f"{pid}: {total} samples < {hot} hot faults"
    assert max(p["threads"] for p in rows) >= rep["threads"], rows
print(f"ok: process rows of {len(sys.argv) - 3} workload(s): named, summed, shown dead once")
PY
	case $? in
	0) return 0 ;;
	77) skip_part "process rows: memtop lost samples in this run (counted in the frame)" ;;
	*) return 1 ;;
	esac
}
