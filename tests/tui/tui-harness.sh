#!/bin/bash
# TUI end to end: runs tests/tui-harness (tui_run() fed synthetic frames)
# inside a private, fixed-size tmux server, presses keys, reads the screen
# back with capture-pane and compares a few screens with tests/tui/*.result.
# Every run ends by printing EXIT=<status> and the terminal's icanon flag,
# so each way out (q, signals, iteration limit) shows the terminal restored.
#
# MEMTOP_TUI_UPDATE_GOLDEN=1 rewrites the .result files instead of
# comparing (review the diff before committing them).
set -u

if ! command -v tmux >/dev/null 2>&1; then
	echo "SKIP: tmux not installed"
	exit 77
fi
H=${MEMTOP_TUI_HARNESS:-}
if [ -z "$H" ] || [ ! -x "$H" ]; then
	echo "FAIL: MEMTOP_TUI_HARNESS does not name the tui-harness binary"
	exit 1
fi
SRCDIR=${MEMTOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
GOLDEN=$SRCDIR/tests/tui
UPDATE=${MEMTOP_TUI_UPDATE_GOLDEN:-0}
TIMEOUT=${MEMTOP_TUI_TIMEOUT:-15}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/memtop-tui.XXXXXX")
# A socket in this run's own directory: no other run can share its server.
SOCK=$WORK/tmux
unset TMUX
# tmux draws UTF-8 only when its own locale says so.
export LC_ALL=C.UTF-8
# The panes inherit this; a sanitizer finding must fail the harness.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

tm() { tmux -S "$SOCK" -f /dev/null "$@"; }
cleanup() {
	tm kill-server >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT

# The server exits with its last session; this one keeps it up while
# the test sessions come and go.
tm new-session -d -s idle -x 100 -y 30 'exec sleep 100000'

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# start NAME [VAR=value...] -- [harness args...]
# Runs the harness in session NAME (100x30); afterwards the pane shows
# EXIT=<status> and "icanon" or "-icanon".
start() {
	local name=$1 script=$WORK/$1.sh
	shift
	{
		echo 'cd /'
		printf 'env'
		while [ "$1" != "--" ]; do
			printf ' %q' "$1"
			shift
		done
		shift
		printf ' %q' "$H" "$@"
		echo
		# A terminal without an alternate screen (vt100) keeps the
		# picture: the status goes on a line of its own.
		echo 'status=$?; echo; echo "EXIT=$status"'
		echo "stty -a | grep -o -- '-\\?icanon'"
		echo 'exec sleep 600'
	} >"$script"
	tm new-session -d -s "$name" -x 100 -y 30 "bash $script"
}

screen() { tm capture-pane -p -t "$1" 2>/dev/null; }

# wait_for NAME REGEX: until a line of the screen matches (ERE).
wait_for() {
	local end=$((SECONDS + TIMEOUT))

	while ! screen "$1" | grep -Eq -- "$2"; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "--- $1: no /$2/ after ${TIMEOUT}s; screen:"
			screen "$1"
			echo "---"
			return 1
		fi
		sleep 0.05
	done
}

# wait_gone NAME REGEX: until no line matches.
wait_gone() {
	local end=$((SECONDS + TIMEOUT))

	while screen "$1" | grep -Eq -- "$2"; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "--- $1: /$2/ still there after ${TIMEOUT}s"
			screen "$1"
			return 1
		fi
		sleep 0.05
	done
}

expect() {
	if wait_for "$1" "$2"; then ok "$3"; else fail "$3"; fi
}

expect_gone() {
	if wait_gone "$1" "$2"; then ok "$3"; else fail "$3"; fi
}

keys() {
	local name=$1
	shift
	tm send-keys -t "$name" "$@"
}

# The screen is complete once two captures 100 ms apart agree.
settle() {
	local a b end=$((SECONDS + TIMEOUT))

	a=$(screen "$1")
	while :; do
		sleep 0.1
		b=$(screen "$1")
		[ "$a" = "$b" ] && return 0
		[ "$SECONDS" -ge "$end" ] && return 1
		a=$b
	done
}

golden() {
	local name=$1 file=$2

	settle "$name"
	screen "$name" >"$WORK/$file"
	if [ "$UPDATE" = 1 ] && [ -s "$WORK/$file" ]; then
		cp "$WORK/$file" "$GOLDEN/$file.result"
		echo "updated: tests/tui/$file.result"
	elif diff -u "$GOLDEN/$file.result" "$WORK/$file"; then
		ok "screen $file matches tests/tui/$file.result"
	else
		fail "screen $file differs from tests/tui/$file.result"
	fi
}

# finished NAME WHAT: the harness returned 0 and the tty is canonical again.
finished() {
	expect "$1" '^EXIT=0$' "$2: harness exited 0"
	expect "$1" '^icanon$' "$2: terminal restored (icanon)"
}

pid_of() {
	local end=$((SECONDS + TIMEOUT))

	while [ ! -s "$WORK/$1.pid" ] && [ "$SECONDS" -lt "$end" ]; do
		sleep 0.05
	done
	cat "$WORK/$1.pid"
}

# --- keys, views, resize and q, against a never-ending frame stream
start keys LC_ALL=C.UTF-8 -- --interval-ms 100 --cmd-log "$WORK/keys.cmds"
expect keys 'period 1000 ' "first frame shown"
keys keys +
expect keys 'period 2000 ' "+ doubles the period"
keys keys -
expect keys 'period 1000 ' "- halves the period"
keys keys p
expect keys '^period: ' "p opens the period prompt"
keys keys 4096 Enter
expect keys 'period 4096 ' "p 4096 Enter sets the period"
keys keys p 0 Enter
expect keys "invalid period '0'" "a zero period is rejected"
keys keys p a b c Enter
expect keys "invalid period 'abc'" "a non-numeric period is rejected"
keys keys p 1 2
expect keys '^period: 12' "the prompt echoes digits"
keys keys Escape
expect_gone keys '^period: ' "Esc cancels the prompt"
keys keys p 1 Enter
expect keys 'period 1 ' "period 1 accepted"
keys keys -
expect keys 'minimum' "- never goes below 1"
keys keys s
expect keys 'sort total' "s cycles the sort key"
keys keys Space
expect keys 'PAUSED' "space pauses"
keys keys Space
expect_gone keys 'PAUSED' "space resumes"
keys keys r
expect keys 'reset:' "r resets"
keys keys n
expect keys 'Node x node matrix' "n shows the NUMA view"
keys keys n
expect keys '^ADDRESS' "n again goes back"
keys keys c
expect keys 'cpu +3  node 1' "c shows the CPU view"
keys keys Escape
expect keys '^ADDRESS' "Esc goes back"
keys keys o
expect keys 'make_table\+0x1c' "o shows the objects view"
expect keys ' 1:100% +4242' "the objects view shows the node mix and thread"
expect keys 'asked +2\.0M +1st 4243 ' "the objects view shows the bytes asked and the first-touching thread"
keys keys o
expect keys '^ADDRESS' "o again goes back"
keys keys h
expect keys 'double the sampling period' "h shows the help"
keys keys h
expect keys '^ADDRESS' "h again leaves the help"
keys keys Down Down Down Enter
expect keys '^page 0x7f0000003000-0x7f0000003fff' "Enter shows the 4th page"
keys keys Escape
expect keys '^ADDRESS' "Esc leaves the detail view"
tm resize-window -t keys -x 20 -y 5
expect keys 'too small' "20x5 shows the too-small message"
tm resize-window -t keys -x 100 -y 30
expect keys '^ADDRESS' "back to 100x30 redraws"
keys keys q
finished keys "q"
cat >"$WORK/keys.expected" <<'EOF'
SET_PERIOD 2000
SET_PERIOD 1000
SET_PERIOD 4096
SET_PERIOD 1
SORT 1
TOGGLE_PAUSE 0
TOGGLE_PAUSE 0
RESET 0
QUIT 0
EOF
if diff -u "$WORK/keys.expected" "$WORK/keys.cmds"; then
	ok "the collector received exactly the expected commands"
else
	fail "unexpected command stream"
fi
tm kill-session -t keys

# --- golden screens: one frame, then the final one (content is fixed)
start gold LC_ALL=C -- --frames 1 --interval-ms 50
expect gold 'target exited - press q' "final frame shows the exited banner"
golden gold main-ascii
keys gold n
expect gold 'Node x node matrix' "NUMA view"
golden gold numa-ascii
keys gold c
expect gold 'CPUs: 4 on 2 nodes' "CPU view"
golden gold cpu4-ascii
keys gold Escape Down Enter
expect gold '^page 0x7f0000001000' "detail view"
golden gold detail-ascii
keys gold q
finished gold "q after the final frame"
tm kill-session -t gold

start faults LC_ALL=C -- --frames 1 --interval-ms 50 --faults
expect faults 'target exited' "faults source frame"
expect faults 'samples are page faults' "faults: the header says what a sample is"
golden faults faults-ascii
keys faults q
finished faults "q (faults)"
tm kill-session -t faults

# --- 80x24: every header fact whole on one row (issue 12): facts break
# between each other, free text (scope, source note) wraps at spaces.
# header_rows NAME: the rows above the table's column titles, trimmed.
header_rows() {
	screen "$1" | sed '/^ *ADDRESS\|^ *PID  /,$d' | sed 's/ *$//'
}
# header_facts NAME WHAT FACT...: each FACT on one row of the header,
# every row within 80 columns.
header_facts() {
	local name=$1 what=$2 rows fact cut=0
	shift 2
	settle "$name"
	rows=$(header_rows "$name")
	for fact in "$@"; do
		if ! printf '%s\n' "$rows" | grep -qF -- "$fact"; then
			fail "$what: header fact '$fact' cut or missing at 80 columns"
			cut=1
		fi
	done
	if printf '%s\n' "$rows" | awk 'length($0) > 80 { bad = 1 } END { exit !bad }'; then
		fail "$what: a header row wider than 80 columns"
		cut=1
	fi
	[ "$cut" = 0 ] && ok "$what: $# header facts whole at 80x24"
	printf '%s\n' "$rows" >"$WORK/$name-header.txt"
}
# header_text NAME WHAT TEXT: no character of TEXT lost once the
# header's rows are joined, blanks aside (free text wraps at its spaces,
# or anywhere in a word longer than a row).
header_text() {
	local joined want
	# The elapsed time sits at the right of the first row.
	joined=$(header_rows "$1" | sed 's/elapsed [0-9.]*s$//' | tr -d ' \n')
	want=$(printf '%s' "$3" | tr -d ' \n')
	case "$joined" in
	*"$want"*) ok "$2: wrapped text whole" ;;
	*) fail "$2: '$3' cut at 80 columns; header: $joined" ;;
	esac
}
NOTE="samples are page faults (first touch, copy-on-write, refault), not access frequency; no load/store split: tracepoint disabled by MEMTOP_FAULTS_NO_TRACEPOINT"
DESC="cgroup /kubepods/burstable/pod0f2b7c1e-5d4a-4c3b-9e8f-7a6b5c4d3e2f/container-a1b2c3, CPUs 0-3"
start narrow LC_ALL=C -- --frames 1 --interval-ms 50 --faults \
	--note "$NOTE" --desc "$DESC"
