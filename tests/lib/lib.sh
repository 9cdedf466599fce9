# Shared helpers for memtop's shell tests.  Source it; it sets MEMTOP,
# MEMTOP_WORKLOAD, TMP (removed on exit) and defines skip/fail/pass.
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

failures=0
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$TEST_NAME: $failures failure(s)"
		exit 1
	fi
	echo "$TEST_NAME: all passed"
	exit 0
}

# Skips unless this machine lets us sample page faults of our children.
need_perf() {
	local p
	p=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
	if [ "$(id -u)" -ne 0 ] && [ "$p" -gt 2 ]; then
		skip "perf_event_paranoid=$p (needs <= 2 or root)"
	fi
}
need_python() {
	command -v python3 >/dev/null || skip "python3 not installed"
}
