# Shared helpers for memtop's shell tests.  Source it; it sets MEMTOP,
# MEMTOP_WORKLOAD, TMP (removed on exit) and defines ok/fail/finish, the
# skips (skip, skip_part and their CI forms) and kill_own.
set -u

: "${MEMTOP_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${MEMTOP_BUILDDIR:=$MEMTOP_SRCDIR/build}"
: "${MEMTOP:=$MEMTOP_BUILDDIR/ui/memtop}"
: "${MEMTOP_WORKLOAD:=$MEMTOP_BUILDDIR/tools/memtop-workload}"
FRAMETOOL="$MEMTOP_SRCDIR/tests/lib/frametool.py"
TEST_NAME=$(basename "$0" .sh)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/memtop-$TEST_NAME.XXXXXX")
cleanup_hooks=()
lib_cleanup() {
	for h in "${cleanup_hooks[@]}"; do eval "$h"; done
	rm -rf "$TMP"
}
trap lib_cleanup EXIT
# A signal ends the test through exit, so the EXIT trap (cleanup hooks
# such as a sysctl put back) runs on every way out but SIGKILL.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# The valgrind test setup (tests/meson.build) sets MEMTOP_WRAPPER: memtop
# then runs under it, through a script where "$MEMTOP" is expected.
if [ -n "${MEMTOP_WRAPPER:-}" ]; then
	printf '#!/bin/bash\nexec %s %q "$@"\n' "$MEMTOP_WRAPPER" "$MEMTOP" \
		>"$TMP/memtop-wrapped"
	chmod 755 "$TMP/memtop-wrapped"
	# Tests may run it as another user (setpriv).
	chmod o+x "$TMP"
	MEMTOP=$TMP/memtop-wrapped
fi

# A sanitizer build (or valgrind) drains full rings several times slower:
# its final frame after a stop may take longer than the 3 s memtop waits
# by default (ui/report/batch.c).  Seen under TSan with 2 drain threads.
if [ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}${MEMTOP_WRAPPER:-}" ]; then
	export MEMTOP_QUIT_TIMEOUT_MS=${MEMTOP_QUIT_TIMEOUT_MS:-30000}
fi

failures=0
skipped=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
# skip REASON: the whole test cannot run here: exit 77, which meson counts
# as skipped.
skip() { echo "SKIP: $*"; exit 77; }
# skip_part REASON: a part of the test cannot run here.  Printed as a
# TAP-style "# SKIP REASON" line (scripts/test counts them) and counted;
# the rest runs, and finish() says how many parts were skipped.
skip_part() { echo "# SKIP $*"; skipped=$((skipped + 1)); }
# skip_ci REASON and skip_part_ci REASON: the same for what CI's machine
# provides (tracefs, the NUMA guest's kernel): under CI=true a failure.
skip_ci() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL: $* (CI=true: CI's machine must run this test)"
		exit 1
	fi
	skip "$@"
}
skip_part_ci() {
	if [ "${CI:-}" = true ]; then
		fail "$* (CI=true: CI's machine must run this part)"
	else
		skip_part "$@"
	fi
}
finish() {
	local parts=
	[ "$skipped" -eq 0 ] || parts=", $skipped part(s) skipped (# SKIP above)"
	if [ "$failures" -ne 0 ]; then
		echo "$TEST_NAME: $failures failure(s)$parts"
		exit 1
	fi
	if [ "$skipped" -ne 0 ]; then
		echo "$TEST_NAME: passed$parts"
	else
		echo "$TEST_NAME: all passed"
	fi
	exit 0
}

