#!/bin/bash
# Pause and reset as the real collector applies them, checked against the
# kernel's own count of the workload's page faults (/proc/PID/stat minflt,
# see tests/lib/live-tui.sh): memtop -e faults in its TUI, in a private
# tmux server, the workload stopped (SIGSTOP, by pid) around each phase.
#
#   space: while paused the workload keeps faulting (its fault count
#          rises by thousands) and memtop counts nothing at all (the
#          cumulative count is unchanged); after space again counting
#          resumes at samples = faults / period.
#   r:     the cumulative count and the page table drop to 0 (header
#          "samples 0/0", "pages tracked 0", no page rows) and then grow
#          again as samples = faults / period, pages tracked again.
# For -p PID (per-thread channels) and for -- COMMAND (inherited per-CPU
# channels: no period change is made, so the command never leaves them).
. "$(dirname "$0")/../lib/lib.sh"
need_perf
. "$MEMTOP_SRCDIR/tests/lib/live-tui.sh"

PHASE_S=${MEMTOP_ORACLE_PHASE_S:-1.2}
WL_ARGS=(--mode refault --threads 2 --hot 64 --pages 1024 --interval-ms 1
	 --duration 0 --quiet)

# scenario WHAT PID PERIOD: memtop shows the stopped workload PID.
scenario() {
	local what=$1 pid=$2 p=$3 c0 f0 n
	n=$(ls /proc/"$pid"/task | wc -l)

	# Counting before the pause, as a reference.
	quiesce "$pid" || { fail "$what: not quiet at the start"; return; }
	c0=$CUM f0=$FLT
	run_for "$pid" "$PHASE_S" || { fail "$what: workload did not stop"; return; }
	quiesce "$pid" || { fail "$what: not quiet"; return; }
	check_ratio "$what before pause" $((CUM - c0)) $((FLT - f0)) "$p" "$n"

	# space: paused.  The workload runs; memtop must count nothing.
	tm send-keys Space
	wait_screen '^ PAUSED( |$)' 10 || { fail "$what: space did not pause"; return; }
	quiesce "$pid" || { fail "$what: not quiet after pausing"; return; }
	c0=$CUM f0=$FLT
	run_for "$pid" "$PHASE_S" || { fail "$what: workload did not stop"; return; }
	quiesce "$pid" || { fail "$what: not quiet while paused"; return; }
	if [ $((FLT - f0)) -lt 1000 ]; then
		fail "$what: the workload made only $((FLT - f0)) faults while paused"
	elif [ "$CUM" -eq "$c0" ]; then
		ok "$what: paused: 0 samples counted while the workload made $((FLT - f0)) faults"
	else
		fail "$what: paused, yet $((CUM - c0)) samples counted for $((FLT - f0)) faults"
	fi
	RATIOS+=("$what: paused, $((CUM - c0)) samples / $((FLT - f0)) faults")
	grep -Eq '^ PAUSED( |$)' "$TMP/screen" || fail "$what: PAUSED banner gone while paused"

	# space again: counting resumes.
	tm send-keys Space
	wait_gone '^ PAUSED( |$)' 10 || { fail "$what: space did not resume"; return; }
	c0=$CUM f0=$FLT
	run_for "$pid" "$PHASE_S" || { fail "$what: workload did not stop"; return; }
	quiesce "$pid" || { fail "$what: not quiet after resuming"; return; }
	check_ratio "$what after resume" $((CUM - c0)) $((FLT - f0)) "$p" "$n"

	# r: everything back to zero, with the workload still stopped.
	[ "$CUM" -gt 0 ] || fail "$what: nothing counted before the reset"
	tm send-keys r
	wait_screen 'reset: page table and totals cleared' 10 ||
		fail "$what: r did not confirm the reset"
	quiesce "$pid" || { fail "$what: not quiet after the reset"; return; }
	if [ "$CUM" -eq 0 ] && grep -Eq '^samples 0/0 .*pages tracked 0 ' "$TMP/screen" &&
	   ! grep -Eq '^0x[0-9a-f]+ ' "$TMP/screen"; then
		ok "$what: r: cumulative count and page table at 0"
	else
		fail "$what: after r: cumulative $CUM, $(hdr_samples_line)"
	fi
	f0=$FLT
	run_for "$pid" "$PHASE_S" || { fail "$what: workload did not stop"; return; }
	quiesce "$pid" || { fail "$what: not quiet after the reset phase"; return; }
	check_ratio "$what after reset" "$CUM" $((FLT - f0)) "$p" "$n"
	grep -Eq '^samples [0-9]+/[0-9]+ .*pages tracked [1-9]' "$TMP/screen" ||
		fail "$what: no pages tracked after the reset phase: $(hdr_samples_line)"
}

end_run() {
	tm send-keys q
	wait_screen '^EXIT=' 15 || { fail "$1: memtop did not quit on q"; return; }
	grep -q '^EXIT=0' "$TMP/screen" || fail "$1: memtop $(grep EXIT= "$TMP/screen")"
}

# --- -p PID
"$MEMTOP_WORKLOAD" "${WL_ARGS[@]}" &
wpid=$!
cleanup_hooks+=("kill -CONT $wpid 2>/dev/null; kill $wpid 2>/dev/null")
for ((i = 0; i < 100; i++)); do
	[ "$(ls /proc/$wpid/task 2>/dev/null | wc -l)" -ge 3 ] && break
	sleep 0.05
done
tui_start pid "$MEMTOP" -e faults -d 0.25 -p "$wpid"
if wait_screen "  period 1  samples/s" 15 && wait_screen '^0x[0-9a-f]+ ' 10; then
	wl_stop "$wpid" && scenario "-p" "$wpid" 1
	wl_cont "$wpid"
	end_run "-p"
else
	fail "-p: memtop did not show the workload"
fi
kill -CONT "$wpid" 2>/dev/null
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null

# --- -- COMMAND, inherited channels, period 2
tui_start cmd "$MEMTOP" -e faults -d 0.25 -c 2 -- "$MEMTOP_WORKLOAD" "${WL_ARGS[@]}"
if wpid=$(launched_pid cmd "$MEMTOP_WORKLOAD") &&
   wait_screen "  period 2  samples/s" 15 && wait_screen '^0x[0-9a-f]+ ' 10; then
	cleanup_hooks+=("kill -CONT $wpid 2>/dev/null")
	wl_stop "$wpid" && scenario "-- inherited" "$wpid" 2
	wl_cont "$wpid"
	end_run "--"
else
	fail "--: memtop did not show the launched workload"
fi

echo "# measured samples/faults:"
for r in "${RATIOS[@]}"; do echo "#   $r"; done
finish
