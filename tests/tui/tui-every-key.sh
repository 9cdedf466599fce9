#!/bin/bash
# Every key code in the TUI's one key table (ui/tui/keys.c, which also
# draws the help screen) is pressed in a private tmux server and its
# effect asserted on the screen or in the commands the collector got.
# The test reads the table back at the end and fails for any key code no
# assertion covered, so a key cannot be added untested.
#
#   tui-harness (known synthetic frames, a command log): period keys,
#     sort, pause, reset, migrations, views, help, back, selection and
#     scrolling, Enter, quit;
#   memtop -e faults on a live workload: g folds pages to 2 MiB and 1 GiB
#     (the addresses shown), f lists the workload's own functions;
#   memtop -i on a synthetic capture: > and < change the replay's pace
#     (recorded seconds per wall second), E plays it to its end at once.
# Period, pause and reset against the real collector: tui-period-oracle.sh
# and tui-pause-reset-oracle.sh.
. "$(dirname "$0")/../lib/lib.sh"
. "$MEMTOP_SRCDIR/tests/lib/live-tui.sh"
need_python
H=${MEMTOP_TUI_HARNESS:-$MEMTOP_BUILDDIR/tests/tui-harness}
[ -x "$H" ] || skip "tui-harness not built ($H)"
: "${MEMTOP_PERFDATA_TOOL:=$MEMTOP_BUILDDIR/tests/perfdata-tool}"
KEYS_C=$MEMTOP_SRCDIR/ui/tui/keys.c
export LC_ALL=C

declare -A COVERED=()
# covered TOKEN...: the key codes (as spelt in keys.c) just asserted.
covered() { local k; for k in "$@"; do [ -n "$k" ] && COVERED[$k]=1; done; }
# press TMUX-KEY ERE WHAT TOKEN: press, wait for ERE, mark TOKEN.
press() {
	tm send-keys "$1"
	if wait_screen "$2" 10; then
		ok "$3"
		covered "$4"
	else
		fail "$3"
	fi
}
back_to_main() {
	tm send-keys Escape
	wait_screen '^ADDRESS ' 10 >/dev/null || fail "Esc did not go back to the table"
}
# detail_page: the page the detail view shows (index 0..29 in the
# harness's frame, page i at 0x7f0000000000 + i * 4096).
detail_page() {
	local a
	wait_screen '^page 0x7f00000[0-9a-f]{5}-' 10 >/dev/null || { echo -1; return; }
	a=$(grep -oE '^page 0x7f00000[0-9a-f]{5}' "$TMP/screen" | head -1 | cut -c6-)
	echo $(((a - 0x7f0000000000) / 4096))
}
# select_is TMUX-KEY WANT WHAT TOKEN: in the detail view, which follows
# the selection, TMUX-KEY must select page WANT.
select_is() {
	local got
	tm send-keys "$1"
	sleep 0.3
	got=$(detail_page)
	if [ "$got" = "$2" ]; then
		ok "$3: page $got"
		covered "$4"
	else
		fail "$3: page $got, want $2"
	fi
}

# --- harness: a never-ending stream of known frames, period 1000
tui_start keys env TERM=screen "$H" --interval-ms 100 --cmd-log "$TMP/keys.cmds"
wait_screen 'period 1000 ' 10 || fail "harness: no first frame"
press + 'period 2000 ' "+ doubles the period" "'+'"
press = 'period 4000 ' "= doubles the period" "'='"
press - 'period 2000 ' "- halves the period" "'-'"
press _ 'period 1000 ' "_ halves the period" "'_'"
tm send-keys p
if wait_screen '^period: ' 10; then
	tm send-keys 4 0 9 6 Enter
	wait_screen 'period 4096 ' 10 && ok "p 4096 Enter sets the period" && covered "'p'" ||
		fail "p 4096 Enter did not set the period"
else
	fail "p did not open the period prompt"