# stat_field PID N: field N (3 or more, numbered as in proc(5)) of
# /proc/PID/stat, read past the command name in parentheses; nothing once
# PID is gone.
stat_field() {
	local stat n=$2
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	stat=${stat##*) }
	# shellcheck disable=SC2086
	set -- $stat
	[ $# -ge $((n - 2)) ] && shift $((n - 3)) && echo "$1"
	return 0
}
# ppid_of PID: PID's parent; nothing once PID is gone.
ppid_of() { stat_field "$1" 4; }

# kill_own [-SIGNAL] PID...: signals each PID only while it is an unreaped
# child of this shell, so never a process that reused the pid of one this
# test started and already waited for.
kill_own() {
	local sig=-TERM pid
	case "${1:-}" in -*) sig=$1; shift ;; esac
	for pid in "$@"; do
		[ "$(ppid_of "$pid")" = "$$" ] && kill "$sig" "$pid" 2>/dev/null
	done
	return 0
}

# Skips unless this machine lets us sample page faults of our children.
need_perf() {
	local p
	p=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
	if [ "$(id -u)" -ne 0 ] && [ "$p" -gt 2 ]; then
		skip "perf_event_paranoid=$p (needs <= 2 or root)"
	fi
}
# perf_faults_part WHAT FILE CMD...: `perf record -e page-faults -c 1 -d`
# of CMD into FILE.  0 when it worked; else a "# SKIP WHAT: why" line
# (perf missing, or it cannot record here) and 1.
perf_faults_part() {
	local what=$1 file=$2
	shift 2
	if ! command -v perf >/dev/null; then
		skip_part "$what: perf not installed (Debian package linux-perf)"
		return 1
	fi
	if ! perf record -q -e page-faults -c 1 -d -o "$file" -- "$@" \
		>/dev/null 2>"$file.err"; then
		skip_part "$what: perf record cannot run here: $(head -n 1 "$file.err")"
		return 1
	fi
}
# tracepoint_why: why the faults source cannot use its tracepoint
# (exceptions:page_fault_user) here; nothing when it can.
tracepoint_why() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "not root"
	elif [ ! -e /sys/kernel/tracing/events ]; then
		echo "tracefs not mounted at /sys/kernel/tracing (scripts/test mounts it as root)"
	elif [ -z "$(ls /sys/kernel/tracing/events/exceptions 2>/dev/null)" ]; then
		echo "no exceptions tracepoints in /sys/kernel/tracing/events"
	fi
}
need_python() {
	command -v python3 >/dev/null || skip "python3 not installed"
}

# helper_confined WHAT LOG: the helper process memtop logged as "WHAT
# started: pid N" in LOG (src/names/sandbox.c), seen from /proc while it
# runs: seccomp mode 2, no_new_privs, and nobody when the test is root.
# memtop logs the pid right after fork, before the child has confined
# itself (a slow fork under a sanitizer shows it unconfined for a while),
# so /proc is read again until the filter is in or 5 s have passed. A
# helper not caught while it ran is a skipped part.
helper_confined() {
	local what=$1 log=$2 helper= st= cur seccomp nnp uid nobody
	for _ in $(seq 1 60); do
		helper=$(sed -n "s/.*$what started: pid \([0-9]*\).*/\1/p" \
			"$log" 2>/dev/null | tail -1)
		[ -n "$helper" ] && [ -r "/proc/$helper/status" ] && break
		sleep 0.05
	done
	for _ in $(seq 1 100); do
		[ -n "$helper" ] && cur=$(cat "/proc/$helper/status" 2>/dev/null) ||
			break	# gone: judged on the last status read
		st=$cur
		seccomp=$(printf '%s\n' "$st" | awk '/^Seccomp:/ {print $2}')
		[ "$seccomp" = 2 ] && break
		sleep 0.05
	done
	if [ -z "$helper" ] || [ -z "$st" ]; then
		skip_part "$what's /proc status: not caught while it ran"
		return
	fi
	seccomp=$(printf '%s\n' "$st" | awk '/^Seccomp:/ {print $2}')
	nnp=$(printf '%s\n' "$st" | awk '/^NoNewPrivs:/ {print $2}')
	uid=$(printf '%s\n' "$st" | awk '/^Uid:/ {print $2, $3, $4, $5}')
	local bad=0
	[ "$seccomp" = 2 ] ||
		{ fail "$what $helper: Seccomp: $seccomp, want 2"; bad=1; }
	[ "$nnp" = 1 ] ||
		{ fail "$what $helper: NoNewPrivs: $nnp, want 1"; bad=1; }
	if [ "$(id -u)" = 0 ]; then
		nobody=$(id -u nobody 2>/dev/null || echo 65534)
		[ "$uid" = "$nobody $nobody $nobody $nobody" ] ||
			{ fail "$what $helper: Uid: $uid, want nobody ($nobody)"; bad=1; }
	fi
	[ "$bad" = 0 ] &&
		ok "$what $helper: Seccomp $seccomp, NoNewPrivs $nnp, Uid $uid"
}
