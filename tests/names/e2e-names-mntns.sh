#!/bin/bash
# Names of a process in another mount namespace: names-test runs under
# `unshare -m` from a private copy of the executable in a tmpfs mounted
# only inside that namespace (so the path does not exist for memtop), and
# maps a file there too.  memtop, outside, must still name its regions and
# find its symbols: it opens the file through /proc/PID/root.
# Skips (77) when unshare -m is not permitted here.
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python
: "${MEMTOP_NAMES_TEST:=$MEMTOP_BUILDDIR/tests/names/names-test}"
CHECK="$MEMTOP_SRCDIR/tests/names/names-check.py"
[ -x "$MEMTOP_NAMES_TEST" ] || skip "names-test not built ($MEMTOP_NAMES_TEST)"
command -v unshare >/dev/null || skip "unshare not installed (util-linux)"
PRIV="$TMP/priv"
mkdir -p "$PRIV"
unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs "$1"' sh \
	"$PRIV" 2>/dev/null || skip "unshare -m and mount not permitted here"

"$MEMTOP" -b --json -e faults -d 0.2 -s total -k 500 -o "$TMP/ns.jsonl" -- \
	unshare -m --propagation private sh -c '
		mount -t tmpfs tmpfs "$1" &&
		cp "$2" "$1/names-test" &&
		exec "$1/names-test" --report "$3" --file "$1/data.bin" \
			--linger-ms 1500' sh "$PRIV" "$MEMTOP_NAMES_TEST" \
	"$TMP/ns-report.json"
status=$?
[ "$status" -eq 0 ] || fail "memtop exited $status"
[ -s "$TMP/ns-report.json" ] || fail "names-test wrote no report"
# The private copy is invisible out here: names come through the target.
[ ! -e "$PRIV/names-test" ] || fail "$PRIV/names-test visible outside the namespace"
grep -q "\"exe\":\"$PRIV/names-test\"" "$TMP/ns-report.json" ||
	fail "names-test did not run from the private copy"
python3 "$FRAMETOOL" check "$TMP/ns.jsonl" || fail "frame invariants"
python3 "$CHECK" "$TMP/ns.jsonl" "$TMP/ns-report.json" || fail "names"
finish
