# Helpers shared by tests/chaos/*.sh.  Source after ../lib/lib.sh.
# MEMTOP_CHURN and MEMTOP_ZOMBIE name the helper programs built from
# tests/chaos/*.c.
: "${MEMTOP_CHURN:=$MEMTOP_BUILDDIR/tests/chaos/churn}"
: "${MEMTOP_ZOMBIE:=$MEMTOP_BUILDDIR/tests/chaos/zombie}"

# The sanitizer runtimes (ASan build) must fail a run, not just print.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

now_ms() { date +%s%3N; }

# fd_count PID: open descriptors of PID, or nothing once it is gone.
fd_count() {
	local n
	n=$(ls "/proc/$1/fd" 2>/dev/null | wc -l) || return 1
	[ -d "/proc/$1" ] && echo "$n"
}

# rss_kb PID: resident set size in KiB.
rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

# watch_proc PID OUT [PERIOD]: until PID is gone, appends
# "ms_since_start fds rss_kb" to OUT every PERIOD seconds (default 0.25).
watch_proc() {
	local pid=$1 out=$2 period=${3:-0.25} t0 fds rss
	t0=$(now_ms)
	: >"$out"
	while [ -d "/proc/$pid" ]; do
		fds=$(fd_count "$pid") || break
		rss=$(rss_kb "$pid")
		[ -n "$fds" ] && [ -n "$rss" ] &&
			echo "$(($(now_ms) - t0)) $fds $rss" >>"$out"
		sleep "$period"
	done
}

# wait_gone PID SECONDS: 0 once PID has exited (zombies count as gone
# only for our own children, which `wait` reaps), 1 on timeout.
wait_gone() {
	local pid=$1 limit=$2 i
	for ((i = 0; i < limit * 20; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# final_ok FRAMES: the file ends with a final frame, every target dead.
final_ok() {
	python3 - "$1" <<'PY'
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
f = frames[-1]
assert f["final"] is True, "last frame is not final"
alive = [t for t in f["targets"] if t["alive"]]
assert not alive, f"targets still alive in the final frame: {alive}"
PY
}

# sums_ok FRAMES: frametool's per-frame checks on a run cut short by -n N
# (whose N-th frame is written as it comes, not final).
sums_ok() {
	python3 - "$FRAMETOOL" "$1" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("frametool", sys.argv[1])
ft = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ft)
frames = ft.load(sys.argv[2])
frames[-1]["final"] = True
ft.check(frames)
PY
}

# run_reaped LEFT CMD...: runs CMD below a child subreaper (python3,
# PR_SET_CHILD_SUBREAPER), so that whatever CMD leaves running is
# re-parented to it rather than to init and is known to be this test's
# own; writes how many such processes were still running (zombies aside)
# when CMD ended to LEFT, kills them by pid, and returns CMD's status.
run_reaped() {
	python3 -c '
import ctypes, os, signal, subprocess, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
    sys.exit("run_reaped: prctl(PR_SET_CHILD_SUBREAPER) failed")
status = subprocess.call(sys.argv[2:])
def children():
    try:
        with open("/proc/self/task/%d/children" % os.getpid()) as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []
def running(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False
left = [p for p in children() if running(p)]
with open(sys.argv[1], "w") as f:
    f.write("%d\n" % len(left))
for p in left:
    os.kill(p, signal.SIGKILL)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
sys.exit(status if status >= 0 else 128 - status)
' "$@"
}
