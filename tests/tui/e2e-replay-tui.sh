#!/bin/bash
# memtop -i in the TUI (a private tmux server): a 20 s recording plays at
# recorded speed, `>` twice makes it 4x, space pauses it (the elapsed time
# stops), `E` runs it to the end, `q` quits with status 0.
. "$(dirname "$0")/../lib/lib.sh"
command -v tmux >/dev/null || skip "tmux not installed"
: "${MEMTOP_PERFDATA_TOOL:=$MEMTOP_BUILDDIR/tests/perfdata-tool}"
"$MEMTOP_PERFDATA_TOOL" gen "$TMP/rec.data" --samples 20000 --seconds 20 ||
	fail "gen failed"

SOCK="$TMP/tmux"
cleanup_hooks+=("tmux -S \"$SOCK\" kill-server 2>/dev/null")
tmux -S "$SOCK" -f /dev/null new-session -d -x 140 -y 40 \
	"'$MEMTOP' -i '$TMP/rec.data' -d 1 2>'$TMP/err'; echo \$? >'$TMP/status'; sleep 60"

screen() { tmux -S "$SOCK" capture-pane -p; }
# wait_for REGEX SECONDS: polls the screen.
wait_for() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		screen | grep -Eq "$1" && return 0
		sleep 0.1
	done
	return 1
}
elapsed() { screen | grep -o 'elapsed [0-9.]*s' | head -1; }

wait_for 'speed 1x' 10 && ok "plays at recorded speed" || fail "no 'speed 1x': $(screen | head -4)"
wait_for 'elapsed 2\.0s' 10 || fail "recorded time does not advance: $(elapsed)"
tmux -S "$SOCK" send-keys '>'
tmux -S "$SOCK" send-keys '>'
wait_for 'speed 4x' 5 && ok "> > makes it 4x" || fail "no 'speed 4x': $(screen | head -4)"
tmux -S "$SOCK" send-keys ' '
sleep 1.5
a=$(elapsed)
sleep 1.5
b=$(elapsed)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "space pauses it ($a)" || fail "paused, but $a -> $b"
tmux -S "$SOCK" send-keys 'E'
wait_for 'to the end' 5 && wait_for 'elapsed 20\.0s' 10 &&
	ok "E runs it to the end" || fail "E: $(screen | head -4)"
tmux -S "$SOCK" send-keys 'q'
for ((i = 0; i < 50; i++)); do [ -s "$TMP/status" ] && break; sleep 0.1; done
[ "$(cat "$TMP/status" 2>/dev/null)" = 0 ] && ok "q quits with status 0" ||
	fail "status $(cat "$TMP/status" 2>/dev/null), stderr: $(cat "$TMP/err")"
finish
