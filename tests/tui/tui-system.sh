#!/bin/bash
# The TUI of a whole machine (-a), through a private tmux server: it
# opens on the process view, which lists running workloads by name;
# Enter on a cold workload's row shows its hot pages (every row its pid,
# though a hot workload fills the unfiltered view);
# Esc goes back to the process view; P toggles the hot pages; q exits 0
# with the terminal back in canonical mode.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/../lib/system.sh"
. "$MEMTOP_SRCDIR/tests/lib/live-tui.sh"
need_system

# A hot workload fills the unfiltered page table; Enter goes to a cold
# one, whose pages show only when the view asks for that process's.
"$MEMTOP_WORKLOAD" --mode refault --threads 2 --hot 64 --pages 1024 \
	--interval-ms 2 --duration 60 --quiet &
hot=$!
cleanup_hooks+=("kill_own $hot")
"$MEMTOP_WORKLOAD" --mode refault --hot 8 --pages 64 --interval-ms 20 \
	--duration 60 --quiet &
wpid=$!
cleanup_hooks+=("kill_own $wpid")

# The pane's shell prints the terminal mode after memtop, then EXIT=.
tui_start sys bash -c '"$0" -a -e faults -d 1; s=$?
	stty -a | tr " " "\n" | grep -x -- "-\?icanon"; exit $s' "$MEMTOP"

wait_screen "^memtop +all CPUs" 10 || fail "header does not name the scope"
wait_screen "processes, best first" 10 || fail "did not open on the process view"
wait_screen "^ *$wpid memtop-workload" 10 || fail "workload not listed by name"

# Enter on the workload's row: Home, then Down as many times as rows
# stand above it on the screen just read, then Enter, in one go; the rows
# move only at a frame (every second), so a miss is retried.
found=0
for ((i = 0; i < 10 && !found; i++)); do
	wait_screen "^ *$wpid memtop-workload" 10 || break
	idx=$(awk -v p="$wpid" 'f && $1 ~ /^[0-9]+$/ { if ($1 == p) { print n; exit } n++ }
		/^ +PID COMM/ { f = 1; n = 0 }' "$TMP/screen")
	[ -n "$idx" ] || continue
	keys=(Home)
	for ((k = 0; k < idx; k++)); do keys+=(Down); done
	tm send-keys "${keys[@]}" Enter
	wait_screen "pages of [0-9]+ " 5 || break
	if grep -q "pages of $wpid memtop-workload" "$TMP/screen"; then
		found=1
	else
		tm send-keys Escape
		wait_screen "processes, best first" 5 || break
	fi
done
[ "$found" = 1 ] || fail "Enter never opened the workload's pages"
if [ "$found" = 1 ]; then
	wait_screen "^0x[0-9a-f]+ +$wpid " 5 || fail "no page rows of the workload"
	others=$(grep -E "^0x[0-9a-f]+ " "$TMP/screen" | awk -v p="$wpid" '$2 != p' | wc -l)
	[ "$others" -eq 0 ] || fail "pages of other processes in its page view"
	tm send-keys Escape
	wait_screen "processes, best first" 5 || fail "Esc did not go back to the process view"
	grep -q "pages of" "$TMP/screen" && fail "header still names the pages after Esc"
fi
# P toggles between the process view and every process's hot pages.
tm send-keys P
wait_screen "^ADDRESS +PID" 5 || fail "P did not show the hot pages"
tm send-keys P
wait_screen "processes, best first" 5 || fail "P again did not show the processes"
[ "$failures" -eq 0 ] && ok "TUI -a: process view, Enter on the workload, its pages, Esc back, P"

tm send-keys q
wait_screen "EXIT=" 10 || fail "memtop did not quit on q"
grep -q "EXIT=0" "$TMP/screen" || fail "exit status: $(grep EXIT= "$TMP/screen")"
grep -qx "icanon" "$TMP/screen" || fail "terminal left without icanon"
finish
