#!/bin/bash
# Permissions of the whole-machine views.  An unprivileged user at
# kernel.perf_event_paranoid 2 (set for the test when it differs, and put
# back): -a, -G and -a -C exit 1 with one line naming the fix (CAP_PERFMON,
# root, or the sysctl); a cgroup that does not exist is one line too.
# Then, as root in a private mount namespace without tracefs, the faults
# source mounts tracefs at /sys/kernel/tracing and splits loads from
# stores.
. "$(dirname "$0")/../lib/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (to run memtop as nobody and set the sysctl)"

if command -v setpriv >/dev/null; then
	AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
elif command -v runuser >/dev/null; then
	AS_NOBODY=(runuser -u nobody --)
else
	skip "neither setpriv nor runuser installed"
fi
# nobody runs memtop from here; a build tree closed to it (a scratch
# copy under a private directory) gets a copy of the binary in ours.
NB_MEMTOP=$MEMTOP
if ! "${AS_NOBODY[@]}" test -x "$NB_MEMTOP" && [ -z "${MEMTOP_WRAPPER:-}" ]; then
	cp "$MEMTOP" "$TMP/memtop" && chmod 755 "$TMP/memtop" && chmod o+x "$TMP" &&
		NB_MEMTOP=$TMP/memtop
fi

PARANOID=/proc/sys/kernel/perf_event_paranoid
old=$(cat $PARANOID)
if [ "$old" != 2 ]; then
	cleanup_hooks+=("echo $old >$PARANOID")
	echo 2 >$PARANOID || skip "cannot set $PARANOID"
fi

MNT=$(awk '$3 == "cgroup" && $4 ~ /(^|,)perf_event(,|$)/ { print $2; exit }' /proc/mounts)
[ -n "$MNT" ] || MNT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CG=
if [ -n "$MNT" ] && mkdir "$MNT/memtop-perm-$$" 2>/dev/null; then
	CG=memtop-perm-$$
	cleanup_hooks+=('rmdir "$MNT/$CG"')
fi

# expect_fix ARGS...: exit 1, one line, the fix in it.
expect_fix() {
	"${AS_NOBODY[@]}" "$NB_MEMTOP" -b -n 1 "$@" >"$TMP/o" 2>"$TMP/e"
	local st=$?
	if [ "$st" -ne 1 ] || [ "$(wc -l <"$TMP/e")" -ne 1 ] ||
	   ! grep -q "CAP_PERFMON" "$TMP/e" ||
	   ! grep -q "kernel.perf_event_paranoid <= 0" "$TMP/e" ||
	   ! grep -q "sysctl -w kernel.perf_event_paranoid=0" "$TMP/e"; then
		fail "memtop $* as nobody: exit $st: $(cat "$TMP/e")"
	else
		ok "memtop $* as nobody: $(cat "$TMP/e")"
	fi
}
if ! "${AS_NOBODY[@]}" test -x "$NB_MEMTOP"; then
	skip_part "nobody cannot run $NB_MEMTOP: the unprivileged cases"
else
	expect_fix -a
	expect_fix -a -C 0
	if [ -n "$CG" ]; then
		expect_fix -G "$CG"
	else
		skip_part "no cgroup could be made under ${MNT:-(no mount)}: -G as nobody"
	fi
	"${AS_NOBODY[@]}" "$NB_MEMTOP" -b -n 1 -G memtop-no-such-cgroup-$$ \
		>"$TMP/o" 2>"$TMP/e"
	st=$?
	if { [ "$st" -eq 1 ] || [ "$st" -eq 2 ]; } &&
	   [ "$(wc -l <"$TMP/e")" -eq 1 ] && grep -q "no such cgroup" "$TMP/e"; then
		ok "missing cgroup: exit $st: $(cat "$TMP/e")"
	else
		fail "missing cgroup: exit $st: $(cat "$TMP/e")"
	fi
fi

# tracefs: unmounted in a namespace of our own, mounted again by memtop.
if command -v unshare >/dev/null &&
   unshare -m --propagation private true 2>/dev/null; then
	unshare -m --propagation private bash -c '
		umount /sys/kernel/tracing 2>/dev/null
		umount /sys/kernel/debug 2>/dev/null
		[ -e /sys/kernel/tracing/events ] && { echo STILL-MOUNTED; exit 0; }
		"$1" --list-events
		grep -c "^[^ ]* /sys/kernel/tracing tracefs" /proc/mounts' \
		bash "$MEMTOP" >"$TMP/t" 2>&1
	if grep -q STILL-MOUNTED "$TMP/t"; then
		skip_part "tracefs could not be unmounted in a private namespace: the mount test"
	elif grep -q "^faults  works: tracepoint/exceptions:page_fault_user" "$TMP/t" &&
	     [ "$(tail -1 "$TMP/t")" = 1 ]; then
		ok "tracefs mounted by memtop: $(grep '^faults' "$TMP/t" | cut -c1-80)"
	else
		fail "tracefs not mounted by memtop: $(cat "$TMP/t")"
	fi
else
	skip_part "unshare -m unavailable: the tracefs mount test"
fi
finish
