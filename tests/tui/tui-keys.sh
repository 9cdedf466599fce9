#!/bin/bash
# The real TUI on a live workload, driven through a private tmux server:
# the screen shows the header and hot pages, `+` doubles the period in the
# header (and sampling goes on at the new period), `q` quits, the launched
# workload is gone, memtop exits 0 and the terminal is back in canonical
# mode (stty icanon restored).
. "$(dirname "$0")/../lib/lib.sh"
need_perf
command -v tmux >/dev/null || skip "tmux not installed"

SOCK="$TMP/tmux"
TM() { tmux -S "$SOCK" "$@"; }
# Both servers (the second run starts its own), by their sockets in $TMP.
cleanup_hooks+=('tmux -S "$TMP/tmux" kill-server 2>/dev/null; tmux -S "$TMP/tmux-b" kill-server 2>/dev/null')

# wait_screen PATTERN [SECONDS]: polls the pane until PATTERN (ERE) shows.
wait_screen() {
	local pat=$1 limit=${2:-10} i
	for ((i = 0; i < limit * 10; i++)); do
		TM capture-pane -p >"$TMP/screen" 2>/dev/null
		grep -Eq -- "$pat" "$TMP/screen" && return 0
		sleep 0.1
	done
	echo "--- screen (waited ${limit}s for /$pat/):"
	cat "$TMP/screen"
	return 1
}

cat >"$TMP/run.sh" <<EOS
#!/bin/bash
stty sane
"$MEMTOP" -e faults -d 0.3 -- "$MEMTOP_WORKLOAD" --mode refault --threads 2 \
	--hot 32 --pages 512 --interval-ms 2 --duration 0 --quiet \
	--report "$TMP/\$\$.report"
echo "EXIT=\$?"
stty -a | tr ' ' '\n' | grep -x -- '-\?icanon'
pgrep -f -- "$TMP/\$\$.report" >/dev/null && echo WORKLOAD-ALIVE || echo WORKLOAD-GONE
sleep 60
EOS
chmod +x "$TMP/run.sh"
TM -f /dev/null new-session -d -x 120 -y 40 "$TMP/run.sh"

wait_screen "period 1 " 10 || fail "header with period 1 not shown"
wait_screen "^0x[0-9a-f]+ " 10 || fail "no hot page rows"
grep -q "faults" "$TMP/screen" || fail "source not named in the header"

TM send-keys +
wait_screen "period 2 " 5 || fail "+ did not double the period"
# Sampling continues after the switch to per-thread channels.
sleep 1
wait_screen "samples/s [1-9]" 5 || fail "no samples after the period change"
TM send-keys +
wait_screen "period 4 " 5 || fail "second + did not double again"
TM send-keys -
wait_screen "period 2 " 5 || fail "- did not halve the period"

# m asks first; another key cancels; m m sends the migration, whose
# result arrives with a later frame.
TM send-keys m
wait_screen "move page 0x[0-9a-f]+ of pid [0-9]+ .*m again" 5 || fail "m did not ask for confirmation"
TM send-keys x
wait_screen "migration cancelled" 5 || fail "another key did not cancel the migration"
TM send-keys m
TM send-keys m
wait_screen "migration requested" 5 || fail "m m did not request the migration"
wait_screen "migrated: [0-9]+ moved" 5 || fail "no migration result shown"

TM send-keys q
wait_screen "EXIT=" 10 || fail "memtop did not quit on q"
# run.sh prints the terminal mode and the workload check after EXIT=.
wait_screen "WORKLOAD-(GONE|ALIVE)" 10 || fail "run.sh did not finish its checks"
grep -q "EXIT=0" "$TMP/screen" || fail "memtop exit status: $(grep EXIT= "$TMP/screen")"
grep -qx "icanon" "$TMP/screen" || fail "terminal left without icanon"
grep -q "WORKLOAD-GONE" "$TMP/screen" || fail "launched workload still running after q"
[ "$failures" -eq 0 ] && ok "TUI: header, rows, + + - period, q, terminal restored, workload reaped"

# Ctrl-C (SIGINT from the terminal) ends memtop the same way.
TM kill-server 2>/dev/null
SOCK="$TMP/tmux-b"
TM -f /dev/null new-session -d -x 120 -y 40 "$TMP/run.sh"
wait_screen "period 1 " 10 || fail "second run: no header"
TM send-keys C-c
wait_screen "EXIT=" 10 || fail "memtop did not end on Ctrl-C"
# run.sh prints the terminal mode and the workload check after EXIT=.
wait_screen "WORKLOAD-(GONE|ALIVE)" 10 || fail "run.sh did not finish its checks"
grep -q "EXIT=0" "$TMP/screen" || fail "Ctrl-C exit status: $(grep EXIT= "$TMP/screen")"
grep -qx "icanon" "$TMP/screen" || fail "Ctrl-C: terminal left without icanon"
grep -q "WORKLOAD-GONE" "$TMP/screen" || fail "Ctrl-C: workload still running"
[ "$failures" -eq 0 ] && ok "TUI: Ctrl-C restores the terminal and ends the workload"
finish
