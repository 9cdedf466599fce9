#!/bin/bash
# The sampling period as the real collector applies it, checked against an
# oracle outside memtop: the kernel's own count of the workload's page
# faults (/proc/PID/stat minflt; the workload's --report repeats it as
# rusage_minflt at exit, and it is what `perf stat -e page-faults` counts).
#
# memtop -e faults runs in its TUI in a private tmux server; the test stops
# the workload (SIGSTOP, by pid), presses a period key, waits until the
# header shows the period in force, lets the workload run for a while and
# stops it again.  Between two quiet points memtop's cumulative count
# (samples + lost + unattributed + untracked, from the header) must be the
# phase's fault count divided by the period, within the bound check_ratio
# (tests/lib/live-tui.sh) derives from the sampling itself.
#
#   -p PID:        period 1, +  (2), + (4), - (2), p 7 Enter (7)
#   -- COMMAND:    -c 3 with inherited per-CPU channels (before the
#                  switch), + (6: the switch to per-thread channels),
#                  - (3), p 7 Enter (7)
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python
. "$MEMTOP_SRCDIR/tests/lib/live-tui.sh"

PHASE_S=${MEMTOP_ORACLE_PHASE_S:-1.2}
WL_ARGS=(--mode refault --threads 2 --hot 64 --pages 1024 --interval-ms 1
	 --duration 0 --quiet)

# period_phase WHAT PID PERIOD: one measured phase at PERIOD (the header
# already shows it); the workload is stopped before and after.
period_phase() {
	local what=$1 pid=$2 p=$3 c0 f0 n
	quiesce "$pid" || { fail "$what: memtop not quiet before the phase"; return; }
	c0=$CUM
	f0=$FLT
	run_for "$pid" "$PHASE_S" || { fail "$what: workload did not stop"; return; }
	quiesce "$pid" || { fail "$what: memtop not quiet after the phase"; return; }
	n=$(ls /proc/"$pid"/task | wc -l)
	check_ratio "$what" $((CUM - c0)) $((FLT - f0)) "$p" "$n"
}

# set_period WHAT KEYS... -- PERIOD: press KEYS with the workload stopped,
# then wait until the header shows PERIOD in force (no "(set N)" pending).
set_period() {
	local what=$1 keys=() p
	shift
	while [ "$1" != "--" ]; do keys+=("$1"); shift; done
	p=$2
	tm send-keys "${keys[@]}"
	if wait_screen "  period $p  samples/s" 10; then
		return 0
	fi
	fail "$what: header never showed period $p after ${keys[*]}"
	return 1
}

# end_run WHAT PID: q ends memtop with status 0.
end_run() {
	tm send-keys q
	wait_screen '^EXIT=' 15 || { fail "$1: memtop did not quit on q"; return; }
	grep -q '^EXIT=0' "$TMP/screen" || fail "$1: memtop $(grep EXIT= "$TMP/screen")"
}

# --- -p PID: per-thread channels from the start.
"$MEMTOP_WORKLOAD" "${WL_ARGS[@]}" --report "$TMP/p-report.json" &
wpid=$!
cleanup_hooks+=("kill -CONT $wpid 2>/dev/null; kill $wpid 2>/dev/null")
for ((i = 0; i < 100; i++)); do
	[ "$(ls /proc/$wpid/task 2>/dev/null | wc -l)" -ge 3 ] && break
	sleep 0.05
done
tui_start pid "$MEMTOP" -e faults -d 0.25 -p "$wpid" --log "$TMP/p.log"
if wait_screen "  period 1  samples/s" 15 && wait_screen '^0x[0-9a-f]+ ' 10; then
	wl_stop "$wpid"
	period_phase "-p" "$wpid" 1
	set_period "-p +" + -- 2 && period_phase "-p after +" "$wpid" 2
	set_period "-p + +" + -- 4 && period_phase "-p after + +" "$wpid" 4
	set_period "-p -" - -- 2 && period_phase "-p after -" "$wpid" 2
	set_period "-p p 7" p 7 Enter -- 7 && period_phase "-p after p 7" "$wpid" 7
	flt_end=$(minflt "$wpid")
	wl_cont "$wpid"
	end_run "-p"
else
	fail "-p: memtop did not show the workload"
fi
kill -CONT "$wpid" 2>/dev/null
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
# The oracle checked against the workload's own report: its final fault
# count is at least what was read during the run.
if [ -s "$TMP/p-report.json" ]; then
	rep=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rusage_minflt"])' \
		"$TMP/p-report.json" 2>/dev/null)
	[ -n "$rep" ] && [ -n "${flt_end:-}" ] && [ "$rep" -ge "$flt_end" ] &&
		ok "-p: the workload's own rusage_minflt ($rep) >= the last /proc count ($flt_end)" ||
		fail "-p: workload report rusage_minflt '$rep', /proc read '${flt_end:-}'"
fi

# --- -- COMMAND: inherited per-CPU channels until the first period change.
tui_start cmd "$MEMTOP" -e faults -d 0.25 -c 3 --log "$TMP/c.log" -- \
	"$MEMTOP_WORKLOAD" "${WL_ARGS[@]}"
if wpid=$(launched_pid cmd "$MEMTOP_WORKLOAD") && wait_screen "  period 3  samples/s" 15 &&
   wait_screen '^0x[0-9a-f]+ ' 10; then
	cleanup_hooks+=("kill -CONT $wpid 2>/dev/null")
	wl_stop "$wpid"
	grep -q 'moved to per-thread' "$TMP/c.log" 2>/dev/null &&
		fail "--: left inherited channels before any period change"
	period_phase "-- inherited (before the switch)" "$wpid" 3
	if set_period "-- +" + -- 6; then
		grep -q 'period 6: moved to per-thread channels' "$TMP/c.log" ||
			fail "--: + did not move the command to per-thread channels: $(cat "$TMP/c.log")"
		period_phase "-- per-thread after +" "$wpid" 6
	fi
	set_period "-- -" - -- 3 && period_phase "-- per-thread after -" "$wpid" 3
	set_period "-- p 7" p 7 Enter -- 7 && period_phase "-- per-thread after p 7" "$wpid" 7
	wl_cont "$wpid"
	end_run "--"
	[ -d "/proc/$wpid" ] && ! grep -q '^Z' <(sed 's/.*) //' "/proc/$wpid/stat" 2>/dev/null) &&
		fail "--: launched workload still running after q"
else
	fail "--: memtop did not show the launched workload"
fi

echo "# measured samples/faults:"
for r in "${RATIOS[@]}"; do echo "#   $r"; done
finish