fi
press s 'sort total' "s: sort key samples -> total" "'s'"
press Space '^ PAUSED( |$)' "space pauses" "' '"
tm send-keys Space
wait_gone '^ PAUSED( |$)' 10 || fail "space did not resume"
press r 'reset: page table and totals cleared' "r resets" "'r'"
press '>' 'move through a replay \(-i FILE\) only' "> outside a replay says so" ""
press m 'move page 0x7f0000000000 of pid 4242 .*m again' "m asks first" ""
press m 'migration requested' "m m requests the page's migration" "'m'"
press M 'move every remote-heavy page .*M again' "M asks first" ""
press M 'migration requested' "M M requests the hot pages' migration" "'M'"
press n 'Node x node matrix' "n: NUMA view" "'n'"
press n '^ADDRESS ' "n again: back to the table" ""
press c 'CPUs: 4 on 2 nodes' "c: CPU view" "'c'"
press c '^ADDRESS ' "c again: back to the table" ""
press f 'Functions causing most samples' "f: code view" "'f'"
press f '^ADDRESS ' "f again: back to the table" ""
press o 'Allocation sites, by samples' "o: objects view" "'o'"
press o '^ADDRESS ' "o again: back to the table" ""
press P 'processes, best first' "P: process view" "'P'"
press P '^ADDRESS ' "P again: back to the table" ""
press g 'page size: 2 MiB' "g asks for 2 MiB pages" ""
# Each way back to the table, from the NUMA view.  The pane's terminal
# (TERM=screen) has kbs=^?: tmux's BSpace (0x7f) arrives as KEY_BACKSPACE.
for k in Escape:KEYS_ESC BSpace:KEY_BACKSPACE Left:KEY_LEFT; do
	tm send-keys n
	wait_screen 'Node x node matrix' 10 >/dev/null || fail "n: no NUMA view"
	press "${k%%:*}" '^ADDRESS ' "${k%%:*} goes back to the table" "${k#*:}"
done
# Help: h, ? and F1 open it and leave it.
for k in h:"'h'" '?':"'?'" F1:'KEY_F(1)'; do
	press "${k%%:*}" 'Keys \(h, \? or Esc to leave this help\)' "${k%%:*} opens the help" ""
	press "${k%%:*}" '^ADDRESS ' "${k%%:*} again leaves the help" "${k#*:}"
done
# The help lists every label of the table.
tm send-keys h
wait_screen 'Keys \(h, \? or Esc' 10 >/dev/null
python3 - "$KEYS_C" "$TMP/screen" <<'PY' && ok "the help screen lists every key of the table" || fail "help screen"
import re, sys
table = open(sys.argv[1]).read()
screen = open(sys.argv[2]).read().splitlines()
labels = re.findall(r'^\s*\{ \{[^}]*\}, "([^"]*)"', table, re.M)
missing = [l for l in labels if not any(s.startswith("  " + l + " ") for s in screen)]
if missing or not labels:
    print("not on the help screen:", missing or "no labels read from keys.c")
    sys.exit(1)
PY
back_to_main
# Enter (\r, \n) opens the selected page's detail (keypad Enter below).
for k in C-m:"'\\r'" C-j:"'\\n'"; do
	tm send-keys Home
	press "${k%%:*}" '^page 0x7f0000000000-0x7f0000000fff' "${k%%:*}: detail of the first page" "${k#*:}"
	back_to_main
done
# Moving the selection, seen in the detail view that follows it; 24 rows
# so that the table is shorter than the frame's 30 pages.
tm resize-window -x "$TUI_W" -y 24
wait_screen '^ADDRESS ' 10 >/dev/null
tm send-keys Home Enter
[ "$(detail_page)" = 0 ] || fail "Home Enter: not on the first page"
select_is Down 1 "Down" KEY_DOWN
select_is j 2 "j" "'j'"
select_is Up 1 "Up" KEY_UP
select_is k 0 "k" "'k'"
select_is End 29 "End" KEY_END
select_is Home 0 "Home" KEY_HOME
select_is G 29 "G" "'G'"
back_to_main
tm send-keys Home
sleep 0.2
tm send-keys NPage Enter
rows=$(detail_page)
if [ "$rows" -ge 2 ] && [ "$rows" -lt 29 ]; then
	ok "PgDn: one screen down, to page $rows"
	covered KEY_NPAGE