tm resize-window -t narrow -x 80 -y 24
expect narrow 'target exited' "80x24: faults frame"
header_facts narrow "80x24 faults" "memtop" "elapsed 0.1s" \
	"source faults (page-faults)" "period 1000" "samples/s 93000" \
	"sort samples" "lost 1/2" "throttled 2/4" "unattributed 3/6" \
	"untracked 0/0" "(interval/total)" "samples 4650/9300" "threads 0" \
	"pages tracked 30" "frame 2" "skipped 0" "memtop cpu 2.0%"
header_text narrow "80x24 faults: source note" "$NOTE"
header_text narrow "80x24 faults: scope" "$DESC"
golden narrow faults-80x24-ascii
keys narrow h
expect narrow '^Source' "80x24: help shows the source note"
settle narrow
help_note=$(screen narrow | sed -n '/^Source/,/^ *$/p' | sed '1s/^Source//' |
	tr -d ' \n')
[ "$help_note" = "$(printf '%s' "$NOTE" | tr -d ' ')" ] &&
	ok "80x24 help: the note in full" ||
	fail "80x24 help: the note is not whole: $help_note"
keys narrow h
expect_gone narrow '^Source' "80x24: help closed"
keys narrow q
finished narrow "q (80x24)"
tm kill-session -t narrow

