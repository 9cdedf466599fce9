#!/bin/bash
# NUMA acceptance tests on a two-node QEMU guest (tests/numa/): boots once,
# runs every scenario of tests/numa/scenarios.sh inside, and checks the
# JSON frames the guest printed here on the host with tests/numa/check.py:
# remote placement (memory on node 1, worker on node 0), local placement,
# --migrate-hot moving the hot pages to node 0, and under -a two processes
# each on the other node's memory (both rows remote-heavy) or each on its
# own (both local).
#
# Skips (exit 77) only when the guest cannot be built or run here: no
# qemu-system-x86_64, no cpio, or neither the pinned Debian kernel package
# (tests/numa/guest.sh) nor a Debian kernel in the host's /boot.  Under
# CI=true a skip is a failure: CI's machine provides all of them.  A guest
# that boots but misbehaves is a failure.
. "$(dirname "$0")/../lib/lib.sh"
. "$MEMTOP_SRCDIR/tests/numa/guest.sh"
need_python
# The checks are bound to the guest's time (frames of a few seconds of a
# workload under TCG); a sanitizer build of memtop is several times slower
# there: its first frame swallows the workload's steady phase, and hot
# pages first seen in a late frame are moved a frame late (both seen in
# CI's ASan phase).  The ASan phase covers these paths with test-nodemap,
# test-physnode, test-migrate and test-aggr-numa instead; the plain build
# runs the guest.
[ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ] &&
	skip "a sanitizer build: too slow for the guest's timed checks (the plain build runs them)"

: "${MEMTOP_PHYSNODE_TEST:=$MEMTOP_BUILDDIR/tests/numa/test-physnode-live}"
: "${MEMTOP_SHARED_REFAULT:=$MEMTOP_BUILDDIR/tests/numa/numa-shared-refault}"
: "${MEMTOP_NUMA_TIMEOUT:=480}"
CACHE="$MEMTOP_BUILDDIR/numa-guest"
NAMES="topology remote local migrate migrate_private crossed uncrossed"
# MEMTOP_NUMA_ONLY=A,B: only those scenarios (a shorter guest run, as the
# mutation gate asks for one mutation).
if [ -n "${MEMTOP_NUMA_ONLY:-}" ]; then
	NAMES=$(echo "$MEMTOP_NUMA_ONLY" | tr , ' ')
	MEMTOP_NUMA_APPEND="${MEMTOP_NUMA_APPEND:-} memtop.only=$MEMTOP_NUMA_ONLY"
fi

for b in "$MEMTOP" "$MEMTOP_WORKLOAD" "$MEMTOP_PHYSNODE_TEST" \
	 "$MEMTOP_SHARED_REFAULT"; do
	[ -x "$b" ] || { fail "not built: $b"; finish; }
done
command -v qemu-system-x86_64 >/dev/null ||
	skip_ci "qemu-system-x86_64 not installed (Debian package qemu-system-x86)"
command -v cpio >/dev/null || skip_ci "cpio not installed"
guest_fetch "$CACHE" || skip_ci "no guest kernel or busybox: $GUEST_WHY"
guest_initramfs "$CACHE" "$TMP/initrd.gz" \
	"$MEMTOP_SRCDIR/tests/numa/scenarios.sh" "$MEMTOP" "$MEMTOP_WORKLOAD" \
	"$MEMTOP_PHYSNODE_TEST" "$MEMTOP_SHARED_REFAULT" ||
	fail "initramfs: $GUEST_WHY"
[ "$failures" -eq 0 ] || finish

t0=$(date +%s.%N)
if ! guest_boot_again "$CACHE" "$TMP/initrd.gz" "$TMP/guest.log" \
		"$MEMTOP_NUMA_TIMEOUT" ${MEMTOP_NUMA_APPEND:-}; then
	fail "guest: $GUEST_WHY"
	echo "--- last lines of the guest console:"
	tail -n 40 "$TMP/guest.log"
	finish
fi
t1=$(date +%s.%N)

boot=$(sed -n 's/.*@@MEMTOP-GUEST uptime=\([0-9.]*\).*/\1/p' "$TMP/guest.log")
echo "guest: boot to /init ${boot}s (guest clock), whole run $(echo "$t0 $t1" |
	awk '{ printf "%.1f", $2 - $1 }')s wall (TCG, 2 vCPUs, 2 nodes)"
for name in $NAMES; do
	guest_section "$TMP/guest.log" "$name" >"$TMP/$name.out"
	echo "guest: scenario $name: $(guest_secs "$TMP/guest.log" "$name")s," \
	     "exit $(guest_rc "$TMP/guest.log" "$name")"
	if [ "$(guest_rc "$TMP/guest.log" "$name")" != 0 ]; then
		fail "$name: exit status $(guest_rc "$TMP/guest.log" "$name") in the guest"
		tail -n 20 "$TMP/$name.out"
		continue
	fi
	python3 "$MEMTOP_SRCDIR/tests/numa/check.py" "$name" "$TMP/$name.out" ||
		fail "$name"
done
if [ "$failures" -ne 0 ] &&
   cp "$TMP/guest.log" "$MEMTOP_BUILDDIR/numa-guest.log" 2>/dev/null; then
	echo "guest console kept in $MEMTOP_BUILDDIR/numa-guest.log"
fi
finish