else
	fail "PgDn from the first page: page $rows"
fi
select_is NPage $((2 * rows > 29 ? 29 : 2 * rows)) "PgDn again" ""
select_is End 29 "End" ""
select_is PPage $((29 - rows)) "PgUp" KEY_PPAGE
back_to_main
press q '^EXIT=0' "q quits" "'q'"
# What the fake collector received, in order (migrations have no name
# in the harness's log: "?").
cat >"$TMP/keys.want" <<'EOF'
SET_PERIOD 2000
SET_PERIOD 4000
SET_PERIOD 2000
SET_PERIOD 1000
SET_PERIOD 4096
SORT 1
TOGGLE_PAUSE 0
TOGGLE_PAUSE 0
RESET 0
? 1
? 0
SET_GRANULARITY 21
QUIT 0
EOF
diff -u "$TMP/keys.want" "$TMP/keys.cmds" && ok "the collector got exactly the commands the keys stand for" ||
	fail "command stream differs"

# Q and F10 quit too.
for k in Q:"'Q'" F10:'KEY_F(10)'; do
	tui_start quit "$H" --interval-ms 100
	wait_screen '^ADDRESS ' 10 >/dev/null || fail "harness did not start"
	press "${k%%:*}" '^EXIT=0' "${k%%:*} quits" "${k#*:}"
done

# vt100 has kbs=^H and kent=\EOM: tmux's BSpace (0x7f) then arrives as
# the DEL byte itself, and keypad Enter as KEY_ENTER.
tui_start vt100 env TERM=vt100 "$H" --interval-ms 100
if wait_screen '^ADDRESS ' 10; then
	tm send-keys n
	wait_screen 'Node x node matrix' 10 >/dev/null || fail "vt100: n: no NUMA view"
	press BSpace '^ADDRESS ' "vt100: BSpace (DEL) goes back to the table" KEYS_DEL
	tm send-keys Home
	press KPEnter '^page 0x7f0000000000-0x7f0000000fff' "vt100: keypad Enter: detail of the first page" KEY_ENTER
	back_to_main
	tm send-keys q
	wait_screen '^EXIT=0' 10 >/dev/null || fail "vt100: q did not quit"
else
	fail "vt100: harness did not start"
fi

# --- live: g and f on the real collector
tui_start live "$MEMTOP" -e faults -d 0.3 -- "$MEMTOP_WORKLOAD" --mode refault \
	--threads 2 --hot 64 --pages 16384 --interval-ms 1 --duration 0 --quiet
# all_rows_aligned MASK: every page row's address is a multiple of MASK+1.
all_rows_aligned() {
	local a n=0
	for a in $(grep -oE '^0x[0-9a-f]+ ' "$TMP/screen"); do
		(( (a & $1) == 0 )) || return 1
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}
if wait_screen '^0x[0-9a-f]+ ' 15; then
	# Worker 0 owns the even hot pages, 2 MiB apart: until worker 1's
	# pages show (a sanitizer build starts it late), every row may be
	# 2 MiB aligned already.
	for i in $(seq 100); do
		all_rows_aligned 0x1fffff || break
		sleep 0.1; screen >"$TMP/screen"
	done
	all_rows_aligned 0x1fffff && fail "live: 4 KiB rows already 2 MiB aligned (workload layout)"
	tm send-keys g
	for i in $(seq 50); do
		sleep 0.1; screen >"$TMP/screen"; all_rows_aligned 0x1fffff && break
	done
	all_rows_aligned 0x1fffff && ok "live g: every row is a 2 MiB page" && g1=1 ||
		fail "live g: rows not 2 MiB aligned: $(grep -m3 -E '^0x' "$TMP/screen" | cut -c1-16 | tr '\n' ' ')"
	tm send-keys g
	for i in $(seq 50); do
		sleep 0.1; screen >"$TMP/screen"; all_rows_aligned 0x3fffffff && break
	done
	all_rows_aligned 0x3fffffff && ok "live g g: every row is a 1 GiB page" ||
		{ fail "live g g: rows not 1 GiB aligned"; g1=; }
	[ -n "${g1:-}" ] && covered "'g'"
	tm send-keys g
	press f 'workload_worker' "live f: the workload's functions listed" ""
	tm send-keys q
	wait_screen '^EXIT=0' 15 >/dev/null || fail "live: q did not end memtop with status 0"
