#!/bin/bash
# The no-PMU access modes (issue 19) on this machine, touching nothing
# shared: DAMON's sysfs is only read when a kdamond exists (memtop then
# only reads it too); with none, memtop may make and remove one of its
# own to ask the kernel's operations, and runs DAMON only where this
# kernel's config says it has no vaddr operations (then -e auto must move
# on to another source, so no kdamond runs).  The real soft-dirty and DAMON runs are in the
# guest (tests/numa/access-qemu.sh).
#   --rearm: the note says what the samples mean (soft-dirty kernel, found
#     here from pagemap's bit 55 on a page this test wrote) or why --rearm
#     is off; MEMTOP_SOFTDIRTY=0 forces the latter; the source runs.
#   -e damon --record, and -a -C: refused with one line before DAMON is read
#   -e damon with another user's kdamond (nr_kdamonds > 0 here): exit 1,
#     one line naming kdamond 0's state and pid as sysfs shows them, and
#     nr_kdamonds, state and pid unchanged after; -e auto passes it over
#     and says why.
#   no kdamond here (nr_kdamonds 0) and the kernel's config
#     (/proc/config.gz or /boot/config-$(uname -r)) says
#     CONFIG_DAMON_VADDR is not set: -e auto opens another source and runs
#     (it used to pick damon and then fail to start it), --list-events
#     says why damon is out, and nr_kdamonds stays 0.
. "$(dirname "$0")/../lib/lib.sh"
need_python

softdirty=$(python3 - <<'PY'
import mmap, struct
m = mmap.mmap(-1, 4096)
m[0:1] = b"x"
import ctypes
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
with open("/proc/self/pagemap", "rb") as f:
    f.seek(addr // 4096 * 8)
    print((struct.unpack("<Q", f.read(8))[0] >> 55) & 1)
PY
)
echo "pagemap soft-dirty bit after a write: $softdirty"

note() {	# note ENV... : the first frame's source_note of a --rearm run
	env "$@" "$MEMTOP" -b --json -e faults --rearm -d 0.3 -n 2 -- \
		"$MEMTOP_ACCESS_CLUSTERS" --secs 1 >"$TMP/rearm.json" 2>"$TMP/err" ||
		{ fail "--rearm run: $(cat "$TMP/err")"; return; }
	python3 -c 'import json,sys; f=[json.loads(l) for l in open(sys.argv[1])]
print(f[0]["source_note"]); print("SAMPLES", sum(x["totals"]["samples"] for x in f))' \
		"$TMP/rearm.json"
}
out=$(note MEMTOP_SOFTDIRTY=1)
if [ "$softdirty" = 1 ]; then
	echo "$out" | grep -q "first write per page per interval" &&
		echo "$out" | grep -q "loads are not seen" &&
		ok "--rearm: the note says first writes, loads not seen" ||
		fail "--rearm note: $out"
else
	echo "$out" | grep -q "^--rearm not available: kernel without soft-dirty" &&
		ok "--rearm on a kernel without soft-dirty: the note says why" ||
		fail "--rearm note: $out"
fi
out=$(note MEMTOP_SOFTDIRTY=0)
echo "$out" | grep -q "^--rearm not available" &&
	ok "MEMTOP_SOFTDIRTY=0: --rearm off, said" || fail "forced off: $out"
[ "$(echo "$out" | sed -n 's/^SAMPLES //p')" -gt 0 ] 2>/dev/null &&
	ok "the faults source runs without --rearm" || fail "no samples: $out"

D=/sys/kernel/mm/damon/admin/kdamonds
if [ ! -r "$D/nr_kdamonds" ]; then
	"$MEMTOP" -b -e damon -n 1 -- true 2>"$TMP/err"
	[ $? -eq 1 ] && grep -q "CONFIG_DAMON_SYSFS" "$TMP/err" &&
		ok "no DAMON sysfs: -e damon says so" || fail "$(cat "$TMP/err")"
elif [ "$(cat "$D/nr_kdamonds")" -eq 0 ]; then
	if { zcat /proc/config.gz 2>/dev/null ||
	     cat "/boot/config-$(uname -r)" 2>/dev/null; } |
		grep -qx "# CONFIG_DAMON_VADDR is not set"; then
		"$MEMTOP" -b -n 1 -d 0.2 -- true >"$TMP/out" 2>"$TMP/err"
		rc=$?
		[ $rc -eq 0 ] && ! grep -q " source damon" "$TMP/out" &&
			ok "no vaddr operations: -e auto opens another source" ||
			fail "no vaddr operations: -e auto exit $rc: $(cat "$TMP/err")"
		"$MEMTOP" --list-events 2>&1 | grep "^damon" |
			grep -q "without DAMON's vaddr operations" &&
			ok "--list-events says damon lacks vaddr operations" ||
			fail "--list-events: $("$MEMTOP" --list-events 2>&1 | grep "^damon")"
		[ "$(cat "$D/nr_kdamonds")" -eq 0 ] &&
			ok "no kdamond left behind" ||
			fail "nr_kdamonds $(cat "$D/nr_kdamonds") after memtop"
	else
		skip_part "-e auto without vaddr operations: this kernel's config (/proc/config.gz, /boot) does not say CONFIG_DAMON_VADDR is off"
	fi
	skip_part "-e damon refusal: no kdamond here (memtop would set one up; real DAMON runs are in the guest only)"
else
	before="$(cat "$D/nr_kdamonds") $(cat "$D/0/state") $(cat "$D/0/pid")"
	"$MEMTOP" -b -e damon -n 1 -- true >/dev/null 2>"$TMP/err"
	rc=$?
	after="$(cat "$D/nr_kdamonds") $(cat "$D/0/state") $(cat "$D/0/pid")"
	set -- $before
	[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
		grep -q "kdamond 0: state $2, pid $3" "$TMP/err" &&
		ok "-e damon refuses another user's kdamond: $(cat "$TMP/err")" ||
		fail "-e damon: exit $rc: $(cat "$TMP/err")"
	[ "$before" = "$after" ] && ok "kdamonds unchanged ($after)" ||
		fail "kdamonds changed: $before -> $after"
	"$MEMTOP" -b --json -e auto -n 1 -- true >"$TMP/auto.json" 2>"$TMP/err"
	grep -q "damon: another DAMON user" "$TMP/auto.json" &&
		ok "-e auto says why it passed damon over" ||
		fail "-e auto note: $(head -c 600 "$TMP/auto.json")"
fi
# What -e damon refuses before it reads DAMON's sysfs at all: one line,
# exit 1, nothing written (no --record file either).
refused() { # WHAT PATTERN ARGS...
	local what=$1 pat=$2 rc
	shift 2
	"$MEMTOP" -b -e damon -n 1 "$@" >/dev/null 2>"$TMP/err"
	rc=$?
	[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
		grep -q -- "$pat" "$TMP/err" && ok "-e damon $what: $(cat "$TMP/err")" ||
		fail "-e damon $what: exit $rc: $(cat "$TMP/err")"
}
refused "--record" "--record writes perf events and DAMON has none" \
	--record "$TMP/d.data" -- true
[ ! -e "$TMP/d.data" ] && ok "no recording made" || fail "$TMP/d.data made"
refused "-a -C 0" "-G and -C watch part of the machine" -a -C 0
finish