# With every names count (issue 12: nothing unnamed silently), whole too.
start narrowp LC_ALL=C -- --frames 1 --interval-ms 50 --names
tm resize-window -t narrowp -x 80 -y 24
expect narrowp 'target exited' "80x24: pebs frame"
header_facts narrowp "80x24 pebs" "synthetic target (pid 4242)" \
	"elapsed 0.1s" "source pebs (mem-loads, mem-stores)" "period 1000" \
	"sort samples" "synthetic frames" "(interval/total)" \
	"memtop cpu 2.0%" "skipped 0" \
	"names: maps failed 11" "maps skipped 12" "mismatched 13" \
	"helper failed 14" "unwind fallbacks 15" "pins dropped 16" \
	"stale mmaps 17"
keys narrowp q
finished narrowp "q (80x24 pebs)"
tm kill-session -t narrowp

# --- 512 CPUs: a heat grid, 64 CPUs a row at 100 columns, 32 at 60
start cpus LC_ALL=C.UTF-8 -- --frames 1 --interval-ms 50 --cpus 512
expect cpus 'target exited' "512-CPU frame"
keys cpus c
expect cpus '^node 1: 256 CPUs' "512 CPUs grouped by node"
golden cpus cpu512-utf8
tm resize-window -t cpus -x 60 -y 20
expect cpus '^ +32 ' "60 columns: 32 CPUs a row"
tm resize-window -t cpus -x 100 -y 30
keys cpus q
finished cpus "q (512 CPUs)"
tm kill-session -t cpus