else
	fail "live: memtop showed no pages"
fi

# --- replay: > < E change the pace of recorded time
if "$MEMTOP_PERFDATA_TOOL" gen "$TMP/rec.data" --samples 60000 --seconds 60 --pids 1; then
	tui_start replay "$MEMTOP" -i "$TMP/rec.data" -d 0.5
	elapsed() { screen | grep -oE 'elapsed [0-9.]+s' | head -1 | grep -oE '[0-9.]+'; }
	# pace SECS: recorded seconds shown per wall second over SECS.
	pace() {
		local a b t0 t1
		a=$(elapsed); t0=$(date +%s.%N)
		sleep "$1"
		b=$(elapsed); t1=$(date +%s.%N)
		awk -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.2f", (b - a) / (t1 - t0) }'
	}
	if wait_screen 'speed 1x' 10; then
		tm send-keys '>' '>' '>'
		if wait_screen 'speed 8x' 10; then
			p=$(pace 2)
			awk -v p="$p" 'BEGIN { exit !(p >= 4) }' &&
				{ ok "> > >: recorded time runs at ${p}x (8x asked)"; covered "'>'"; } ||
				fail "> > >: recorded time runs at ${p}x, want about 8"
		else
			fail "> did not speed the replay up"
		fi
		tm send-keys '<' '<' '<' '<'
		if wait_screen 'speed 0.5x' 10; then
			# Frames come every 0.5 s recorded: 4 wall seconds show
			# 1.5 to 2.5 s at 0.5x, 3.5 to 4.5 s at 1x.
			p=$(pace 4)
			awk -v p="$p" 'BEGIN { exit !(p <= 0.75) }' &&
				{ ok "< < < <: recorded time runs at ${p}x (0.5x asked)"; covered "'<'"; } ||
				fail "< < < <: recorded time runs at ${p}x, want about 0.5"
		else
			fail "< did not slow the replay down"
		fi
		tm send-keys E
		wait_screen 'target exited' 10 && wait_screen 'elapsed 60\.0s' 5 &&
			{ ok "E: played to the end (60 s recorded) at once"; covered "'E'"; } ||
			fail "E did not run the replay to its end"
		tm send-keys q
		wait_screen '^EXIT=0' 15 >/dev/null || fail "replay: q did not end memtop with status 0"
	else
		fail "replay: no 'speed 1x'"
	fi
else
	fail "perfdata-tool gen failed"
fi

# --- the table: every key code in keys.c must have been asserted above.
mapfile -t TOKENS < <(python3 - "$KEYS_C" <<'PY'
import re, sys
table = open(sys.argv[1]).read()
rows = re.findall(r'^\s*\{ \{([^}]*)\}, "([^"]*)", (\w+)', table, re.M)
for codes, label, action in rows:
    for c in re.findall(r"'(?:\\.|[^'])'|[A-Z_]+\(\d+\)|[A-Z_]+", codes):
        print(f"{c}\t{label}\t{action}")
PY
)
[ "${#TOKENS[@]}" -ge 25 ] || fail "read only ${#TOKENS[@]} key codes from $KEYS_C"
untested=0
for t in "${TOKENS[@]}"; do
	IFS=$'\t' read -r code label action <<<"$t"
	if [ -z "${COVERED[$code]:-}" ]; then
		fail "key $code (help label \"$label\", $action) in ui/tui/keys.c has no passing assertion in this test"
		untested=$((untested + 1))
	fi
done
[ "$untested" -eq 0 ] && ok "all ${#TOKENS[@]} key codes of ui/tui/keys.c asserted"
finish
