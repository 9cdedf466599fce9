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
# check_scenarios LABEL LOG NAME...: each scenario's section of LOG
# checked, its lines and failures prefixed with LABEL; a scenario whose
# only failures are what DAMON's sampling saw under TCG (check_access.py
# exits 3: sampled_check) goes in $sampled_only instead of failing.
check_scenarios() {
	local label=$1 log=$2 name rc st
	shift 2
	for name in "$@"; do
		guest_section "$log" "$name" >"$TMP/$name.out"
		rc=$(guest_rc "$log" "$name")
		echo "guest: ${label}scenario $name:" \
			"$(guest_secs "$log" "$name")s, exit $rc"
		python3 "$MEMTOP_SRCDIR/tests/numa/check_access.py" "$name" \
			"$TMP/$name.out" "$rc"
		st=$?
		if [ "$st" -eq 3 ]; then
			sampled_only+=("$name")
		elif [ "$st" -ne 0 ]; then
			fail "$label$name"
		fi
	done
}
sampled_only=()
# shellcheck disable=SC2086
check_scenarios "" "$TMP/guest.log" $NAMES
# DAMON checks one page a region and splits its regions at random points,
# and TCG may hide accesses from it: a run may see the read cluster hot in
# no frame while this boot's bare driver saw it (a CI run: bare 16 of 16
# in every snapshot, -e damon 0 in 18 frames), or the written cluster in
# every frame of one boot and in none after the fifth of the next. Such a
# run boots the guest once more for those scenarios; a second miss fails.
# damon_regions (the bare driver) runs first when -e damon is among them:
# its word on the reads (the file above) is the read check's oracle.
if [ "${#sampled_only[@]}" -gt 0 ]; then
	first=("${sampled_only[@]}")
	sampled_only=()
	again=()
	case " ${first[*]} " in
	*" damon "* | *" damon_regions "*) again=(damon_regions) ;;
	esac
	for name in "${first[@]}"; do
		[ "$name" = damon_regions ] || again+=("$name")
	done
	left=$((MEMTOP_NUMA_TIMEOUT - SECONDS))
	rm -f "$MEMTOP_ACCESS_READS_HIDDEN"
	why="twice"
	if [ "$left" -le $((90 + 30 * ${#again[@]})) ]; then
		why="once, and no time was left to boot again (${left}s)"
	else
		echo "guest: DAMON's sampling missed a cluster (${first[*]});" \
			"booting once more for ${again[*]} (${left}s left)"
		# shellcheck disable=SC2086
		if guest_boot_again "$CACHE" "$TMP/initrd.gz" "$TMP/guest2.log" \
			"$left" pti=on ${MEMTOP_NUMA_APPEND:-} \
			memtop.only="$(IFS=,; echo "${again[*]}")"; then
			check_scenarios "retry boot: " "$TMP/guest2.log" \
				"${again[@]}"
		else
			why="once, and the retry boot failed: $GUEST_WHY"
			echo "--- last lines of the retry boot's console:"
			tail -n 40 "$TMP/guest2.log"
		fi
	fi
	[ "$why" = twice ] || sampled_only=("${first[@]}")
	for name in "${sampled_only[@]}"; do
		# The bare driver's misses count only when it missed before.
		[ "$name" != damon_regions ] ||
			[[ " ${first[*]} " == *" damon_regions "* ]] || continue
		fail "$name: DAMON's sampling missed a cluster $why"
	done
fi
if [ "$failures" -ne 0 ]; then
	for log in guest guest2; do
		[ -f "$TMP/$log.log" ] &&
			cp "$TMP/$log.log" "$MEMTOP_BUILDDIR/access-$log.log" &&
			echo "guest console kept in $MEMTOP_BUILDDIR/access-$log.log"
	done
fi
finish