# --- signals: SIGTERM, SIGHUP, SIGINT behave like q; SIGTSTP/SIGCONT
for sig in TERM HUP INT; do
	s=sig$sig
	start "$s" -- --interval-ms 100 --pid-file "$WORK/$s.pid"
	expect "$s" '^ADDRESS' "SIG$sig: running"
	kill -"$sig" "$(pid_of "$s")"
	finished "$s" "SIG$sig"
	tm kill-session -t "$s"
done

start stop -- --interval-ms 100 --pid-file "$WORK/stop.pid"
expect stop '^ADDRESS' "SIGTSTP: running"
pid=$(pid_of stop)
kill -TSTP "$pid"
expect_gone stop '^ADDRESS' "SIGTSTP leaves the screen"
end=$((SECONDS + TIMEOUT))
while [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != T ] &&
      [ "$SECONDS" -lt "$end" ]; do
	sleep 0.05
done
if [ "$(awk '{print $3}' "/proc/$pid/stat")" = T ]; then
	ok "SIGTSTP stops the process"
else
	fail "SIGTSTP did not stop the process"
fi
kill -CONT "$pid"
expect stop '^ADDRESS' "SIGCONT redraws"
keys stop q
finished stop "q after SIGCONT"
tm kill-session -t stop

# --- -n: tui_run() returns by itself after that many frames
start iter -- --interval-ms 50 --iterations 3 --cmd-log "$WORK/iter.cmds"
finished iter "iterations"
if [ "$(tail -n 1 "$WORK/iter.cmds")" = "QUIT 0" ]; then
	ok "iterations: CMD_QUIT sent"
else
	fail "iterations: no CMD_QUIT"
fi
tm kill-session -t iter

# --- a lagging UI frees frames unseen and says so
start burst -- --interval-ms 100 --burst 3
expect burst 'skipped [1-9]' "burst: skipped frames counted"
keys burst q
finished burst "q (burst)"
tm kill-session -t burst

# --- a fatal collector error: shown, printed after the screen, status 1
start error LC_ALL=C -- --frames 1 --interval-ms 50 --error "synthetic failure"
expect error 'error: synthetic failure - press q' "an error frame shows the error"
keys error q
expect error '^memtop: synthetic failure$' "the error is printed after endwin"
expect error '^EXIT=1$' "an error frame makes the status 1"
expect error '^icanon$' "error: terminal restored (icanon)"
tm kill-session -t error

# --- a collector that does not read commands: the queue fills up
start stall -- --interval-ms 1500 --stall-cmds
expect stall '^ADDRESS' "stalled collector: running"
keys stall r r r r r r r r r r r r r r r r r r r r
expect stall 'command queue full' "a full command queue is reported"
keys stall q
finished stall "q with a stalled collector"
tm kill-session -t stall

# --- monochrome: reverse video selection and no colour escapes
start mono TERM=vt100 -- --interval-ms 100
expect mono '^ADDRESS' "vt100 runs"
settle mono
tm capture-pane -e -p -t mono >"$WORK/mono.esc"
if grep -q $'\e\\[7m' "$WORK/mono.esc" &&
   ! grep -Eq $'\e\\[(3[0-7]|4[0-7]|38|48)[;m]' "$WORK/mono.esc"; then
	ok "monochrome: reverse video, no colours"
else
	fail "monochrome attributes"
fi
keys mono q
finished mono "q (vt100)"
tm kill-session -t mono

start color -- --interval-ms 100
expect color '^ADDRESS' "colour terminal runs"
settle color
tm capture-pane -e -p -t color >"$WORK/color.esc"
if grep -Eq $'\e\\[(3[0-7])[;m]' "$WORK/color.esc"; then
	ok "colour terminal: colours used"
else
	fail "colour terminal: no colours"
fi
keys color q
finished color "q (colour)"
tm kill-session -t color

# --- no usable terminal: a message and status 1, nothing hangs
for term in memtop-no-such-term ""; do
	if [ -n "$term" ]; then
		TERM=$term "$H" --frames 1 </dev/null >"$WORK/noterm.out" \
			2>"$WORK/noterm.err"
	else
		env -u TERM "$H" --frames 1 </dev/null >"$WORK/noterm.out" \
			2>"$WORK/noterm.err"
	fi
	status=$?
	want="memtop: cannot start the terminal UI (TERM=${term:-(unset)}); use -b for batch output"
	if [ "$status" = 1 ] && grep -qxF -- "$want" "$WORK/noterm.err"; then
		ok "TERM=${term:-unset}: status 1 and the message"
	else
		fail "TERM=${term:-unset}: status $status, stderr: $(cat "$WORK/noterm.err")"
	fi
done

if [ "$failures" -gt 0 ]; then
	echo "$failures check(s) failed"
	exit 1
fi
echo "all TUI checks passed"
exit 0
