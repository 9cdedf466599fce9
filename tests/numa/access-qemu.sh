#!/bin/bash
# Access heat without a PMU (issue 19), on the two-node QEMU guest booting
# Debian 13's kernel (tests/numa/guest.sh, guest_use_trixie): soft-dirty
# re-arm (--rearm) and the DAMON source (-e damon), checked against the
# ground truth of tests/numa/access-clusters by tests/numa/check_access.py.
# The scenarios are tests/numa/scenarios-access.sh.
#
# The guest boots with pti=on: DAMON clears accessed bits without a TLB
# flush, and QEMU's software TLB (TCG) keeps a translation until the next
# page-table switch, which page-table isolation makes happen at every
# kernel entry; without it a page that is only read looks idle.
#
# Skips (exit 77) when the guest cannot be built or run here (as
# numa-qemu.sh); under CI=true a skip is a failure.
. "$(dirname "$0")/../lib/lib.sh"
. "$MEMTOP_SRCDIR/tests/numa/guest.sh"
need_python
# The checks are bound to the guest's time (frames and DAMON snapshots in
# a few seconds of TCG); a sanitizer build of memtop is several times
# slower there and makes too few of either.  The ASan phase covers these
# paths with test-damon, test-softdirty and e2e-nopmu.sh instead.
[ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ] &&
	skip "a sanitizer build: too slow for the guest's timed checks (the plain build runs them)"

: "${MEMTOP_ACCESS_CLUSTERS:=$MEMTOP_BUILDDIR/tests/numa/access-clusters}"
: "${MEMTOP_DAMON_LIVE:=$MEMTOP_BUILDDIR/tests/numa/damon-live}"
: "${MEMTOP_NUMA_TIMEOUT:=480}"
CACHE="$MEMTOP_BUILDDIR/numa-guest-trixie"
NAMES=$(sed -n 's/^SCENARIOS="\(.*\)"/\1/p' \
	"$MEMTOP_SRCDIR/tests/numa/scenarios-access.sh")
# MEMTOP_ACCESS_ONLY=A,B: only those scenarios (a shorter guest run).
if [ -n "${MEMTOP_ACCESS_ONLY:-}" ]; then
	NAMES=$(echo "$MEMTOP_ACCESS_ONLY" | tr , ' ')
	MEMTOP_NUMA_APPEND="${MEMTOP_NUMA_APPEND:-} memtop.only=$MEMTOP_ACCESS_ONLY"
fi

for b in "$MEMTOP" "$MEMTOP_ACCESS_CLUSTERS" "$MEMTOP_DAMON_LIVE"; do
	[ -x "$b" ] || { fail "not built: $b"; finish; }
done
command -v qemu-system-x86_64 >/dev/null ||
	skip_ci "qemu-system-x86_64 not installed (Debian package qemu-system-x86)"
command -v cpio >/dev/null || skip_ci "cpio not installed"
guest_use_trixie
guest_fetch "$CACHE" || skip_ci "no guest kernel or busybox: $GUEST_WHY"
guest_initramfs "$CACHE" "$TMP/initrd.gz" \
	"$MEMTOP_SRCDIR/tests/numa/scenarios-access.sh" "$MEMTOP" \
	"$MEMTOP_ACCESS_CLUSTERS" "$MEMTOP_DAMON_LIVE" || fail "initramfs: $GUEST_WHY"
[ "$failures" -eq 0 ] || finish

if ! guest_boot_again "$CACHE" "$TMP/initrd.gz" "$TMP/guest.log" \
		"$MEMTOP_NUMA_TIMEOUT" pti=on ${MEMTOP_NUMA_APPEND:-}; then
	fail "guest: $GUEST_WHY"
	echo "--- last lines of the guest console:"
	tail -n 40 "$TMP/guest.log"
	finish
fi
echo "guest: $(cat "$CACHE/kernel.id"), boot to /init" \
	"$(sed -n 's/.*@@MEMTOP-GUEST uptime=\([0-9.]*\).*/\1/p' "$TMP/guest.log")s"
# damon_regions (the bare driver) runs before -e damon in the same boot
# and leaves this file when its DAMON saw no read: check_access.py.
export MEMTOP_ACCESS_READS_HIDDEN="$TMP/reads-hidden"
for name in $NAMES; do
	guest_section "$TMP/guest.log" "$name" >"$TMP/$name.out"
	rc=$(guest_rc "$TMP/guest.log" "$name")
	echo "guest: scenario $name: $(guest_secs "$TMP/guest.log" "$name")s, exit $rc"
	python3 "$MEMTOP_SRCDIR/tests/numa/check_access.py" "$name" \
		"$TMP/$name.out" "$rc" || fail "$name"
done
if [ "$failures" -ne 0 ] &&
   cp "$TMP/guest.log" "$MEMTOP_BUILDDIR/access-guest.log" 2>/dev/null; then
	echo "guest console kept in $MEMTOP_BUILDDIR/access-guest.log"
fi
finish
